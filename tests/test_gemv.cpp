// The skinny kernel (shaders/gemv.comp, kernels/gemv.cpp) on whole BLAS calls against the CPU reference:
// the small side 1 to 17 (its block of 16 and one past), the large side around its workgroup's rows (16, 32,
// 64, 256 and one either side), K from 1 to several thousand across its 4-element groups, its K lanes' 128
// and the vector loads' edge; every op pair, both layouts, lds padded (odd: element loads; multiples of 4 at an
// aligned start: vector loads), batches with B broadcast, alpha and beta (0 included), C's gaps poisoned
// (tests/support.hpp, check_gemm_call). And auto's rule on described devices.
#include <doctest/doctest.h>

#include <random>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "described_devices.hpp"
#include "gemm_abi.h"
#include "plan/schedule.hpp"
#include "support.hpp"

using namespace vkgemm;

namespace {

constexpr uint32_t kLarge[] = {1, 15, 16, 17, 31, 32, 33, 63, 64, 65, 255, 256, 257};
constexpr uint32_t kDepth[] = {1, 3, 4, 5, 127, 128, 129, 130, 511, 513, 1029, 4100};
struct Scalars {
  double alpha, beta;
};
constexpr Scalars kScalars[] = {{1.0, 0.0}, {0.5, 2.0}, {0.0, 1.5}, {-1.25, 0.0}, {1.0, 1.0}};

int64_t round4(int64_t x) { return (x + 3) / 4 * 4; }

// Call `i` of a combination's walk over the small side 1..17: the large side, K, the scalars, the ld
// padding and the batch vary with i (and with `combo`, so each combination meets other pairings), so that
// every value of each list meets both paddings and both orientations.
GemmDesc call(DataType type, DataType out, Layout layout, Op op_a, Op op_b, bool small_m, uint32_t i, uint32_t combo) {
  GemmDesc d;
  d.type = type;
  d.c_type = out;
  d.layout = layout, d.op_a = op_a, d.op_b = op_b;
  const uint32_t small = i + 1;
  const uint32_t large = kLarge[(i + combo) % std::size(kLarge)];
  d.k = kDepth[(i * 5 + combo) % std::size(kDepth)];
  d.m = small_m ? small : large;
  d.n = small_m ? large : small;
  const Scalars s = kScalars[(i + 2 * combo) % std::size(kScalars)];
  if (is_integer(type)) {
    d.alpha = s.alpha == 0.0 ? 0.0 : (s.alpha < 0 ? -1.0 : 1.0);
    d.beta = s.beta == 0.0 ? 0.0 : 2.0;
  } else {
    d.alpha = s.alpha, d.beta = s.beta;
  }
  // Stored rows and columns of each operand as the layout keeps them: ld is the stored matrix's row length
  // (row-major) or column length (column-major).
  const auto tight = [&](int64_t rows, int64_t cols) { return layout == Layout::row_major ? cols : rows; };
  const int64_t a_rows = op_a == Op::n ? d.m : d.k, a_cols = op_a == Op::n ? d.k : d.m;
  const int64_t b_rows = op_b == Op::n ? d.k : d.n, b_cols = op_b == Op::n ? d.n : d.k;
  const bool vec = (i + combo) % 2 == 0;  // lds of multiples of 4 (vector loads at an aligned start) or odd pads
  const auto ld = [&](int64_t t) { return vec ? round4(t) + 4 : t + 3; };
  d.lda = ld(tight(a_rows, a_cols));
  d.ldb = ld(tight(b_rows, b_cols));
  d.ldc = ld(tight(d.m, d.n));
  if ((i + combo) % 3 == 0) {
    d.batch = 3;
    d.stride_b = 0;  // one B for every entry
  }
  return d;
}

struct Grid {
  std::vector<Layout> layouts{Layout::row_major, Layout::col_major};
  std::vector<std::pair<Op, Op>> ops{{Op::n, Op::n}, {Op::n, Op::t}, {Op::t, Op::n}, {Op::t, Op::t}};
  uint32_t every = 1;  // one small side in `every` (offset by the combination)
};

void run_grid(DataType type, DataType out, const Grid& grid, const GemmOptions& options = {.kernel = Kernel::gemv}) {
  if (const auto feature = missing_feature(test::engine().device(), type); !feature.empty()) {
    test::skip(fmt::format("{} has no {}", test::engine().device().name, feature));
    return;
  }
  const std::string name = fmt::format("gemv {} {}", to_string(type), to_string(out));
  auto rng = test::case_rng(name);
  const test::GridSample sample = test::grid_sample(name);
  int failures = 0, ran = 0;
  uint64_t index = 0;
  uint32_t combo = 0;
  for (const Layout layout : grid.layouts) {
    for (const auto& [op_a, op_b] : grid.ops) {
      for (const bool small_m : {false, true}) {
        ++combo;
        for (uint32_t i = 0; i < 17; ++i) {
          if ((i + combo) % grid.every != 0 || !sample.takes(index++)) continue;
          const GemmDesc d = call(type, out, layout, op_a, op_b, small_m, i, combo);
          const uint32_t skew = d.lda % 4 == 0 ? 0 : 3;
          const auto result = test::check_gemm_call(d, options, rng, skew);
          ++ran;
          if (!result.passed && ++failures <= 5) FAIL_CHECK("seed ", test::run_seed(), ": ", result.detail);
          // Every small side of at most 16 runs in one block of the skinny kernel.
          if (result.passed && options.kernel == Kernel::gemv) CHECK(result.timing.kernel == Kernel::gemv);
        }
      }
    }
  }
  MESSAGE(name, ": ", ran, " calls");
  CHECK_MESSAGE(failures == 0, failures, " calls failed (the first 5 are listed); seed ", test::run_seed());
}

DeviceInfo described_gpu() {
  DeviceInfo d;
  d.name = "described GPU";
  d.type = DeviceType::discrete_gpu;
  d.float16 = d.storage16 = d.float64 = d.storage8 = true;
  d.max_shared_memory = 48 * 1024;
  d.max_workgroup_invocations = 1024;
  d.max_workgroup_size = {1024, 1024, 64};
  d.max_workgroup_count = {65535, 65535, 65535};
  d.max_storage_buffer_range = 1ull << 32;
  d.compute_units = 132;
  return d;
}

Kernel planned(const GemmDesc& desc, const DeviceInfo& device) {
  static const tuning::Table kNoTable;
  return detail::schedule_product(desc, {}, device, kNoTable).kernel;
}

}  // namespace

