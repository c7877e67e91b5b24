#include "plan/emulated_schedule.hpp"

#include <algorithm>
#include <array>
#include <cstring>

#include <fmt/format.h>

#include "gemm_abi.h"
#include "kernels/experiments.hpp"
#include "ozaki/guard.hpp"
#include "ozaki/moduli.hpp"
#include "ozaki_abi.h"
#include "vkgemm/error.hpp"

namespace vkgemm::detail {
namespace {

constexpr uint64_t kRegionAlign = 256;  // every region starts where any device binds a storage buffer
constexpr uint32_t kPlaneRowAlign = 16;  // a plane's rows: whole 16-byte units (the int8 kernels' loads)
constexpr uint32_t kFlagWord = OZAKI_FLAG_WORD;
constexpr uint32_t kRefusedWord = OZAKI_REFUSED_WORD;
constexpr uint32_t kLevelsWord = OZAKI_LEVELS_WORD;
constexpr uint32_t kExtremesWord = OZAKI_EXTREMES_WORD;
constexpr uint32_t kFirstIndirectWord = OZAKI_CONTROL_WORDS;  // then each indirect command: 4 words (3 used)

uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

// The product as the split and merge see it (after the column-major turn), from the native plan's pass.
struct Shape {
  uint32_t m = 0, n = 0, k = 0, batch = 1;
  kernels::GemmPushConstants a_side;  // the main pass's: A's and B's fields
  kernels::GemmPushConstants c_side;  // the pass that writes C: its C fields
  // Bytes from one int8 plane of op(A) (op(B)) to the next; elements from one int32 plane of a block to the next.
  uint64_t plane_a() const { return uint64_t{m} * ldk; }
  uint64_t plane_b() const { return uint64_t{n} * ldk; }
  // A plane's int32s padded to 256 bytes, so that every K chunk's planes start where any device binds.
  uint64_t plane_sums(uint32_t rows) const { return (uint64_t{rows} * n + 63) / 64 * 64; }
  // The residue planes, and the magnitude plane where the span guard runs.
  uint32_t planes() const { return moduli + (guarded ? 1 : 0); }
  uint32_t moduli = 0, chunks = 0, ldk = 0;
  bool guarded = false;
};

// Where each region of the workspace starts, in bytes. The int32 planes are the second workspace, alone
// (Schedule::sums_bytes: they are the largest region, 3.76 GB at f64 8192^3, and beside the others would pass
// the one allocation a device allows where alone they do not). They hold one block of `rows` rows of C at a
// time: the products and the merge run block by block over the same region, so that a product whose planes
// would pass the one allocation or binding a device allows still runs (choose_rows).
// The magnitude planes' products (the span guard's) have a region of their own, all of C at once: the guard
// judges the whole call before the first block is merged.
struct Layout {
  uint32_t dispatches = 0;  // the native plan's
  uint32_t exp_a = 0, exp_b = 0;      // word indices
  uint32_t stats_a = 0, stats_b = 0;  // word indices (even: the line statistics start with doubles)
  uint32_t rows = 0;                  // rows of C a block of the int32 planes holds
  uint64_t words = 0, planes_a = 0, planes_b = 0, magnitudes = 0, native = 0, total = 0;  // the workspace's
  uint64_t words_bytes = 0, a_bytes = 0, b_bytes = 0, magnitude_bytes = 0, sums_bytes = 0, chunk_bytes = 0;
  uint64_t magnitude_chunk_bytes = 0;  // each K chunk's magnitude sums start where a binding may
};

// The int32 planes' bytes a row of C takes: every K chunk of every modulus of every batch entry.
uint64_t sums_row_bytes(const Shape& s) { return uint64_t{s.chunks} * s.moduli * s.batch * s.n * 4; }

Layout lay_out_workspace(const Shape& s, uint32_t dispatches, uint64_t native_bytes, uint32_t rows) {
  Layout l;
  l.dispatches = dispatches;
  l.rows = rows;
  l.exp_a = kFirstIndirectWord + 4 * dispatches;
  l.exp_b = l.exp_a + s.batch * s.m;
  l.stats_a = static_cast<uint32_t>(align_up(l.exp_b + uint64_t{s.batch} * s.n, 2));
  l.stats_b = l.stats_a + OZAKI_LINE_WORDS * s.batch * s.m;
  l.words_bytes = (uint64_t{l.stats_b} + OZAKI_LINE_WORDS * uint64_t{s.batch} * s.n) * 4;
  l.a_bytes = uint64_t{s.planes()} * s.batch * s.plane_a();
  l.b_bytes = uint64_t{s.planes()} * s.batch * s.plane_b();
  l.magnitude_chunk_bytes = align_up(uint64_t{s.batch} * s.plane_sums(s.m) * 4, kRegionAlign);
  l.magnitude_bytes = s.guarded ? s.chunks * l.magnitude_chunk_bytes : 0;
  l.chunk_bytes = uint64_t{s.moduli} * s.batch * s.plane_sums(rows) * 4;
  l.sums_bytes = l.chunk_bytes * s.chunks;
  // The magnitude sums first: every candidate count's layout keeps them where they are.
  l.magnitudes = align_up(l.words_bytes, kRegionAlign);
  l.planes_a = align_up(l.magnitudes + l.magnitude_bytes, kRegionAlign);
  l.planes_b = align_up(l.planes_a + l.a_bytes, kRegionAlign);
  l.native = align_up(l.planes_b + l.b_bytes, kRegionAlign);
  l.total = l.native + native_bytes;
  return l;
}

// The rows of C a block of int32 planes holds: all of C where its planes fit one binding and one allocation
// (their own: the second workspace); else as few blocks as fit, of equal rows rounded to a multiple of
// kBlockRowAlign (whole tiles of the int8 kernels, so that no block's edge adds an edge tile), or of 8 where
// fewer fit. At least one row: where even that does not fit, check_ranges says why.
uint32_t choose_rows(const Shape& s, const DeviceInfo& device) {
  constexpr uint32_t kBlockRowAlign = 256;
  const uint64_t per_row = sums_row_bytes(s);
  const uint64_t range = std::min<uint64_t>(device.max_storage_buffer_range, UINT32_MAX);
  uint64_t rows = std::min<uint64_t>(s.m, range / per_row);
  if (device.max_allocation_size) {
    // Each plane's padding to 256 bytes (plane_sums), at most one unit a plane of every chunk and entry.
    const uint64_t padding = uint64_t{s.chunks} * s.moduli * s.batch * 256;
    const uint64_t most = device.max_allocation_size;
    rows = std::min(rows, most > padding ? (most - padding) / per_row : 0);
  }
  if (rows >= s.m) return s.m;
  const uint64_t align = rows >= kBlockRowAlign ? kBlockRowAlign : rows >= 8 ? 8 : 1;
  const uint64_t most = std::max<uint64_t>(1, rows / align * align);
  // Blocks of equal rows where the alignment allows: as few blocks as `most` needs, each as full as the next.
  const uint64_t blocks = (s.m + most - 1) / most;
  return static_cast<uint32_t>(std::min(most, align_up((s.m + blocks - 1) / blocks, align)));
}

void check_ranges(const GemmDesc& desc, const Layout& l, const DeviceInfo& device) {
  const uint64_t range = std::min<uint64_t>(device.max_storage_buffer_range, UINT32_MAX);
  const std::pair<const char*, uint64_t> regions[] = {
      {"op(A)'s int8 planes", l.a_bytes}, {"op(B)'s int8 planes", l.b_bytes},
      {"the int32 planes", l.sums_bytes}, {"the span guard's magnitude sums", l.magnitude_bytes},
      {"the exponents and line statistics", l.words_bytes}};
  const std::pair<const char*, uint64_t> allocations[] = {{"workspace", l.total}, {"int32 planes", l.sums_bytes}};
  for (const auto& [name, bytes] : allocations) {
    if (device.max_allocation_size && bytes > device.max_allocation_size) {
      throw Error(ErrorCode::too_large,
                  fmt::format("the ozaki kernel's {} for a {}x{}x{} product in a batch of {} take {} bytes; {} "
                              "allocates at most {} at once (maxMemoryAllocationSize): use fewer moduli "
                              "(GemmOptions::emulation_moduli), a smaller product, or the native kernel",
                              name, desc.m, desc.n, desc.k, desc.batch, bytes, device.name, device.max_allocation_size));
    }
  }
  for (const auto& [name, bytes] : regions) {
    if (bytes > range) {
      throw Error(ErrorCode::too_large,
                  fmt::format("the ozaki kernel's {} for a {}x{}x{} product in a batch of {} take {} bytes in one "
                              "binding; {} binds at most {} (maxStorageBufferRange): use fewer moduli "
                              "(GemmOptions::emulation_moduli), a smaller product, or the native kernel",
                              name, desc.m, desc.n, desc.k, desc.batch, bytes, device.name, range));
    }
  }
}

kernels::LaunchShape shape_of(std::string shader, uint32_t moduli, std::array<uint32_t, 3> workgroup) {
  kernels::LaunchShape shape;
  shape.shader = std::move(shader);
  if (moduli) shape.constants = {{"MODULI", moduli}};
  shape.workgroup_size = workgroup;
  return shape;
}

SequenceBinding words(const Layout& l) { return {3, 0, l.words_bytes}; }

// When an armed dispatch runs: as a pass of candidate count `candidate` (the coverage flag clear and the
// guard's choice that count), as the native kernel's (the flag set or no candidate admitted: `candidate` is
// then the number of candidates), or as a pass of the span guard (`guard`: the flag clear and the guard's pass
// before it refused the first count, in refusal word `gate`: the extremes' for the levels' pass, the levels'
// for the magnitude products and the pass on them).
struct When {
  bool native = false;
  uint32_t candidate = 0, candidates = 1;
  bool guard = false;
  uint32_t gate = kLevelsWord;
};

// The arm pass's push constants, read by ozaki_arm.comp as words (ozaki_abi.h's OZAKI_ARM_WORD_*).
using ArmWords = std::array<uint32_t, GEMM_PUSH_BYTES / 4>;
static_assert(sizeof(ArmWords) == sizeof(kernels::GemmPushConstants), "the arm reads every push constant as a word");

SequencePass arm_pass(const Layout& l, const ArmWords& w) {
  SequencePass s;
  s.pass.shape = shape_of("ozaki_arm_i32", 0, {1, 1, 1});
  s.pass.grid = {1, 1, 1};
  std::memcpy(&s.pass.push, w.data(), sizeof(w));
  s.bindings = {words(l), words(l), words(l)};
  return s;
}

// The arm pass that clears `count` control words from `word` on.
SequencePass clear(const Layout& l, uint32_t word, uint32_t count = 1) {
  ArmWords w{};
  w[OZAKI_ARM_WORD_MODE] = OZAKI_ARM_CLEAR, w[OZAKI_ARM_WORD_FLAG] = word, w[OZAKI_ARM_WORD_GATE] = count;
  return arm_pass(l, w);
}

// The arm pass of the indirect dispatches of condition `when`, none yet: add_slot gives it each.
SequencePass arm(const Layout& l, const When& when) {
  ArmWords w{};
  w[OZAKI_ARM_WORD_MODE] = when.native ? OZAKI_ARM_NATIVE : when.guard ? OZAKI_ARM_GUARD : 0u;
  w[OZAKI_ARM_WORD_FLAG] = kFlagWord;
  w[OZAKI_ARM_WORD_GATE] = when.guard ? when.gate : kRefusedWord;
  w[OZAKI_ARM_WORD_CANDIDATE] = when.candidate, w[OZAKI_ARM_WORD_CANDIDATES] = when.candidates;
  return arm_pass(l, w);
}

// Whether arm pass `a` has room for one more command; adds slot `slot`'s, with `grid`, where it has.
bool add_slot(SequencePass& a, uint32_t slot, const std::array<uint32_t, 3>& grid) {
  ArmWords w;
  std::memcpy(w.data(), &a.pass.push, sizeof(w));
  const uint32_t n = w[OZAKI_ARM_WORD_SLOTS];
  if (n == OZAKI_ARM_MAX_SLOTS) return false;
  const uint32_t at = OZAKI_ARM_WORD_SLOT + 4 * n;
  w[at] = kFirstIndirectWord + 4 * slot, w[at + 1] = grid[0], w[at + 2] = grid[1], w[at + 3] = grid[2];
  w[OZAKI_ARM_WORD_SLOTS] = n + 1;
  std::memcpy(&a.pass.push, w.data(), sizeof(w));
  return true;
}

bool operator==(const When& x, const When& y) {
  return x.native == y.native && x.candidate == y.candidate && x.candidates == y.candidates && x.guard == y.guard &&
         x.gate == y.gate;
}

// The sequence being made, and its arm passes so far by condition: the dispatches of one condition are armed
// by the first arm pass of it (up to OZAKI_ARM_MAX_SLOTS each), placed before the first of them. That arm runs
// after the pass that settles its condition's words (the splits' flag, the guard's refusal words), which
// every later dispatch of the condition follows too.
struct Armed {
  std::vector<SequencePass>& seq;
  std::vector<std::pair<When, size_t>> arms;  // each condition's latest arm pass, by index into seq
};

// Slot `slot`'s command (`grid` where `when` holds) given to its condition's arm pass, a new one appended where
// there is none with room.
void arm_slot(Armed& armed, const Layout& l, uint32_t slot, const std::array<uint32_t, 3>& grid, const When& when) {
  auto found = std::find_if(armed.arms.begin(), armed.arms.end(), [&](const auto& a) { return a.first == when; });
  if (found != armed.arms.end() && add_slot(armed.seq[found->second], slot, grid)) return;
  armed.seq.push_back(arm(l, when));
  add_slot(armed.seq.back(), slot, grid);
  if (found == armed.arms.end()) {
    armed.arms.emplace_back(when, armed.seq.size() - 1);
  } else {
    found->second = armed.seq.size() - 1;
  }
}

// `pass` made indirect through slot `slot`, armed by its condition's arm pass: appended to the sequence.
void add_armed(Armed& armed, const Layout& l, uint32_t& slot, SequencePass pass, const When& when) {
  arm_slot(armed, l, slot, pass.pass.grid, when);
  pass.indirect = uint64_t{kFirstIndirectWord + 4 * slot++} * 4;
  armed.seq.push_back(std::move(pass));
}

std::array<uint32_t, 3> line_grid(const DeviceInfo& device, uint32_t lines, uint32_t batch) {
  const uint32_t gx = std::min(lines, device.max_workgroup_count[0]);
  const uint32_t gy = (lines + gx - 1) / gx;
  if (gy > device.max_workgroup_count[1] || batch > device.max_workgroup_count[2]) {
    throw Error(ErrorCode::too_large,
                fmt::format("the ozaki kernel's split needs {} x {} x {} workgroups; {} allows {} x {} x {} "
                            "(maxComputeWorkGroupCount)", gx, gy, batch, device.name, device.max_workgroup_count[0],
                            device.max_workgroup_count[1], device.max_workgroup_count[2]));
  }
  return {gx, gy, batch};
}

// The split of op(A) (columns = false) or op(B): `operand` binds the caller's operand; `bits` its scale bits,
// `test_bits` what its subnormal test adds (the largest candidate's); `guarded`: the magnitude plane and the
// line statistics too (the first candidate's split).
struct SplitBits {
  int bits = 0, test_bits = 0;
  bool guarded = false;
};
SequencePass split(const Shape& s, const Layout& l, const DeviceInfo& device, DataType type, bool columns,
                   const SequenceBinding& operand, const SplitBits& bits) {
  SequencePass out;
  out.pass.shape = shape_of(fmt::format("ozaki_split_{}", to_string(type)), s.moduli, {OZAKI_SPLIT_INVOCATIONS, 1, 1});
  const uint32_t lines = columns ? s.n : s.m;
  const kernels::GemmPushConstants& a = s.a_side;
  const bool transposed = (a.flags & (columns ? kernels::kTransB : kernels::kTransA)) != 0;
  // Neighbouring lines are neighbours in memory (columns of B untransposed, rows of A transposed): grouped.
  const bool grouped = columns != transposed;
  out.pass.grid = line_grid(device, grouped ? (lines + OZAKI_SPLIT_GROUP - 1) / OZAKI_SPLIT_GROUP : lines, s.batch);
  kernels::GemmPushConstants& p = out.pass.push;
  p.M = lines, p.K = s.k, p.batch = s.batch, p.N = s.moduli;
  p.lda = columns ? a.ldb : a.lda;
  p.a_offset = columns ? a.b_offset : a.a_offset;
  p.stride_a = columns ? a.stride_b : a.stride_a;
  p.flags = (transposed ? kernels::kTransA : 0u) | (columns ? OZAKI_SPLIT_COLUMNS : 0u) |
            (grouped ? OZAKI_SPLIT_GROUPED : 0u) | (bits.guarded ? OZAKI_SPLIT_GUARDED : 0u);
  p.k_split = static_cast<uint32_t>(bits.bits);
  p.stride_b = static_cast<uint32_t>(bits.test_bits);
  p.c_offset = 0, p.ldc = s.ldk, p.stride_c = static_cast<uint32_t>(columns ? s.plane_b() : s.plane_a());
  p.b_offset = columns ? l.exp_b : l.exp_a;
  p.ldb = columns ? l.stats_b : l.stats_a;
  p.split_stride = kFlagWord;
  out.bindings = {operand, words(l), {3, columns ? l.planes_b : l.planes_a, columns ? l.b_bytes : l.a_bytes}};
  return out;
}

// The merge of C's rows [row0, row0 + rows) from the int32 planes' block.
SequencePass merge(const Shape& s, const Layout& l, DataType type, const SequenceBinding& c, const GemmDesc& desc,
                   uint32_t row0, uint32_t rows) {
  SequencePass out;
  out.pass.shape = shape_of(fmt::format("ozaki_merge_{}", to_string(type)), s.moduli, {OZAKI_MERGE_X, OZAKI_MERGE_Y, 1});
  out.pass.grid = {(s.n + OZAKI_MERGE_X - 1) / OZAKI_MERGE_X, (rows + OZAKI_MERGE_Y - 1) / OZAKI_MERGE_Y, s.batch};
  kernels::GemmPushConstants& p = out.pass.push;
  p.M = rows, p.N = s.n, p.batch = s.batch;
  p.ldc = s.c_side.ldc, p.c_offset = s.c_side.c_offset + row0 * s.c_side.ldc, p.stride_c = s.c_side.stride_c;
  p.flags = desc.beta == 0.0 ? kernels::kBetaZero : 0u;
  p.K = s.chunks, p.lda = s.n, p.a_offset = 0, p.stride_a = static_cast<uint32_t>(s.plane_sums(rows)), p.ldb = s.moduli;
  p.b_offset = l.exp_a + row0, p.k_split = s.m, p.stride_b = l.exp_b, p.split_stride = kFlagWord;
  std::memcpy(p.scalars, &desc.alpha, 8);
  std::memcpy(p.scalars + 8, &desc.beta, 8);
  out.bindings = {SequenceBinding{kSequenceSums, 0, l.sums_bytes}, words(l), c};
  return out;
}

// Which int8 products one strided batch computes: planes [plane, plane + planes) of every batch entry, for C's
// rows [row0, row0 + rows), into the int32 region at `sums` (its K chunk's part) of workspace `source`
// (SequenceBinding::source: the magnitude sums' in the workspace, the residues' in the second).
struct Products {
  uint32_t plane = 0, planes = 0, row0 = 0, rows = 0;
  uint64_t sums = 0, chunk_bytes = 0;
  uint32_t source = kSequenceWorkspace;
};

// The int8 products of K chunk `chunk`: one strided batch of planes x batch entries, planned by the engine.
// Returns the products' kernel and configuration, for the plan's description.
std::string add_products(std::vector<SequencePass>& out, const Shape& s, const Layout& l, uint32_t chunk,
                         const Products& what, const DeviceInfo& device, const tuning::Table& tuning) {
  const uint32_t k0 = chunk * ozaki::kChunkK, k = std::min(s.k - k0, ozaki::kChunkK);
  GemmDesc d;
  d.type = DataType::i8;
  d.op_b = Op::t;  // B's planes are stored N x K
  d.m = what.rows, d.n = s.n, d.k = k;
  d.lda = s.ldk, d.ldb = s.ldk, d.ldc = s.n;
  d.batch = int64_t{what.planes} * s.batch;
  d.stride_a = static_cast<int64_t>(s.plane_a()), d.stride_b = static_cast<int64_t>(s.plane_b());
  d.stride_c = static_cast<int64_t>(s.plane_sums(what.rows));
  const uint64_t first = uint64_t{what.plane} * s.batch;
  const Placement at{l.planes_a + first * s.plane_a() + uint64_t{what.row0} * s.ldk + k0,
                     l.planes_b + first * s.plane_b() + k0, what.sums + chunk * what.chunk_bytes, kRegionAlign};
  const Schedule product = schedule_product(d, GemmOptions{}, device, tuning, at);
  if (product.workspace_bytes != 0) {
    throw Error(ErrorCode::unsupported_config,
                fmt::format("the ozaki kernel's int8 products on {} ({}) would need a workspace of their own",
                            device.name, product.config));
  }
  for (const PiecePasses& piece : product.pieces) {
    SequencePass pass;
    pass.pass = piece.main;
    pass.bindings = {SequenceBinding{kSequenceWorkspace, piece.piece.a.offset, piece.piece.a.size},
                     SequenceBinding{kSequenceWorkspace, piece.piece.b.offset, piece.piece.b.size},
                     SequenceBinding{what.source, piece.piece.c.offset, piece.piece.c.size}};
    out.push_back(std::move(pass));
  }
  return fmt::format("{} ({})", to_string(product.kernel), product.config);
}

// A pass of the span guard over all of C: its allowance from guard.hpp's rule, the first candidate's, and the
// others' scale bits past it. The extremes' and the levels' passes judge the first candidate alone, each
// refusal in its own word.
SequencePass guard(const Shape& s, const Layout& l, DataType type, const ozaki::Candidates& all,
                   ozaki::GuardPass pass) {
  ozaki::Candidates candidates = all;
  if (pass != ozaki::GuardPass::magnitudes) candidates.count = 1;
  SequencePass out;
  out.pass.shape = shape_of("ozaki_guard_f64", 0, {OZAKI_MERGE_X, OZAKI_MERGE_Y, 1});
  out.pass.grid = {(s.n + OZAKI_MERGE_X - 1) / OZAKI_MERGE_X, (s.m + OZAKI_MERGE_Y - 1) / OZAKI_MERGE_Y, s.batch};
  if (pass == ozaki::GuardPass::extremes) out.pass.grid = {1, 1, 1};
  kernels::GemmPushConstants& p = out.pass.push;
  p.M = s.m, p.N = s.n, p.batch = s.batch, p.K = s.chunks, p.k_split = s.k;
  const bool extremes = pass == ozaki::GuardPass::extremes, levels = pass == ozaki::GuardPass::levels;
  p.flags = extremes ? OZAKI_GUARD_EXTREMES : levels ? OZAKI_GUARD_LEVELS : 0u;
  p.a_offset = 0, p.stride_a = static_cast<uint32_t>(s.plane_sums(s.m));
  p.stride_b = static_cast<uint32_t>(l.magnitude_chunk_bytes / 4);
  p.ldb = l.stats_a, p.ldc = l.stats_b, p.split_stride = kFlagWord;
  p.c_offset = extremes ? kExtremesWord : levels ? kLevelsWord : kRefusedWord;
  p.lda = candidates.count;
  for (uint32_t d = 1; d < candidates.count; ++d) {
    p.b_offset |= (static_cast<uint32_t>(candidates.shift[d].a) | static_cast<uint32_t>(candidates.shift[d].b) << 8)
                  << (16 * (d - 1));
  }
  const double allowance = ozaki::guard_allowance(type, s.k, ozaki::scale_bits(ozaki::make_moduli(s.moduli), s.k));
  std::memcpy(p.scalars, &allowance, 8);
  out.bindings = {SequenceBinding{3, l.magnitudes, l.magnitude_bytes}, words(l), words(l)};
  return out;
}

// The span guard (guard.hpp): the extremes' pass; armed to run only where it refused the first count, the
// levels' pass; armed to run only where that refused it too, the magnitude planes' products and the pass that
// judges every candidate on them; their commands from slot `slot` on. Where a pass admits the first count the
// later ones would too: uniform lines cost one invocation's judgement, no pass over C and no product.
void add_guard(Armed& seq, const Shape& s, const Layout& l, uint32_t& slot, DataType type,
               const ozaki::Candidates& candidates, const DeviceInfo& device, const tuning::Table& tuning) {
  const When levels{false, 0, candidates.count, true, kExtremesWord};
  const When magnitudes{false, 0, candidates.count, true, kLevelsWord};
  seq.seq.push_back(guard(s, l, type, candidates, ozaki::GuardPass::extremes));
  add_armed(seq, l, slot, guard(s, l, type, candidates, ozaki::GuardPass::levels), levels);
  const Products planes{s.moduli, 1, 0, s.m, l.magnitudes, l.magnitude_chunk_bytes};
  for (uint32_t chunk = 0; chunk < s.chunks; ++chunk) {
    std::vector<SequencePass> passes;
    add_products(passes, s, l, chunk, planes, device, tuning);
    for (SequencePass& pass : passes) add_armed(seq, l, slot, std::move(pass), magnitudes);
  }
  add_armed(seq, l, slot, guard(s, l, type, candidates, ozaki::GuardPass::magnitudes), magnitudes);
}

// The residue products and merges of one candidate count, block by block: each dispatch indirect, armed
// (after the guard) to run only where `when` holds, so that a product the split refused, or the guard gave
// another count, costs no residue product; their commands from slot `slot` on. Returns the products'
// description.
std::string add_residues(Armed& seq, const Shape& s, const Layout& l, uint32_t& slot,
                         const SequenceBinding& c, const GemmDesc& desc, const DeviceInfo& device,
                         const tuning::Table& tuning, const When& when) {
  std::string products;
  for (uint32_t row0 = 0; row0 < s.m; row0 += l.rows) {
    const uint32_t block_rows = std::min(l.rows, s.m - row0);
    const Products residues{0, s.moduli, row0, block_rows, 0, l.chunk_bytes, kSequenceSums};
    for (uint32_t chunk = 0; chunk < s.chunks; ++chunk) {
      std::vector<SequencePass> passes;
      const std::string planned = add_products(passes, s, l, chunk, residues, device, tuning);
      if (row0 == 0 && chunk == 0) products = planned;
      for (SequencePass& pass : passes) add_armed(seq, l, slot, std::move(pass), when);
    }
    add_armed(seq, l, slot, merge(s, l, desc.type, c, desc, row0, block_rows), when);
  }
  return products;
}

// The native plan's dispatches, as lay_out (engine/gemm_plan.cpp) binds them, each made indirect.
std::vector<SequencePass> native_passes(const Schedule& native, const Layout& l) {
  std::vector<SequencePass> out;
  const PiecePasses& piece = native.pieces.front();
  const PieceBinding* own[3] = {&piece.piece.a, &piece.piece.b, &piece.piece.c};
  SequenceBinding operand[3];
  for (uint32_t b = 0; b < 3; ++b) operand[b] = {native.source[b], own[b]->offset, own[b]->size};
  const SequenceBinding space{3, l.native, piece.workspace_bytes};
  out.push_back({piece.main, {operand[0], operand[1], piece.reduce ? space : operand[2]}, std::nullopt});
  if (piece.adds_slices) out.back().slices = space;
  if (piece.reduce) out.push_back({*piece.reduce, {space, space, operand[2]}, std::nullopt});
  for (size_t i = 0; i < out.size(); ++i) out[i].indirect = uint64_t{kFirstIndirectWord + 4 * static_cast<uint32_t>(i)} * 4;
  return out;
}

Shape shape_of_call(const Schedule& native, const GemmOptions& options, DataType type) {
  const PiecePasses& piece = native.pieces.front();
  Shape s;
  s.a_side = piece.main.push;
  s.c_side = piece.reduce ? piece.reduce->push : piece.main.push;
  s.m = s.a_side.M, s.n = s.a_side.N, s.k = s.a_side.K, s.batch = s.a_side.batch;
  s.moduli = options.emulation_moduli ? options.emulation_moduli : ozaki::default_moduli(type, s.k);
  s.chunks = (s.k + ozaki::kChunkK - 1) / ozaki::kChunkK;
  s.guarded = ozaki::guarded(type, s.k, s.moduli);
  s.ldk = static_cast<uint32_t>(align_up(s.k, kPlaneRowAlign));
  return s;
}

// One candidate moduli count's shape (the count and nothing else differs), the rows of C a block of its int32
// planes holds, its workspace layout and its scale bits.
struct Candidate {
  Shape shape;
  uint32_t rows = 0;
  Layout layout;
  ozaki::ScaleBits bits;
};

// Every candidate's layout, on the slots every candidate's armed passes take (counted on first layouts: their
// pieces do not depend on where the regions lie), each checked against the device's limits.
std::vector<Candidate> lay_out_candidates(const Schedule& native, const GemmDesc& desc, const Shape& s,
                                          const ozaki::Candidates& candidates, const DeviceInfo& device,
                                          const tuning::Table& tuning) {
  const uint32_t dispatches = native.pieces.front().reduce ? 2 : 1;
  const SequenceBinding c{native.source[2], native.pieces.front().piece.c.offset, native.pieces.front().piece.c.size};
  std::vector<Candidate> out(candidates.count);
  uint32_t slots = dispatches;
  if (s.guarded) {
    std::vector<SequencePass> passes;
    Armed scratch{passes, {}};
    add_guard(scratch, s, lay_out_workspace(s, dispatches, native.workspace_bytes, s.m), slots, desc.type, candidates,
              device, tuning);
  }
  for (uint32_t d = 0; d < candidates.count; ++d) {
    Candidate& cand = out[d];
    cand.shape = s;
    cand.shape.moduli = candidates.moduli[d];
    cand.rows = choose_rows(cand.shape, device);
    cand.bits = ozaki::scale_bits(ozaki::make_moduli(cand.shape.moduli), s.k);
    if (d > 0) slots += 2;  // its splits
    std::vector<SequencePass> passes;
    Armed scratch{passes, {}};
    add_residues(scratch, cand.shape, lay_out_workspace(cand.shape, dispatches, native.workspace_bytes, cand.rows),
                 slots, c, desc, device, tuning, When{false, d, candidates.count});
  }
  for (Candidate& cand : out) {
    cand.layout = lay_out_workspace(cand.shape, slots, native.workspace_bytes, cand.rows);
    check_ranges(desc, cand.layout, device);
  }
  return out;
}

// The plan's configuration: the first count, the others the guard may choose, the products, the fallback.
std::string describe(const std::vector<Candidate>& cands, const std::string& products, const Schedule& native) {
  const Shape& s = cands.front().shape;
  const Candidate& last = cands.back();
  std::string more;
  for (size_t d = 1; d < cands.size(); ++d) {
    const uint32_t blocks = (s.m + cands[d].rows - 1) / cands[d].rows;
    more += fmt::format("{}{}{}", d == 1 ? "" : " or ", cands[d].shape.moduli,
                        blocks > 1 ? fmt::format(" (in {} blocks of {} rows)", blocks, cands[d].rows) : "");
  }
  const uint32_t blocks = (s.m + cands.front().rows - 1) / cands.front().rows;
  return fmt::format("{} moduli{}, scale bits {}+{}, {} K chunk{}, {} int8 products by {}{}{}; falls back to {} "
                     "({}) if an input is NaN, infinite or a subnormal that matters{}",
                     s.moduli, more.empty() ? "" : fmt::format(" ({} where the span guard asks for more)", more),
                     cands.front().bits.a, cands.front().bits.b, s.chunks, s.chunks == 1 ? "" : "s",
                     s.moduli * s.batch * s.chunks, products,
                     blocks > 1 ? fmt::format(" in {} blocks of {} rows", blocks, cands.front().rows) : "",
                     s.guarded ? fmt::format(" and {} for the span guard where the lines' levels do not decide it",
                                             s.batch * s.chunks)
                               : "",
                     to_string(native.kernel), native.config,
                     s.guarded ? fmt::format(", or its exponent span needs more than {} moduli", last.shape.moduli) : "");
}

// The emulated product around the native plan `out` (its sequence, configuration and workspace): the first
// candidate's splits (with the magnitude planes and statistics where guarded), the guard's product and pass,
// then each candidate's splits (but the first's), products and merges, and the native kernel's dispatches,
// every one armed to run where the guard's choice (or the coverage flag) says.
Schedule emulate(Schedule out, const GemmDesc& desc, const Shape& s, const ozaki::Candidates& candidates,
                 const DeviceInfo& device, const tuning::Table& tuning) {
  const std::vector<Candidate> cands = lay_out_candidates(out, desc, s, candidates, device, tuning);
  const Layout& l = cands.front().layout;
  const PiecePasses& piece = out.pieces.front();
  const SequenceBinding a{out.source[0], piece.piece.a.offset, piece.piece.a.size};
  const SequenceBinding b{out.source[1], piece.piece.b.offset, piece.piece.b.size};
  const SequenceBinding c{out.source[2], piece.piece.c.offset, piece.piece.c.size};
  const ozaki::ScaleBits last = cands.back().bits;
  std::vector<SequencePass>& seq = out.sequence;
  Armed armed{seq, {}};
  seq.push_back(clear(l, kFlagWord, OZAKI_CONTROL_WORDS));
  const ozaki::ScaleBits first = cands.front().bits;
  seq.push_back(split(s, l, device, desc.type, false, a, {first.a, last.a - first.a, s.guarded}));
  seq.push_back(split(s, l, device, desc.type, true, b, {first.b, last.b - first.b, s.guarded}));
  // The native kernel's passes use the largest layout's region; its commands take slots 0 on, the guard's next.
  const std::vector<SequencePass> fallback = native_passes(out, cands.back().layout);
  uint32_t slot = static_cast<uint32_t>(fallback.size());
  if (s.guarded) add_guard(armed, s, l, slot, desc.type, candidates, device, tuning);
  const When native{true, candidates.count, candidates.count};
  // Their dispatches come last, their slots first.
  for (uint32_t i = 0; i < fallback.size(); ++i) arm_slot(armed, l, i, fallback[i].pass.grid, native);
  std::string products;
  for (uint32_t d = 0; d < candidates.count; ++d) {
    const Candidate& cand = cands[d];
    const When when{false, d, candidates.count};
    if (d > 0) {  // the first's splits ran above; the magnitude sums are read already
      const SplitBits bits_a{cand.bits.a, last.a - cand.bits.a, false};
      const SplitBits bits_b{cand.bits.b, last.b - cand.bits.b, false};
      add_armed(armed, cand.layout, slot, split(cand.shape, cand.layout, device, desc.type, false, a, bits_a), when);
      add_armed(armed, cand.layout, slot, split(cand.shape, cand.layout, device, desc.type, true, b, bits_b), when);
    }
    const std::string planned = add_residues(armed, cand.shape, cand.layout, slot, c, desc, device, tuning, when);
    if (d == 0) products = planned;
  }
  seq.insert(seq.end(), fallback.begin(), fallback.end());
  std::erase_if(seq, [](const SequencePass& pass) { return kernels::ozaki_drop_experiment(pass.pass.shape.shader); });
  const std::string native_config = out.config;
  out.config = describe(cands, products, out);
  out.fallback_kernel = out.kernel;
  out.fallback_config = native_config;
  out.kernel = Kernel::ozaki;
  out.workspace_bytes = 0;
  out.sums_bytes = 0;
  for (const Candidate& cand : cands) {
    out.workspace_bytes = std::max(out.workspace_bytes, cand.layout.total);
    out.sums_bytes = std::max(out.sums_bytes, cand.layout.sums_bytes);
  }
  out.candidate_moduli.assign(candidates.moduli.begin(), candidates.moduli.begin() + candidates.count);
  return out;
}

}  // namespace

Schedule schedule_emulated(const GemmDesc& desc, const GemmOptions& options, const DeviceInfo& device,
                           const tuning::Table& tuning, const Placement& placement) {
  GemmOptions native_options = options;
  native_options.kernel = Kernel::automatic;
  native_options.precision = Precision::native;
  Schedule out = schedule_product(desc, native_options, device, tuning, placement);
  if (!reads_ab(desc) || out.pieces.empty()) return out;  // C = beta C: nothing to emulate
  if (out.pieces.size() != 1 || out.pieces.front().turn_b) {
    throw Error(ErrorCode::too_large,
                fmt::format("the ozaki kernel takes a product its fallback plans in one piece; {} cuts this {}x{}x{} "
                            "product in a batch of {} into {} ({}): use the native kernel",
                            device.name, desc.m, desc.n, desc.k, desc.batch, out.pieces.size(), out.config));
  }
  const Shape s = shape_of_call(out, options, desc.type);
  // The candidate counts (guard.hpp's rule): the guard chooses among them on the device; where their largest
  // layout does not fit the device, the first count alone, refused to the native kernel.
  const ozaki::Candidates candidates = ozaki::candidate_moduli(desc.type, s.k, options.emulation_moduli);
  if (s.guarded && candidates.count > 1) {
    try {
      return emulate(out, desc, s, candidates, device, tuning);
    } catch (const Error& e) {
      if (e.code() != ErrorCode::too_large) throw;
    }
  }
  ozaki::Candidates first = candidates;
  first.count = 1;
  return emulate(std::move(out), desc, s, first, device, tuning);
}

}  // namespace vkgemm::detail
