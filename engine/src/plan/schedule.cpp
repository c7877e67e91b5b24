#include "plan/schedule.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "core/activation.hpp"
#include "kernels/kernel_spec.hpp"
#include "plan/emulated_schedule.hpp"
#include "vkgemm/error.hpp"

namespace vkgemm::detail {
namespace {

// The product after the column-major turn, as the kernels see it, with where its operands start.
struct Turned {
  kernels::Problem problem;
  uint64_t start[3] = {0, 0, 0};
  std::array<uint32_t, 3> source{0, 1, 2};
};

// Column-major: C^T = op(B)^T op(A)^T, and a column-major X is the row-major X^T with the same ld, so
// swapping the operands (and m with n) while keeping each one's op gives the row-major problem.
// alpha = 0 or k = 0: C = beta C, A and B are not read; C is bound in their place (nothing reads it there).
Turned turn(const GemmDesc& desc, const kernels::Types& types, const Placement& placement) {
  Turned t;
  OperandExtent extent[3] = {operand_extent(desc, 'A'), operand_extent(desc, 'B'), operand_extent(desc, 'C')};
  uint64_t start[3] = {placement.a, placement.b, placement.c};
  kernels::Problem& p = t.problem;
  p.types = types;
  p.m = static_cast<uint32_t>(desc.m), p.n = static_cast<uint32_t>(desc.n);
  p.trans_a = desc.op_a == Op::t, p.trans_b = desc.op_b == Op::t;
  if (desc.layout == Layout::col_major) {
    std::swap(extent[0], extent[1]);
    std::swap(start[0], start[1]);
    std::swap(p.m, p.n);
    std::swap(p.trans_a, p.trans_b);
    t.source = {1, 0, 2};
  }
  const bool reads = reads_ab(desc);
  p.k = reads ? static_cast<uint32_t>(desc.k) : 0;
  if (!reads) {
    extent[0] = extent[1] = extent[2];
    start[0] = start[1] = start[2];
    t.source = {2, 2, 2};
  }
  p.lda = static_cast<uint32_t>(extent[0].ld), p.ldb = static_cast<uint32_t>(extent[1].ld);
  p.ldc = static_cast<uint32_t>(extent[2].ld);
  p.stride_a = static_cast<uint32_t>(extent[0].stride), p.stride_b = static_cast<uint32_t>(extent[1].stride);
  p.stride_c = static_cast<uint32_t>(extent[2].stride);
  p.batch = static_cast<uint32_t>(desc.batch);
  p.beta_zero = desc.beta == 0.0;  // the whole product's plan is its first K chunk's
  p.transcendental_epilogue = transcendental(desc.epilogue.activation);
  std::copy(std::begin(start), std::end(start), std::begin(t.start));
  return t;
}

WholeProduct whole_product(const Turned& t) {
  const kernels::Problem& p = t.problem;
  WholeProduct w;
  w.element_size = element_size(p.types.input);
  w.c_element_size = element_size(p.types.output);
  w.m = p.m, w.n = p.n, w.k = p.k, w.batch = p.batch;
  w.lda = p.lda, w.ldb = p.ldb, w.ldc = p.ldc;
  w.stride_a = p.stride_a, w.stride_b = p.stride_b, w.stride_c = p.stride_c;
  w.trans_a = p.trans_a, w.trans_b = p.trans_b;
  w.a_start = t.start[0], w.b_start = t.start[1], w.c_start = t.start[2];
  return w;
}

void put_scalar(unsigned char* at, DataType type, double v) {
  switch (type) {
    case DataType::f32: { const float f = static_cast<float>(v); std::memcpy(at, &f, 4); break; }
    case DataType::i32: { const int32_t i = static_cast<int32_t>(v); std::memcpy(at, &i, 4); break; }
    case DataType::f64: std::memcpy(at, &v, 8); break;
    case DataType::f16: case DataType::bf16: case DataType::i8: case DataType::u8:
      break;  // never a scalar type: 16- and 8-bit inputs take f32 or i32 scalars (scalar_type)
  }
}

// The type alpha and beta reach the shader in (gemm_interface.glsl's SCALAR_T): f32 for f16 and bf16 inputs
// and for dequantized int8 products (float C), i32 for i8 and u8 into i32 (C's type in every case but f16's,
// whose scalars stay f32 whatever C).
DataType scalar_type(const kernels::Types& t) {
  if (is_half_width_float(t.input) || (is_integer(t.input) && !is_integer(t.output))) return DataType::f32;
  return default_output_type(t.input);
}

// The alpha the shader multiplies by: a dequantization's per-tensor scale folded in (fp32 in the shader,
// once: sum * column scale * alpha'), else the caller's.
double shader_alpha(const GemmDesc& desc) {
  return desc.epilogue.scale == ScaleAxis::none ? desc.alpha : desc.alpha * desc.epilogue.tensor_scale;
}

kernels::GemmPushConstants push_constants(const kernels::Problem& p, const kernels::KernelLaunch& plan, double alpha,
                                          double beta) {
  kernels::GemmPushConstants push{};
  push.M = p.m, push.N = p.n, push.K = p.k;
  push.lda = p.lda, push.ldb = p.ldb, push.ldc = p.ldc;
  push.a_offset = p.a_offset, push.b_offset = p.b_offset, push.c_offset = p.c_offset;
  push.stride_a = p.stride_a, push.stride_b = p.stride_b, push.stride_c = p.stride_c;
  push.batch = p.batch;
  push.flags = (p.trans_a ? kernels::kTransA : 0u) | (p.trans_b ? kernels::kTransB : 0u) |
               (beta == 0.0 ? kernels::kBetaZero : 0u) | plan.flags;
  push.k_split = plan.k_split;
  const DataType scalars = scalar_type(p.types);
  put_scalar(push.scalars, scalars, alpha);
  put_scalar(push.scalars + element_size(scalars), scalars, beta);
  return push;
}

// Split-K: the main pass writes raw partial sums to the workspace (slice-major per batch entry, m x n
// each, row stride n); the reduce pass adds them into C with alpha and beta.
void add_split(PiecePasses& out, const kernels::Problem& p, const kernels::KernelLaunch& plan) {
  const uint64_t slice = uint64_t{p.m} * p.n;
  out.workspace_bytes = slice * plan.splits * p.batch * plan.workspace_element_size;
  Pass reduce{plan.reduce, plan.reduce_grid, out.main.push};
  if (out.main.push.epilogue != 0) {  // it applies the epilogue (its pipeline specialized for the word)
    reduce.shape.constants.push_back({"EPILOGUE", out.main.push.epilogue});
  }
  out.main.push.ldc = p.n, out.main.push.c_offset = 0, out.main.push.split_stride = static_cast<uint32_t>(slice);
  reduce.push.K = plan.splits;
  reduce.push.lda = p.n, reduce.push.a_offset = 0, reduce.push.stride_a = 0;
  reduce.push.split_stride = static_cast<uint32_t>(slice);
  reduce.push.flags &= ~(kernels::kTransA | kernels::kTransB);
  out.reduce = std::move(reduce);
}

// K slices added in the main pass (KernelLaunch::adds_slices): the workspace (binding 4) holds the slices' raw
// sums as add_split's do (slice-major per batch entry, m x n each, row stride n; split_stride apart), then one
// counter word per workgroup of a slice (grid x times y times the batch), which the kernel leaves at zero
// after each call. The main pass stores C itself.
void add_slices(PiecePasses& out, const kernels::Problem& p, const kernels::KernelLaunch& plan) {
  const uint64_t slice = uint64_t{p.m} * p.n;
  const uint64_t counters = uint64_t{out.main.grid[0]} * out.main.grid[1] * p.batch;
  out.workspace_bytes = slice * plan.splits * p.batch * plan.workspace_element_size + counters * 4;
  out.main.push.split_stride = static_cast<uint32_t>(slice);
  out.adds_slices = true;
}

// The turn of an 8-bit B (kernels/turn_b.cpp) for the piece's problem `p`: its pass reads B as `p` does and
// writes the workspace (bound as C: row stride ldc, entry stride stride_c); returns the problem the main
// pass then computes, reading the workspace as B.
kernels::Problem add_turn(PiecePasses& out, const kernels::Problem& p) {
  const kernels::TurnB turn = kernels::turn_b_pass(p);
  const kernels::Problem turned = kernels::turned_b(p);
  Pass pass{turn.shape, turn.grid, {}};
  kernels::GemmPushConstants& push = pass.push;
  push.M = p.m, push.N = p.n, push.K = p.k;
  push.ldb = p.ldb, push.b_offset = p.b_offset, push.stride_b = p.stride_b;
  push.ldc = turned.ldb, push.stride_c = turned.stride_b;
  push.batch = turn.grid[2];
  out.turn_b = std::move(pass);
  out.workspace_bytes = turn.workspace_bytes;
  return turned;
}

PiecePasses schedule_piece(const Piece& piece, const kernels::Problem& whole, const GemmDesc& desc,
                         const DeviceInfo& device, const tuning::Table& tuning, const kernels::Pinning& pinning,
                         bool turn_b, const Placement& placement) {
  kernels::Problem p = whole;
  p.m = piece.m, p.n = piece.n, p.k = piece.k, p.batch = piece.batch;
  p.a_offset = piece.a.element_offset, p.b_offset = piece.b.element_offset, p.c_offset = piece.c.element_offset;
  // A K chunk after the first adds to what the earlier ones wrote: beta = 1, and C is read.
  const double beta = piece.first_k ? desc.beta : 1.0;
  p.beta_zero = beta == 0.0;
  PiecePasses out;
  out.piece = piece;
  if (turn_b) p = add_turn(out, p);
  const kernels::KernelLaunch plan = kernels::plan_piece(device, tuning, pinning, p);
  out.main = {plan.main, plan.grid, push_constants(p, plan, shader_alpha(desc), beta)};
  // A dequantization's scale vector on every K chunk: linear in the sums, each chunk's are scaled.
  put_scale(out.main.push, desc, desc.layout == Layout::col_major, piece.m0, piece.n0, placement);
  // The epilogue once, on the finished sums: the last K chunk of a C block (the earlier ones leave their raw
  // sums in C for it); with a split, the reduce pass (add_split copies the words; the main pass's slices
  // keep their raw sums whatever the words say).
  if (piece.k0 + piece.k >= whole.k) {
    put_epilogue(out.main.push, desc, desc.layout == Layout::col_major, piece.m0, piece.n0, placement);
    // Its own pipeline (gemm_abi.h, GEMM_EPILOGUE_CONSTANT_ID): a plain product's has no epilogue code.
    if (out.main.push.epilogue != 0) out.main.shape.constants.push_back({"EPILOGUE", out.main.push.epilogue});
  }
  if (plan.through_workspace()) add_split(out, p, plan);
  if (plan.adds_slices) add_slices(out, p, plan);
  return out;
}

// A 16-bit float C with fp32 sums whose product the partition cuts along K (an operand past
// maxStorageBufferRange): each chunk's result stored in C's type would round C once a chunk, past the bound
// of the one rounding (docs/correctness.md). So the chunks of a C block sum in fp32 in the workspace and one
// pass rounds them into C.
bool sums_chunks_in_fp32(const kernels::Types& types, const std::vector<Piece>& pieces) {
  if (!is_half_width_float(types.input) || !is_half_width_float(types.output) || types.f16_accumulate) return false;
  return std::any_of(pieces.begin(), pieces.end(), [](const Piece& p) { return !p.first_k; });
}

// The pass that rounds a C block's fp32 sums (the workspace from `sums`, row stride n) into C: the split-K
// reduce over one slice, with alpha, beta C and the epilogue, as the last chunk's main pass would have.
SequencePass finish_block(const Piece& piece, const kernels::Problem& whole, const GemmDesc& desc,
                          const DeviceInfo& device, const Placement& placement, const SequenceBinding& sums,
                          const std::array<uint32_t, 3>& source) {
  Pass f;
  f.shape.shader = kernels::fp32_sums_reduce(whole.types);
  f.shape.workgroup_size = {64, 4, 1};
  f.grid = {(piece.n + 63) / 64, (piece.m + 3) / 4, piece.batch};
  for (size_t axis = 0; axis < 3; ++axis) {
    if (f.grid[axis] > device.max_workgroup_count[axis]) {
      throw Error(ErrorCode::too_large,
                  fmt::format("a {}x{} block of a 16-bit C summed in fp32 across K chunks needs {} workgroups on "
                              "axis {}; {} allows {} (maxComputeWorkGroupCount)", piece.m, piece.n,
                              f.grid[axis], axis, device.name, device.max_workgroup_count[axis]));
    }
  }
  kernels::GemmPushConstants& push = f.push;
  push.M = piece.m, push.N = piece.n, push.K = 1, push.batch = piece.batch;
  push.lda = piece.n, push.split_stride = piece.m * piece.n;
  push.ldc = whole.ldc, push.c_offset = piece.c.element_offset, push.stride_c = whole.stride_c;
  push.flags = desc.beta == 0.0 ? kernels::kBetaZero : 0u;
  const DataType scalars = scalar_type(whole.types);
  put_scalar(push.scalars, scalars, desc.alpha);
  put_scalar(push.scalars + element_size(scalars), scalars, desc.beta);
  put_epilogue(push, desc, desc.layout == Layout::col_major, piece.m0, piece.n0, placement);
  if (push.epilogue != 0) f.shape.constants.push_back({"EPILOGUE", push.epilogue});
  return {f, {sums, sums, SequenceBinding{source[2], piece.c.offset, piece.c.size}}, std::nullopt};
}

// sums_chunks_in_fp32's product as a sequence: each piece computed into an fp32 block of the workspace (the
// first chunk of a C block writes it, the later ones add to it: alpha 1, no epilogue; a split's slices below
// it), then finish_block after the block's last chunk. The pieces stay the plan's (its count and config).
void sum_chunks_in_fp32(Schedule& out, const std::vector<Piece>& pieces, const kernels::Problem& whole,
                        const GemmDesc& desc, const DeviceInfo& device, const tuning::Table& tuning,
                        const kernels::Pinning& pinning, const Placement& placement) {
  GemmDesc raw = desc;
  raw.alpha = 1.0, raw.beta = 0.0, raw.epilogue = {};
  std::vector<PiecePasses> passes;
  uint64_t slices = 0, block = 0;
  for (const Piece& piece : pieces) {
    const uint64_t bytes = uint64_t{piece.m} * piece.n * piece.batch * kernels::kFp32SumBytes;
    if (bytes > device.max_storage_buffer_range) {
      throw Error(ErrorCode::too_large,
                  fmt::format("a {}x{}x{} block of a 16-bit C summed in fp32 across K chunks needs {} bytes; {} "
                              "binds at most {} (maxStorageBufferRange)", piece.batch, piece.m, piece.n, bytes,
                              device.name, device.max_storage_buffer_range));
    }
    kernels::Problem p = whole;
    p.types.output = DataType::f32;
    p.ldc = piece.n, p.stride_c = piece.m * piece.n;
    Piece q = piece;
    q.c = {0, bytes, 0};
    passes.push_back(schedule_piece(q, p, raw, device, tuning, pinning, false, placement));
    slices = std::max(slices, passes.back().workspace_bytes), block = std::max(block, bytes);
  }
  const uint64_t align = std::max<uint64_t>(placement.alignment, 16);
  const SequenceBinding sums{kSequenceWorkspace, (slices + align - 1) / align * align, block};
  for (size_t i = 0; i < pieces.size(); ++i) {
    const Piece& piece = pieces[i];
    const PiecePasses& pp = passes[i];
    const SequenceBinding a{out.source[0], piece.a.offset, piece.a.size};
    const SequenceBinding b{out.source[1], piece.b.offset, piece.b.size};
    const SequenceBinding split{kSequenceWorkspace, 0, pp.workspace_bytes};
    if (pp.reduce) {
      out.sequence.push_back({pp.main, {a, b, split}, std::nullopt});
      out.sequence.push_back({*pp.reduce, {split, split, sums}, std::nullopt});
    } else if (pp.adds_slices) {
      out.sequence.push_back({pp.main, {a, b, sums}, std::nullopt, split});
    } else {
      out.sequence.push_back({pp.main, {a, b, sums}, std::nullopt});
    }
    if (i + 1 == pieces.size() || pieces[i + 1].first_k) {
      out.sequence.push_back(finish_block(piece, whole, desc, device, placement, sums, out.source));
    }
  }
  out.workspace_bytes = sums.offset + block;
  out.config += ", K chunks summed in fp32";
}

}  // namespace

void put_scale(kernels::GemmPushConstants& push, const GemmDesc& desc, bool turned, uint32_t m0, uint32_t n0,
               const Placement& placement) {
  if (desc.epilogue.scale != ScaleAxis::per_column) return;
  // The user's columns are the kernel's rows once the column-major turn swapped them. The scales lead the
  // fourth operand, f32 words from its binding's start (bias_binding_alignment keeps that a whole word).
  push.scale = turned ? GEMM_SCALE_ROW : GEMM_SCALE_COLUMN;
  const uint64_t first = placement.bias % bias_binding_alignment(placement.alignment) / 4;
  push.scale_offset = static_cast<uint32_t>(first + (turned ? m0 : n0));
}

uint64_t bias_binding_alignment(uint64_t device_alignment) noexcept { return std::max<uint64_t>(device_alignment, 8); }

void put_epilogue(kernels::GemmPushConstants& push, const GemmDesc& desc, bool turned, uint32_t m0, uint32_t n0,
                  const Placement& placement) {
  const Epilogue& e = desc.epilogue;
  if (!e.active()) return;
  const auto act = static_cast<uint32_t>(e.activation);  // Activation's order is GEMM_ACT_*'s
  static_assert(static_cast<uint32_t>(Activation::clamp) == GEMM_ACT_CLAMP, "Activation numbers GEMM_ACT_*");
  push.epilogue = act;  // a bias alone sets its bits below: the word is nonzero whenever an epilogue is
  // The parameters in the epilogue's type (gemm_abi.h): an f64 product's as doubles, the others' as floats.
  const DataType act_type = output_type(desc) == DataType::f64 ? DataType::f64 : DataType::f32;
  const bool clamp = e.activation == Activation::clamp;
  put_scalar(push.act, act_type, clamp ? e.lo.value_or(0.0) : e.slope);
  put_scalar(push.act + element_size(act_type), act_type, clamp ? e.hi.value_or(0.0) : 0.0);
  if (e.bias == BiasAxis::none) return;
  // The user's per_column bias runs along the kernel's rows once the column-major turn swapped them.
  const bool along_columns = (e.bias == BiasAxis::per_column) != turned;
  uint32_t type = GEMM_BIAS_F32;
  if (e.bias_type == DataType::f16) type = GEMM_BIAS_F16;
  if (e.bias_type == DataType::bf16) type = GEMM_BIAS_BF16;
  if (e.bias_type == DataType::f64) type = GEMM_BIAS_F64;
  push.epilogue |= (along_columns ? GEMM_BIAS_COLUMN : GEMM_BIAS_ROW) | (type << GEMM_BIAS_TYPE_SHIFT);
  // The bias follows the scales where there are (bias_byte_offset).
  const uint64_t first =
      (placement.bias % bias_binding_alignment(placement.alignment) + bias_byte_offset(desc)) / element_size(e.bias_type);
  push.bias_offset = static_cast<uint32_t>(first + (along_columns ? n0 : m0));
}

Schedule schedule_product(const GemmDesc& desc, const GemmOptions& options, const DeviceInfo& device,
                         const tuning::Table& tuning, const Placement& placement) {
  Schedule out;
  out.types = kernels::types_of(desc, options);
  if (desc.m == 0 || desc.n == 0 || desc.batch == 0) return out;  // nothing to do, as the reference BLAS
  const Turned turned = turn(desc, out.types, placement);
  out.source = turned.source;

  // The kernel and configuration are chosen once, for the whole product, as if the grid had no limit;
  // then the product is cut into pieces within the device's limits (partition.hpp), each planned with
  // that same kernel and configuration pinned (only its grid, split count and vec4 flags differ). An 8-bit
  // B is turned (kernels/turn_b.cpp) where the rule says so and the product is one piece (the workspace
  // then holds the whole of B, turned).
  DeviceInfo unbounded = device;
  unbounded.max_workgroup_count = {~0u, ~0u, ~0u};
  PartitionLimits limits;
  limits.max_groups = device.max_workgroup_count;
  limits.max_range = device.max_storage_buffer_range;
  limits.offset_alignment = placement.alignment;
  limits.max_k = options.max_k_per_submission;
  limits.device = device.name;
  kernels::Pinning pinning;
  std::vector<Piece> pieces;
  const auto plan_whole = [&](const kernels::Problem& problem) {
    out.whole = kernels::plan_supported(unbounded, tuning, options, problem);
    pinning = kernels::find_spec(out.whole.kernel)->pin(out.whole, device, options);
    pieces = partition(whole_product(turned), pinning.blocking, limits);
  };
  // The emulated product (plan/emulated_schedule.hpp) is a sequence of passes around the native plan. Asked
  // for, a product it cannot take is refused with the limit named; chosen by auto, it is the native plan.
  if (options.kernel == Kernel::ozaki) return schedule_emulated(desc, options, device, tuning, placement);
  if (options.precision == Precision::emulated && !desc.epilogue.active() &&
      kernels::plan_supported(unbounded, tuning, options, turned.problem).kernel == Kernel::ozaki) {
    GemmOptions emulated = options, native = options;
    emulated.kernel = Kernel::ozaki;
    native.precision = Precision::native;
    try {
      return schedule_emulated(desc, emulated, device, tuning, placement);
    } catch (const Error& e) {
      if (e.code() != ErrorCode::too_large && e.code() != ErrorCode::unsupported_config) throw;
    }
    return schedule_product(desc, native, device, tuning, placement);
  }
  plan_whole(turned.problem);
  bool turn_b = kernels::turns_b(out.whole, turned.problem, device);
  if (turn_b) {
    plan_whole(kernels::turned_b(turned.problem));
    if (pieces.size() != 1) turn_b = false, plan_whole(turned.problem);
  }

  out.kernel = out.whole.kernel;
  out.config = pieces.size() > 1 ? fmt::format("{}, {} pieces", out.whole.description, pieces.size())
                                 : out.whole.description;
  if (turn_b) out.config += ", B turned";
  out.pieces.reserve(pieces.size());
  for (const Piece& piece : pieces) {
    out.pieces.push_back(schedule_piece(piece, turned.problem, desc, device, tuning, pinning, turn_b, placement));
    out.workspace_bytes = std::max(out.workspace_bytes, out.pieces.back().workspace_bytes);
  }
  if (sums_chunks_in_fp32(out.types, pieces)) {
    sum_chunks_in_fp32(out, pieces, turned.problem, desc, device, tuning, pinning, placement);
  }
  return out;
}

namespace {

// One buffer the product needs, in bytes (long double: an absurd batch or stride must be refused, not
// wrapped to a small count).
struct Need {
  const char* name;
  long double bytes;
};

void check_needs(const GemmDesc& desc, const std::vector<Need>& needs, const DeviceInfo& device) {
  std::string list;
  long double total = 0.0L;
  for (const Need& need : needs) {
    if (need.bytes > 0.0L) list += fmt::format("{}{} {:.0f} bytes", list.empty() ? "" : ", ", need.name, need.bytes);
    total += need.bytes;
  }
  const std::string product = fmt::format("a {}x{}x{} product in a batch of {}", desc.m, desc.n, desc.k, desc.batch);
  for (const Need& need : needs) {
    if (device.max_allocation_size && need.bytes > static_cast<long double>(device.max_allocation_size)) {
      throw Error(ErrorCode::too_large,
                  fmt::format("{} needs {}; {} allocates at most {} bytes at once (maxMemoryAllocationSize), less "
                              "than {} takes: use a smaller batch or size", product, list, device.name,
                              device.max_allocation_size, need.name));
    }
  }
  if (device.device_local_memory && total > static_cast<long double>(device.device_local_memory)) {
    throw Error(ErrorCode::too_large,
                fmt::format("{} needs {:.0f} bytes ({}); {} has {} bytes of device memory: use a smaller batch or "
                            "size", product, total, list, device.name, device.device_local_memory));
  }
}

}  // namespace

void check_fits(const GemmDesc& desc, const GemmOptions& options, const DeviceInfo& device,
                const tuning::Table* tuning) {
  const kernels::Types types = kernels::types_of(desc, options);
  const bool reads = reads_ab(desc);
  const auto bytes = [&](char which, DataType type) {
    return static_cast<long double>(element_size(type)) * static_cast<long double>(operand_extent(desc, which).elements);
  };
  std::vector<Need> needs = {{"A", reads ? bytes('A', types.input) : 0.0L},
                             {"B", reads ? bytes('B', types.input) : 0.0L},
                             {"C", bytes('C', types.output)}};
  check_needs(desc, needs, device);  // the operands first: a product past them is not even planned
  if (!tuning) return;
  const Schedule plan = schedule_product(desc, options, device, *tuning);
  const bool turned = !plan.pieces.empty() && plan.pieces.front().turn_b;
  needs.push_back({plan.kernel == Kernel::ozaki ? "the emulated product's workspace"
                   : turned             ? "the turned B's workspace"
                                        : "the split-K workspace",
                   static_cast<long double>(plan.workspace_bytes)});
  needs.push_back({"the emulated product's int32 planes", static_cast<long double>(plan.sums_bytes)});
  check_needs(desc, needs, device);
}

bool Schedule::counts_in_workspace() const {
  return std::any_of(pieces.begin(), pieces.end(), [](const PiecePasses& p) { return p.adds_slices; }) ||
         std::any_of(sequence.begin(), sequence.end(), [](const SequencePass& p) { return p.slices.has_value(); });
}

std::vector<const kernels::LaunchShape*> pipeline_shapes(const Schedule& product) {
  std::vector<const kernels::LaunchShape*> out;
  for (const SequencePass& pass : product.sequence) out.push_back(&pass.pass.shape);
  if (!product.sequence.empty()) return out;  // the pieces are the fallback, whose passes are in the sequence
  for (const PiecePasses& piece : product.pieces) {
    if (piece.turn_b) out.push_back(&piece.turn_b->shape);
    out.push_back(&piece.main.shape);
    if (piece.reduce) out.push_back(&piece.reduce->shape);
  }
  return out;
}

}  // namespace vkgemm::detail