TEST_SUITE("gemv") {
  TEST_CASE("f32: every op pair, both layouts, both orientations") { run_grid(DataType::f32, DataType::f32, {}); }

  TEST_CASE("f64, f16, bf16, i8, u8, i32: every op pair, row and column-major in turn") {
    Grid grid;
    grid.every = 8;  // each type meets every op pair, layout and orientation twice; f32 takes the whole walk
    for (const auto& pair : {std::pair{DataType::f64, DataType::f64}, {DataType::f16, DataType::f32},
                             {DataType::f16, DataType::f16}, {DataType::bf16, DataType::f32},
                             {DataType::bf16, DataType::bf16}, {DataType::i8, DataType::i32},
                             {DataType::u8, DataType::i32}, {DataType::i32, DataType::i32},
                             {DataType::i8, DataType::f32}}) {
      const DataType in = pair.first, out = pair.second;  // not a structured binding: CAPTURE's lambda takes them
      CAPTURE(to_string(in));
      CAPTURE(to_string(out));
      run_grid(in, out, grid);
    }
  }

  TEST_CASE("the fused epilogue: a bias on either axis and an activation, in C's precision") {
    auto rng = test::case_rng("gemv epilogue");
    int failures = 0;
    uint32_t i = 0;
    for (const auto& [in, out] : {std::pair{DataType::f32, DataType::f32}, {DataType::f16, DataType::f16},
                                  {DataType::bf16, DataType::bf16}, {DataType::f64, DataType::f64}}) {
      if (!missing_feature(test::engine().device(), in).empty()) continue;
      for (const BiasAxis axis : {BiasAxis::per_column, BiasAxis::per_row}) {
        for (const bool small_m : {false, true}) {
          GemmDesc d = call(in, out, i % 2 ? Layout::col_major : Layout::row_major, Op::n, i % 3 ? Op::n : Op::t,
                            small_m, (i * 7) % 17, i);
          d.epilogue.bias = axis;
          d.epilogue.bias_type = in == DataType::f64 ? DataType::f64 : DataType::f32;
          d.epilogue.activation = in == DataType::f64 ? Activation::relu : Activation::gelu_tanh;
          ++i;
          const auto result = test::check_gemm_call(d, {.kernel = Kernel::gemv}, rng, 3);
          if (!result.passed && ++failures <= 5) FAIL_CHECK("seed ", test::run_seed(), ": ", result.detail);
        }
      }
    }
    CHECK_MESSAGE(failures == 0, failures, " calls failed; seed ", test::run_seed());
  }

  TEST_CASE("instrumented: one f32 call of each orientation and contiguity, small sides 1 and 3") {
    // The GPU-assisted pass's case (gemv.instrumented): few pipelines, each of the kernel's four loops.
    auto rng = test::case_rng("gemv instrumented");
    uint32_t combo = 0;
    for (const bool small_m : {false, true})
      for (const Op op : {Op::n, Op::t})
        for (const uint32_t i : {0u, 2u}) {
          const GemmDesc d = call(DataType::f32, DataType::f32, Layout::row_major, small_m ? op : Op::n,
                                  small_m ? Op::n : op, small_m, i, combo++);
          const auto result = test::check_gemm_call(d, {.kernel = Kernel::gemv}, rng, 3);
          CHECK_MESSAGE(result.passed, "seed ", test::run_seed(), ": ", result.detail);
        }
  }

  TEST_CASE("f16 and bf16 along rows at 8 rows an invocation: 16-byte and element loads, a ragged block, both Cs") {
    // 1 x 1101 x 2048: 9 workgroups of 128 rows (the last holds 77: its last invocation 5 of 8), 4 slices;
    // rows_along_r takes 8 rows where 36 workgroups are 4 a compute unit (a CPU device's are its threads).
    // Operands at aligned offsets, ldb 1104 (a multiple of 8: one 16-byte load of 8 rows), 1108 (of 4 only)
    // and 1103 (element loads).
    const bool eight = 9 * 4 >= 4 * std::max(1u, test::engine().device().compute_units);
    auto rng = test::case_rng(test::current_case_name());
    for (const DataType type : {DataType::f16, DataType::bf16}) {
      if (const auto feature = missing_feature(test::engine().device(), type); !feature.empty()) {
        test::skip(std::string(feature));
        continue;
      }
      for (const DataType out : {DataType::f32, type}) {
        for (const int64_t ldb : {1104, 1108, 1103}) {
          CAPTURE(to_string(type));
          CAPTURE(to_string(out));
          CAPTURE(ldb);
          const GemmDesc d{.type = type, .c_type = out, .m = 1, .n = 1101, .k = 2048, .ldb = ldb, .beta = 0.5};
          const auto result = test::check_gemm_call(d, {.kernel = Kernel::gemv}, rng, 0);  // aligned offsets
          CHECK(result.timing.config.find(eight ? "128 rows x 16 K lanes, along rows, K in 4 slices"
                                                : "64 rows x 16 K lanes, along rows") != std::string::npos);
          CHECK_MESSAGE(result.passed, "seed ", test::run_seed(), ": ", result.detail);
        }
      }
    }
  }

  TEST_CASE("a wide small side runs in blocks of 16 along the grid: any product is the kernel's") {
    auto rng = test::case_rng("gemv wide");
    for (const auto& [m, n, k] : {std::array<int64_t, 3>{33, 40, 70}, {17, 17, 5}, {100, 48, 129}}) {
      const GemmDesc d{.m = m, .n = n, .k = k, .beta = 0.5};
      const auto result = test::check_gemm_call(d, {.kernel = Kernel::gemv}, rng, 3);
      CHECK_MESSAGE(result.passed, "seed ", test::run_seed(), ": ", result.detail);
    }
  }

  TEST_CASE("auto takes it for a small side of one with a long large side and K, on a GPU") {
    const DeviceInfo gpu = described_gpu();
    for (const DataType type : {DataType::f32, DataType::f16, DataType::f64, DataType::bf16, DataType::i8}) {
      CAPTURE(to_string(type));
      // One row of op(A): gemv where its K splits (the SIMT types, f16 and bf16 with their fp32 sums); int8's
      // one slice loses to coopmat2's tensor loads of B.
      const bool one_row = type != DataType::i8;
      CHECK(planned({.type = type, .m = 4096, .n = 1, .k = 4096}, gpu) == Kernel::gemv);
      CHECK((planned({.type = type, .m = 1, .n = 4096, .k = 4096}, gpu) == Kernel::gemv) == one_row);
      // Column-major, turned (C^T = op(B)^T op(A)^T): the kernel sees one row, as in the case above.
      CHECK((planned({.type = type, .layout = Layout::col_major, .op_a = Op::t, .m = 4096, .n = 1, .k = 1024}, gpu) ==
             Kernel::gemv) == one_row);
      // f16 and bf16 on a device without 16-bit arithmetic: one slice, so one row stays coopmat2's.
      if (type == DataType::f16 || type == DataType::bf16) {
        DeviceInfo no_f16 = gpu;
        no_f16.float16 = false;
        CHECK(planned({.type = type, .m = 1, .n = 4096, .k = 4096}, no_f16) != Kernel::gemv);
      }
      // Two rows or columns, or one past each bound, keep the other kernels: they reuse each loaded element.
      CHECK(planned({.type = type, .m = 4096, .n = 2, .k = 4096}, gpu) != Kernel::gemv);
      CHECK(planned({.type = type, .m = 4096, .n = 16, .k = 4096}, gpu) != Kernel::gemv);
      CHECK(planned({.type = type, .m = 1023, .n = 1, .k = 4096}, gpu) != Kernel::gemv);
      CHECK(planned({.type = type, .m = 4096, .n = 1, .k = 255}, gpu) != Kernel::gemv);
    }
    // Unmeasured on CPU devices: their products keep the kernels they were tuned with.
    DeviceInfo cpu = gpu;
    cpu.type = DeviceType::cpu;
    CHECK(planned({.m = 4096, .n = 1, .k = 4096}, cpu) != Kernel::gemv);
  }

  TEST_CASE("one row of f16 goes to coopmat2's 16-row tile where that tile splits K, else stays here") {
    // The described H200 lists f16 workgroup shapes at 64 invocations: its 16-row tile takes 1 x 4096 x 4096
    // (split 8), streaming B faster than this kernel (docs/design/gemv.md). Where that tile does not split K
    // (K below 4096), for a column (n = 1), and for f32 (no tile), the gemv kernel keeps it.
    const DeviceInfo h200 = test::nvidia();
    const detail::Schedule row = detail::schedule_product({.type = DataType::f16, .m = 1, .n = 4096, .k = 4096}, {},
                                                          h200, tuning::Table{});
    CHECK(row.kernel == Kernel::coopmat2);
    CHECK_MESSAGE(row.config.find("16x64") == 0, row.config);
    CHECK(planned({.type = DataType::f16, .m = 1, .n = 4096, .k = 2048}, h200) == Kernel::gemv);
    CHECK(planned({.type = DataType::f16, .m = 4096, .n = 1, .k = 4096}, h200) == Kernel::gemv);
    CHECK(planned({.type = DataType::f32, .m = 1, .n = 4096, .k = 4096}, h200) == Kernel::gemv);
  }

  TEST_CASE("its launch: the orientation, one block of the small side, the vector flag where the large operand allows") {
    static const tuning::Table kNoTable;
    const GemmOptions gemv{.kernel = Kernel::gemv};
    const auto plan = [&](const GemmDesc& d) { return detail::schedule_product(d, gemv, described_gpu(), kNoTable); };
    const detail::Schedule n_small = plan({.m = 4096, .n = 3, .k = 4096});
    REQUIRE(n_small.pieces.size() == 1);
    CHECK(n_small.pieces[0].main.grid[1] == 1);
    CHECK((n_small.pieces[0].main.push.flags & GEMM_VEC_A) != 0);
    CHECK(n_small.config.find("N small, 3 columns") == 0);
    const detail::Schedule m_small = plan({.m = 2, .n = 4096, .k = 4096, .ldb = 4097});
    CHECK(m_small.config.find("M small, 2 columns") == 0);
    CHECK((m_small.pieces[0].main.push.flags & (GEMM_VEC_A | GEMM_VEC_B)) == 0);  // ldb 4097: element loads
    const detail::Schedule wide = plan({.m = 40, .n = 4096, .k = 64});
    CHECK(wide.pieces[0].main.grid[1] == (40 + GEMM_GEMV_MAX_SMALL - 1) / GEMM_GEMV_MAX_SMALL);
    // K split across workgroups where the rows give few: 1 x 4096 read along its rows is 64 workgroups of 64
    // rows (16 invocations of 4), so 8 slices of 512 (512 workgroups, at most K / 512); 4096 x 1 read along k is
    // 256 of 16 rows, 2 slices, which meet in the main pass (no reduce pass: their sums and counters in the
    // workspace). f16 reads 8 rows an invocation along its rows (16 bytes, as f32's 4), sums its slices in fp32
    // (the workspace's) and stores C in the variant of C's own type; fp16 sums run one slice.
    const detail::Schedule row = plan({.m = 1, .n = 4096, .k = 4096});
    CHECK(row.pieces[0].main.grid[0] == 64);
    CHECK(row.pieces[0].main.grid[2] == 8);
    CHECK(row.pieces[0].main.push.k_split == 512);
    CHECK_FALSE(row.pieces[0].reduce.has_value());
    CHECK(row.pieces[0].adds_slices);
    CHECK(row.pieces[0].main.push.split_stride == 4096);
    // 8 slices of 4096 fp32 sums, then one counter for each of the 64 workgroups of a slice.
    CHECK(row.workspace_bytes == 8 * 4096 * 4 + 64 * 4);
    CHECK(row.config.find("K in 8 slices") != std::string::npos);
    const detail::Schedule column = plan({.type = DataType::f64, .m = 4096, .n = 1, .k = 4096});
    CHECK(column.pieces[0].main.grid[2] == 2);
    CHECK(column.pieces[0].main.push.k_split == 2048);
    const detail::Schedule half = plan({.type = DataType::f16, .c_type = DataType::f16, .m = 1, .n = 4096, .k = 4096});
    // f16 along rows: 8 rows an invocation where the grid keeps 4 workgroups a compute unit with them (16384
    // rows: 128 workgroups of 128, K's 8 slices of 512 at most, on 132 units; 4 taken), else 4 (4096 rows: 32 of
    // 128 rows would give 256).
    CHECK(half.pieces[0].main.grid[0] == 64);
    CHECK(half.config.find("64 rows x 16 K lanes, along rows") != std::string::npos);
    CHECK(half.pieces[0].main.grid[2] == 8);
    const detail::Schedule long_half =
        plan({.type = DataType::f16, .c_type = DataType::f16, .m = 1, .n = 16384, .k = 4096});
    CHECK(long_half.config.find("128 rows x 16 K lanes, along rows, K in 4 slices") != std::string::npos);
    CHECK(long_half.pieces[0].main.grid[0] == 128);
    CHECK(half.pieces[0].main.shape.shader == "gemv_f16_f16");
    CHECK_FALSE(half.pieces[0].reduce.has_value());
    CHECK(half.pieces[0].adds_slices);
    const detail::Schedule brain =
        plan({.type = DataType::bf16, .c_type = DataType::bf16, .m = 1, .n = 4096, .k = 4096});
    CHECK(brain.pieces[0].main.shape.shader == "gemv_bf16_bf16");
    CHECK_FALSE(brain.pieces[0].reduce.has_value());
    CHECK(brain.pieces[0].adds_slices);
    // A device whose vulkanMemoryModel is on without vulkanMemoryModelDeviceScope forbids the counters'
    // Device-scope atomics: one slice there.
    DeviceInfo no_scope = described_gpu();
    no_scope.vulkan_memory_model = true;
    CHECK(detail::schedule_product({.m = 1, .n = 4096, .k = 4096}, gemv, no_scope, kNoTable).pieces[0].main.grid[2] == 1);
    no_scope.vulkan_memory_model_device_scope = true;
    CHECK(detail::schedule_product({.m = 1, .n = 4096, .k = 4096}, gemv, no_scope, kNoTable).pieces[0].main.grid[2] == 8);
    const detail::Schedule acc16 = detail::schedule_product({.type = DataType::f16, .c_type = DataType::f16, .m = 1,
                                                             .n = 4096, .k = 4096},
                                                            {.kernel = Kernel::gemv, .f16_accumulate = true},
                                                            described_gpu(), kNoTable);
    CHECK(acc16.pieces[0].main.grid[2] == 1);
    CHECK_FALSE(acc16.pieces[0].reduce.has_value());
    const detail::Schedule shallow = plan({.m = 1, .n = 4096, .k = 1000});  // slices of 512 at least: one
    CHECK(shallow.pieces[0].main.grid[2] == 1);
  }

  TEST_CASE("K split: an infinity in one slice's K range is that slice's alone, not 0 times it elsewhere") {
    // 300 x 1 x 1920 along k: 19 workgroups of 16 rows, so 3 slices of 640. A workgroup's steps are 512 of k,
    // so the first slice's second step runs to k = 1023, past its end (its loads zeros there): it must not
    // read the small operand's infinity at k = 700, in the second slice.
    const GemmDesc d{.m = 300, .n = 1, .k = 1920};
    std::vector<float> a(300 * 1920, 0.25f), b(1920, 0.5f), c(300, NAN);
    b[700] = INFINITY;
    const GemmTiming t = test::engine().gemm(d, a.data(), b.data(), c.data(), {.kernel = Kernel::gemv});
    CHECK_MESSAGE(t.config.find("K in 3 slices") != std::string::npos, t.config);
    for (const float x : c) REQUIRE(x == INFINITY);
  }

  TEST_CASE("K split of 16-bit inputs: fp32 sums in the workspace, C f16, bf16 or f32, beta and the epilogue") {
    // 1 x 2048 x 1536 along rows (64 workgroups of 32 rows) and 600 x 1 x 1536 along k (38 of 16): 3 slices of
    // 512 each. The slices' sums are fp32 in the workspace; the last slice of a block rounds them into C.
    auto rng = test::case_rng(test::current_case_name());
    const DeviceInfo& dev = test::engine().device();
    int i = 0;
    for (const auto& [in, out] : {std::pair{DataType::f16, DataType::f16}, {DataType::f16, DataType::f32},
                                  {DataType::bf16, DataType::bf16}, {DataType::bf16, DataType::f32}}) {
      if (!missing_feature(dev, in).empty() || !dev.float16 || !dev.storage16) {
        MESSAGE("not run here: ", to_string(in), " or fp16 arithmetic missing");
        continue;
      }
      for (const bool small_m : {true, false}) {
        GemmDesc d{.type = in, .c_type = out, .m = small_m ? 1 : 600, .n = small_m ? 2048 : 1, .k = 1536};
        d.alpha = 0.75, d.beta = i % 2 ? 0.5 : 0.0;
        if (i % 3 == 0) {
          d.epilogue.bias = small_m ? BiasAxis::per_column : BiasAxis::per_row;
          d.epilogue.activation = Activation::gelu_tanh;
        }
        ++i;
        INFO(test::describe(d));
        const detail::Schedule s = detail::schedule_product(d, {.kernel = Kernel::gemv}, dev, tuning::Table{});
        CHECK(s.config.find("K in 3 slices") != std::string::npos);
        const auto result = test::check_gemm_call(d, {.kernel = Kernel::gemv}, rng, 3);
        CHECK_MESSAGE(result.passed, "seed ", test::run_seed(), ": ", result.detail);
      }
    }
  }

  TEST_CASE("K slices meet in one pass: many slices, a ragged last one, batches, beta, the epilogue, every type") {
    // The last workgroup of each C block to count itself on its counter adds every slice's sums: shapes with
    // up to 13 slices (the last one shorter), both orientations and contiguities, a small side of 2, 3 and 17
    // (two blocks along y: a counter each), batches with B broadcast, beta 0 and not, a bias and an
    // activation; each type whose K splits (f32 and f64 in their own type, f16 and bf16 in fp32 into each C).
    struct Case {
      GemmDesc d;
      uint32_t slices;
    };
    const auto cases = [](DataType in, DataType out) {
      std::vector<Case> list;
      // 1 x 256 x 8000, B read along its rows: 4 workgroups, 13 slices of 640 (the last 320).
      list.push_back({{.m = 1, .n = 256, .k = 8000, .alpha = 0.75}, 13});
      // 40 x 3 x 7000, A read along k: 3 workgroups, 11 slices of 640 (the last 600); beta.
      list.push_back({{.m = 40, .n = 3, .k = 7000, .alpha = 1.0, .beta = 0.5}, 11});
      // 300 x 1 x 4000 column-major with Aᵀ: turned, one row against Bᵀ read along k, 7 slices of 640.
      list.push_back({{.layout = Layout::col_major, .op_a = Op::t, .m = 300, .n = 1, .k = 4000, .beta = -1.0}, 7});
      // Two rows against 300 columns in a batch of 3, one B for every entry: 8 slices of 640 (the last 520).
      list.push_back({{.m = 2, .n = 300, .k = 5000, .beta = 0.25, .batch = 3, .stride_b = 0}, 8});
      // 17 rows (two blocks of the small side along y) against 100 columns: 5 slices of 640.
      list.push_back({{.m = 17, .n = 100, .k = 3000, .alpha = -0.5}, 5});
      // The epilogue on the finished sums, a bias along the large side and an activation: 10 slices of 640.
      GemmDesc e{.m = 1, .n = 200, .k = 6000, .beta = 0.5};
      e.epilogue.bias = BiasAxis::per_column;
      e.epilogue.bias_type = in == DataType::f64 ? DataType::f64 : DataType::f32;
      e.epilogue.activation = in == DataType::f64 ? Activation::relu : Activation::gelu_tanh;
      list.push_back({e, 10});
      for (Case& c : list) c.d.type = in, c.d.c_type = out;
      return list;
    };
    auto rng = test::case_rng(test::current_case_name());
    const DeviceInfo& dev = test::engine().device();
    int failures = 0, ran = 0;
    for (const auto& [in, out] : {std::pair{DataType::f32, DataType::f32}, {DataType::f64, DataType::f64},
                                  {DataType::f16, DataType::f16}, {DataType::f16, DataType::f32},
                                  {DataType::bf16, DataType::bf16}, {DataType::bf16, DataType::f32}}) {
      if (!missing_feature(dev, in).empty() || (is_half_width_float(in) && (!dev.float16 || !dev.storage16))) {
        MESSAGE("not run here: ", to_string(in), " or fp16 arithmetic missing");
        continue;
      }
      for (const Case& c : cases(in, out)) {
        INFO(test::describe(c.d));
        const detail::Schedule s = detail::schedule_product(c.d, {.kernel = Kernel::gemv}, dev, tuning::Table{});
        CHECK_MESSAGE(s.config.find(fmt::format("K in {} slices", c.slices)) != std::string::npos, s.config);
        REQUIRE(s.pieces.size() == 1);
        CHECK(s.pieces[0].adds_slices);
        CHECK_FALSE(s.pieces[0].reduce.has_value());
        const auto result = test::check_gemm_call(c.d, {.kernel = Kernel::gemv}, rng, ran % 2 ? 3 : 0);
        ++ran;
        if (!result.passed && ++failures <= 5) FAIL_CHECK("seed ", test::run_seed(), ": ", result.detail);
      }
    }
    MESSAGE(ran, " calls");
    CHECK_MESSAGE(failures == 0, failures, " calls failed (the first 5 are listed); seed ", test::run_seed());
  }

  TEST_CASE("K slices meet in one pass: a plan replayed, with repeats and warm-ups, leaves its counters at zero") {
    // Each call leaves the counters at zero for the next: a counter left at its count would make no workgroup
    // the last one on the next dispatch, and C (poisoned before each run, beta 0: never read) would keep the
    // poison. The operands are small integers, so every sum is exact and the result is compared bit for bit,
    // also against the first run (the sum's order does not depend on which workgroup came last).
    Engine& e = test::engine();
    const GemmDesc d{.m = 1, .n = 256, .k = 8000};  // 13 slices of 4 workgroups (the first case above)
    std::mt19937_64 rng = test::case_rng(test::current_case_name());
    std::uniform_int_distribution<int> small(-3, 3);
    std::vector<float> a(8000), b(8000 * 256), want(256, 0.0f);
    for (float& x : a) x = static_cast<float>(small(rng));
    for (float& x : b) x = static_cast<float>(small(rng));
    for (size_t k = 0; k < 8000; ++k)
      for (size_t j = 0; j < 256; ++j) want[j] += a[k] * b[k * 256 + j];  // exact: |sum| < 2^24
    Buffer ba = e.create_buffer(a.size() * 4), bb = e.create_buffer(b.size() * 4), bc = e.create_buffer(256 * 4);
    e.write(ba, 0, a.data(), a.size() * 4), e.write(bb, 0, b.data(), b.size() * 4);
    for (const std::pair<uint32_t, uint32_t>& counts : {std::pair{1u, 0u}, {3u, 2u}}) {
      const uint32_t repeat = counts.first, warmup = counts.second;
      CAPTURE(repeat);
      GemmPlan plan = e.plan(d, {.gemm = {.kernel = Kernel::gemv, .repeat = repeat, .warmup = warmup}});
      for (int run = 0; run < 3; ++run) {
        CAPTURE(run);
        const std::vector<float> poison(256, NAN);
        e.write(bc, 0, poison.data(), 256 * 4);
        const GemmTiming t = e.run(plan, {&ba}, {&bb}, {&bc});
        CHECK_MESSAGE(t.config.find("K in 13 slices") != std::string::npos, t.config);
        std::vector<float> c(256);
        e.read(bc, 0, c.data(), 256 * 4);
        int wrong = 0;
        for (size_t j = 0; j < 256; ++j) wrong += c[j] != want[j];
        CHECK_MESSAGE(wrong == 0, wrong, " of 256 elements differ from the exact sums (first: ", c[0], " for ", want[0], ")");
      }
    }
  }

  TEST_CASE("the pipelines it builds are few: no specialization value follows a product's exact sizes") {
    // Pipelines are kept for the engine's life, so the kernel's variants must be a small known set: the
    // small side's block a power of two up to 16 (5), two orientations, and along k two K-lane counts where
    // the large operand is contiguous along k (1 + 2), and for f32 and f64 the split-K reduce: at most 31 a
    // type on a device.
    static const tuning::Table kNoTable;
    const GemmOptions gemv{.kernel = Kernel::gemv};
    for (const DataType type : all_data_types) {
      std::set<std::pair<std::string, std::vector<uint32_t>>> variants;
      int products = 0;
      for (uint32_t small = 1; small <= 40; ++small)
        for (const uint32_t k : {1u, 3u, 4u, 5u, 16u, 31u, 32u, 33u, 64u, 100u, 127u, 128u, 129u, 513u, 4100u})
          for (const int ops : {0, 1, 2, 3})
            for (const bool small_m : {false, true}) {
              GemmDesc d{.type = type, .m = small_m ? small : 300, .n = small_m ? 300 : small, .k = k};
              d.op_a = (ops & 1) != 0 ? Op::t : Op::n, d.op_b = (ops & 2) != 0 ? Op::t : Op::n;
              const detail::Schedule s = detail::schedule_product(d, gemv, described_gpu(), kNoTable);
              for (const kernels::LaunchShape* shape : detail::pipeline_shapes(s)) {
                std::vector<uint32_t> values;
                for (const auto& c : shape->constants) values.push_back(c.value);
                variants.emplace(shape->shader, values);
              }
              ++products;
            }
      INFO(to_string(type), ": ", products, " products planned");
      CHECK(variants.size() <= 31);
    }
  }
}
