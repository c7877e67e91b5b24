// The BLAS grid, in the style of the reference BLAS testers (xblat3): every combination of sizes, leading
// dimensions, layouts, transposes, batch (with and without a broadcast operand) and (alpha, beta), checked
// against the CPU reference with poisoned gaps and guards (support.hpp's check_gemm_call).
#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "kernels/registry.hpp"  // kernels::plan, to try auto on made-up devices
#include "support.hpp"

using namespace vkgemm;

namespace {

constexpr std::array<int64_t, 4> kSizes = {1, 7, 64, 67};
constexpr std::array<std::pair<double, double>, 5> kScalars = {
    std::pair{1.0, 0.0}, {0.0, 3.0}, {3.14, 0.0}, {1.0, 1.0}, {3.14, 2.5}};

enum class Batch { one, three, three_broadcast_a, three_broadcast_b };

// The smallest ld of each operand for these sizes, plus `pad`; and strides with `pad` between entries.
GemmDesc make_desc(DataType type, Layout layout, Op op_a, Op op_b, int64_t m, int64_t n, int64_t k, int64_t pad,
                   Batch batch, double alpha, double beta) {
  GemmDesc d;
  d.type = type, d.layout = layout, d.op_a = op_a, d.op_b = op_b, d.m = m, d.n = n, d.k = k;
  d.alpha = alpha, d.beta = beta;
  if (is_integer(type)) d.alpha = std::trunc(alpha), d.beta = std::trunc(beta);  // 3.14 -> 3, 2.5 -> 2
  const bool row = layout == Layout::row_major;
  const auto inner = [&](int64_t rows, int64_t cols) { return row ? cols : rows; };
  d.lda = inner(op_a == Op::n ? m : k, op_a == Op::n ? k : m) + pad;
  d.ldb = inner(op_b == Op::n ? k : n, op_b == Op::n ? n : k) + pad;
  d.ldc = inner(m, n) + pad;
  if (batch != Batch::one) {
    d.batch = 3;
    if (pad) {  // padded strides: gaps between the entries too
      d.stride_a = operand_extent(d, 'A').stride + pad;
      d.stride_b = operand_extent(d, 'B').stride + pad;
      d.stride_c = operand_extent(d, 'C').stride + pad;
    }
    if (batch == Batch::three_broadcast_a) d.stride_a = 0;
    if (batch == Batch::three_broadcast_b) d.stride_b = 0;
  }
  return d;
}

// The call with every ld rounded up to a multiple of 4 and batch strides of a whole entry plus 4 (a gap the
// check poisons): at check_gemm_call's skew 0 every operand allows the kernels' vec4 loads.
GemmDesc aligned(GemmDesc d) {
  const auto up = [](int64_t x) { return (x + 3) / 4 * 4; };
  d.lda = up(d.lda), d.ldb = up(d.ldb), d.ldc = up(d.ldc);
  for (const auto& [which, stride] : {std::pair{'A', &d.stride_a}, {'B', &d.stride_b}, {'C', &d.stride_c}}) {
    if (d.batch == 1 || stride->value_or(1) == 0) continue;  // one entry, or a broadcast operand
    *stride = std::nullopt;
    *stride = operand_extent(d, which).stride + 4;
  }
  return d;
}

// Runs the grid for one type and kernel; `layouts` and `scalars` restrict it (the whole grid is a few
// thousand products: split over CTest tests).
void run_grid(DataType type, const GemmOptions& options, Layout layout, const std::vector<Batch>& batches,
              const std::vector<Op>& ops = {Op::n, Op::t}, std::optional<DataType> c_type = std::nullopt) {
  const std::string name = fmt::format("blas {} {} {} {} {}", to_string(type), to_string(options.kernel), options.tile,
                                       to_string(options.blocked), static_cast<int>(layout));
  auto rng = test::case_rng(name);
  const test::GridSample sample = test::grid_sample(name);
  int failures = 0, runs = 0;
  uint64_t index = 0;
  for (Op op_a : ops)
    for (Op op_b : ops)
      for (int64_t m : kSizes)
        for (int64_t n : kSizes)
          for (int64_t k : kSizes)
            for (int64_t pad : {0, 3})
              for (Batch batch : batches)
                for (auto [alpha, beta] : kScalars) {
                  if (!sample.takes(index++)) continue;
                  GemmDesc d = make_desc(type, layout, op_a, op_b, m, n, k, pad, batch, alpha, beta);
                  d.c_type = c_type;
                  const auto r = test::check_gemm_call(d, options, rng);
                  ++runs;
                  if (!r.passed && ++failures <= 5) FAIL_CHECK("seed ", test::run_seed(), ": ", r.detail);
                }
  MESSAGE(runs, " of ", index, " products checked",
          sample.every > 1 ? fmt::format(" (one in {}: VKGEMM_TEST_GRID_SAMPLE)", sample.every) : "");
  REQUIRE(runs > 0);
  CHECK_MESSAGE(failures == 0, failures, " of ", runs, " calls failed (the first 5 are listed); seed ",
                test::run_seed());
}

}  // namespace

const std::vector<Batch> kAllBatches = {Batch::one, Batch::three, Batch::three_broadcast_a, Batch::three_broadcast_b};

TEST_SUITE("blas") {
  // The whole grid for f32 on both kernels; i32 (exact) and f64 on the tiled kernel with batch 1 and
  // a broadcast batch, to keep the suite's time on a 2-core CPU device in bounds.
  TEST_CASE("grid tiled f32 row-major") { run_grid(DataType::f32, {.kernel = Kernel::tiled}, Layout::row_major, kAllBatches); }
  TEST_CASE("grid tiled f32 column-major") { run_grid(DataType::f32, {.kernel = Kernel::tiled}, Layout::col_major, kAllBatches); }
  TEST_CASE("grid naive f32 row-major") { run_grid(DataType::f32, {.kernel = Kernel::naive}, Layout::row_major, kAllBatches); }
  TEST_CASE("grid naive f32 column-major") { run_grid(DataType::f32, {.kernel = Kernel::naive}, Layout::col_major, kAllBatches); }
  // The blocked kernel untransposed: every layout, size, ld, scalar pair and batch kind without and with
  // split-K, whose second pass applies alpha and beta. (Its transposes: "grid blocked every op".)
  TEST_CASE("grid blocked f32") {
    for (const char* config : {"64x64x8 8x4", "64x64x8 8x4 split 3"}) {
      for (Layout l : {Layout::row_major, Layout::col_major}) {
        CAPTURE(std::string(config));
        run_grid(DataType::f32, {.kernel = Kernel::blocked, .blocked = parse_blocked_config(config)}, l,
                 {Batch::one, Batch::three_broadcast_a}, {Op::n});
      }
    }
  }
  // The blocked kernel reads each operand by vec4 along its stored rows, whichever its op (A transposed along
  // m, B transposed along k): every op combination in both layouts, over sizes that cross the block edges of
  // the fallback configuration (64x64x8) and of the tuned family (128x128x8) in each dimension, each call
  // both aligned (vec4 loads for the blocks inside the matrices; edge blocks element by element) and
  // unaligned (every block element by element), with batch kinds, alpha and beta, forced split-K and f64.
  TEST_CASE("grid blocked every op") {
    constexpr std::array<int64_t, 8> kDims = {1, 3, 63, 64, 65, 127, 129, 200};
    const Batch batches[] = {Batch::one, Batch::three, Batch::three_broadcast_a, Batch::three_broadcast_b};
    // Split-K leaves small K unsplit (k / bk slices at most), so the split runs check the direct epilogue too.
    // 128x128x16 loads 2 vec4s of each operand per invocation and step, with bk 16's 4 vec4s per stored row
    // along K, as the H200's 128x256x16 does; its padded tiles would pass lavapipe's 32 KiB, so they go
    // unpadded. (Three configurations, 12 pipelines: 17 s on lavapipe with a cold shader cache, 6 s warm.)
    const std::pair<DataType, std::string> runs[] = {{DataType::f32, "128x128x16 8x8"},
                                                     {DataType::f32, "64x64x8 8x4 split 3"},
                                                     {DataType::f64, "64x64x8 8x4 split 2"}};
    for (const auto& [type, config] : runs) {
      if (type == DataType::f64 && !test::engine().device().float64) {
        test::skip(test::engine().device().name + " has no shaderFloat64");
        continue;
      }
      const GemmOptions options{.kernel = Kernel::blocked, .blocked = parse_blocked_config(config)};
      auto rng = test::case_rng(fmt::format("blocked ops {} {}", to_string(type), config));
      // The quick tier checks one or two of the 9 calls of each layout, op combination and loading (every
      // pipeline still built; the group's number shifts which, so the groups take different sizes), CI every one.
      const test::QuickSample quick = test::quick_sample(fmt::format("blocked ops {} {}", to_string(type), config));
      int failures = 0, runs_done = 0, runs_in_all = 0;
      size_t group = 0;
      for (Layout layout : {Layout::row_major, Layout::col_major})
        for (Op op_a : {Op::n, Op::t})
          for (Op op_b : {Op::n, Op::t})
            for (const bool vec : {true, false}) {
              ++group;
              for (size_t i = 0; i <= kDims.size(); ++i) {
                ++runs_in_all;
                if (!quick.takes((i + group) % (kDims.size() + 1), kDims.size() + 1)) continue;
                // Each size once in each dimension, in other company for the aligned and unaligned calls;
                // then one call with whole 128 x 128 x 8 blocks in every dimension (the fast path's loads).
                const bool whole = i == kDims.size();
                const int64_t m = whole ? 129 : kDims[i];
                const int64_t n = whole ? 200 : kDims[(i + (vec ? 3 : 5)) % 8];
                const int64_t k = whole ? 65 : kDims[(i + (vec ? 5 : 2)) % 8];
                const auto [alpha, beta] = kScalars[i % kScalars.size()];
                const GemmDesc d = make_desc(type, layout, op_a, op_b, m, n, k, vec ? 0 : 3,
                                             batches[(i + (vec ? 1u : 0u)) % 4], alpha, beta);
                const auto r = test::check_gemm_call(vec ? aligned(d) : d, options, rng, vec ? 0 : 3);
                ++runs_done;
                if (!r.passed && ++failures <= 5) FAIL_CHECK(config, ": seed ", test::run_seed(), ": ", r.detail);
              }
            }
      MESSAGE(to_string(type), " ", config, ": ", runs_done, " of ", runs_in_all, " products checked");
      CHECK_MESSAGE(failures == 0, failures, " of ", runs_done, " calls failed (the first 5 are listed); seed ",
                    test::run_seed());
    }
  }
  TEST_CASE("grid tiled i32") {
    for (Layout l : {Layout::row_major, Layout::col_major})
      run_grid(DataType::i32, {.kernel = Kernel::tiled, .tile = 8}, l, {Batch::one, Batch::three_broadcast_b});
  }
  // f16 inputs: the SIMT path with C f32 and C f16 (every device with shaderFloat16), and each
  // cooperative-matrix kernel in a case of its own, skipped where the device or this build lacks it.
  TEST_CASE("grid f16 simt") {
    const Engine& e = test::engine();
    if (!e.device().float16 || !e.device().storage16) {
      test::skip(e.device().name + " lacks shaderFloat16 or storageBuffer16BitAccess");
      return;
    }
    for (DataType out : {DataType::f32, DataType::f16}) {
      CAPTURE(to_string(out));
      run_grid(DataType::f16, {.kernel = Kernel::tiled, .tile = 8}, Layout::row_major,
               {Batch::one, Batch::three_broadcast_a}, {Op::n, Op::t}, out);
      run_grid(DataType::f16, {.kernel = Kernel::naive, .tile = 8}, Layout::col_major, {Batch::three}, {Op::t}, out);
    }
  }
  // bf16 (C f32 and C bf16) and i8, u8 (C i32) on the SIMT kernels, every device with 16- and 8-bit storage.
  // Both layouts and ops, padded lds, batches; the tiled kernel at tile 8 (sizes 7, 64, 67 cross it).
  TEST_CASE("grid narrow simt") {
    const Engine& e = test::engine();
    for (const auto& types : {std::pair{DataType::bf16, DataType::f32}, {DataType::bf16, DataType::bf16},
                              {DataType::i8, DataType::i32}, {DataType::u8, DataType::i32}}) {
      const DataType in = types.first, out = types.second;  // no structured binding: INFO captures them
      INFO(to_string(in), " -> ", to_string(out));
      try {
        e.check_supported(in, out, {.kernel = Kernel::tiled});
      } catch (const Error& why) {
        test::skip(why.what());
        continue;
      }
      run_grid(in, {.kernel = Kernel::tiled, .tile = 8}, Layout::row_major, {Batch::one, Batch::three_broadcast_a},
               {Op::n, Op::t}, out);
      run_grid(in, {.kernel = Kernel::naive, .tile = 8}, Layout::col_major, {Batch::three}, {Op::t}, out);
    }
  }
  void run_matrix_grid(Kernel kernel) {
    const Engine& e = test::engine();
    for (DataType out : {DataType::f32, DataType::f16}) {
      CAPTURE(to_string(out));
      try {
        e.check_supported(DataType::f16, out, {.kernel = kernel});
      } catch (const Error& why) {
        test::skip(why.what());
        return;
      }
      // Both read transposed operands (coopmat2 through transposing tensor views, coopmat staging them as stored).
      for (Layout l : {Layout::row_major, Layout::col_major})
        run_grid(DataType::f16, {.kernel = kernel}, l, kAllBatches, {Op::n, Op::t}, out);
    }
  }
  TEST_CASE("grid f16 coopmat") { run_matrix_grid(Kernel::coopmat); }
  TEST_CASE("grid f16 coopmat2") { run_matrix_grid(Kernel::coopmat2); }
  TEST_CASE("grid tiled f64") {
    if (!test::engine().device().float64) {
      test::skip(test::engine().device().name + " has no shaderFloat64");
      return;
    }
    for (Layout l : {Layout::row_major, Layout::col_major})
      run_grid(DataType::f64, {.kernel = Kernel::tiled, .tile = 8}, l, {Batch::one, Batch::three_broadcast_a});
  }

  TEST_CASE("beta = 0 never reads C, alpha = 0 never reads A or B: NaN stays out") {
    // check_gemm_call poisons C0 (beta = 0) or A and B (alpha = 0) entirely; spelled out here once more
    // on the host-memory call, with NaN in every element that must not be read.
    Engine& e = test::engine();
    const float nan = std::numeric_limits<float>::quiet_NaN();
    std::vector<float> a = {1, 2, 3, 4}, b = {5, 6, 7, 8}, c(4, nan);
    GemmDesc d{.m = 2, .n = 2, .k = 2, .alpha = 2.0, .beta = 0.0};
    e.gemm(d, a.data(), b.data(), c.data());
    CHECK(c == std::vector<float>{38, 44, 86, 100});
    std::vector<float> nans(4, nan), c2 = {1, 2, 3, 4};
    d.alpha = 0.0, d.beta = 3.0;
    e.gemm(d, nans.data(), nans.data(), c2.data());
    CHECK(c2 == std::vector<float>{3, 6, 9, 12});
  }

  TEST_CASE("m = 0, n = 0 or batch = 0 does nothing; k = 0 only scales C") {
    Engine& e = test::engine();
    std::vector<float> a(4, 1.0f), c = {1, 2, 3, 4};
    for (GemmDesc d : {GemmDesc{.m = 0, .n = 2, .k = 2, .beta = 5.0}, GemmDesc{.m = 2, .n = 0, .k = 2, .beta = 5.0},
                       GemmDesc{.m = 2, .n = 2, .k = 2, .beta = 5.0, .batch = 0}}) {
      const auto t = e.gemm(d, a.data(), a.data(), c.data());
      CHECK(t.gpu_ms.empty());
      CHECK(c == std::vector<float>{1, 2, 3, 4});
    }
    e.gemm(GemmDesc{.m = 2, .n = 2, .k = 0, .alpha = 7.0, .beta = -1.0}, nullptr, nullptr, c.data());
    CHECK(c == std::vector<float>{-1, -2, -3, -4});
  }

  TEST_CASE("arguments are checked as the reference BLAS checks them, each with its own code") {
    Engine& e = test::engine();
    Buffer buf = e.create_buffer(4096);
    const auto expect = [&](GemmDesc d, ErrorCode code, const std::string& words, uint64_t c_offset = 0) {
      try {
        e.gemm(d, {&buf, 0}, {&buf, 0}, {&buf, c_offset});
        FAIL("no error for ", test::describe(d), "; expected ", to_string(code));
      } catch (const Error& err) {
        CHECK_MESSAGE(err.code() == code, "got ", to_string(err.code()), ": ", err.what());
        CHECK_MESSAGE(std::string(err.what()).find(words) != std::string::npos, "message: ", err.what());
      }
    };
    expect({.m = -1, .n = 2, .k = 2}, ErrorCode::negative_dimension, "m = -1");
    expect({.m = 2, .n = -3, .k = 2}, ErrorCode::negative_dimension, "n = -3");
    expect({.m = 2, .n = 2, .k = -1}, ErrorCode::negative_dimension, "k = -1");
    expect({.m = 2, .n = 2, .k = 2, .batch = -2}, ErrorCode::negative_dimension, "batch = -2");
    // Row-major A (m x k, op N) needs lda >= k; transposed it is stored k x m, so lda >= m.
    expect({.m = 5, .n = 2, .k = 3, .lda = 2}, ErrorCode::invalid_leading_dimension, "lda = 2 is smaller than 3");
    expect({.op_a = Op::t, .m = 5, .n = 2, .k = 3, .lda = 3}, ErrorCode::invalid_leading_dimension,
           "lda = 3 is smaller than 5");
    // Column-major: ld >= rows. B is k x n (op N): ldb >= k.
    expect({.layout = Layout::col_major, .m = 2, .n = 2, .k = 6, .lda = 2, .ldb = 5}, ErrorCode::invalid_leading_dimension,
           "ldb = 5 is smaller than 6");
    expect({.m = 2, .n = 4, .k = 2, .ldc = 3}, ErrorCode::invalid_leading_dimension, "ldc = 3 is smaller than 4");
    expect({.m = 2, .n = 2, .k = 2, .lda = -1}, ErrorCode::invalid_leading_dimension, "lda = -1");
    expect({.m = 2, .n = 2, .k = 2, .batch = 2, .stride_a = -4}, ErrorCode::invalid_stride, "stride_a = -4");
    expect({.m = 2, .n = 2, .k = 2, .batch = 2, .stride_c = 0}, ErrorCode::invalid_stride, "write over each other");
    expect({.m = 2, .n = 2, .k = 2, .batch = 2, .stride_c = 3}, ErrorCode::invalid_stride, "stride_c = 3");
    // 16 x 16 x 16 f32 is 1024 bytes per operand: C at offset 3200 runs past 4096.
    expect({.m = 16, .n = 16, .k = 16}, ErrorCode::buffer_too_small, "C (row-major 16x16", 3200);
    expect({.m = 16, .n = 16, .k = 16, .ldb = 300}, ErrorCode::buffer_too_small, "B (row-major 16x16, ld 300");
    expect({.m = 8, .n = 8, .k = 8, .batch = 20}, ErrorCode::buffer_too_small, "batch 20 with stride 64");
    expect({.type = DataType::i32, .m = 2, .n = 2, .k = 2, .alpha = 0.5}, ErrorCode::invalid_argument, "alpha = 0.5");
    CHECK_THROWS_WITH_AS(e.gemm(GemmDesc{.m = 2, .n = 2, .k = 2, .beta = 1.0}, {&buf, 0}, {&buf, 0}, {&buf, 64},
                                {.repeat = 2}),
                         doctest::Contains("warmup + repeat must be 1"), Error);
    // Checked before the empty product returns, as in the reference BLAS.
    expect({.m = 0, .n = 2, .k = 2, .lda = -5}, ErrorCode::invalid_leading_dimension, "lda = -5");
  }

  TEST_CASE("kernel auto picks a configuration the device can run, and names what is missing when none can") {
    DeviceInfo fake = test::engine().device();
    fake.float64 = true;
    fake.max_workgroup_invocations = 1024;
    fake.max_workgroup_size = {1024, 1024, 64};
    fake.max_shared_memory = 1024;  // two f64 tiles of 8 x 8 fit, of 16 x 16 not
    const tuning::Table no_table;
    const auto plan_for = [&](DataType type, const GemmOptions& options) {
      return kernels::plan(fake, no_table, options, {.types = type, .m = 64, .n = 64, .k = 64, .lda = 64, .ldb = 64,
                                                     .ldc = 64});
    };
    kernels::KernelLaunch pl = plan_for(DataType::f64, {.kernel = Kernel::automatic});  // blocked does not fit 1 KiB
    CHECK(pl.kernel == Kernel::tiled);
    CHECK(pl.description == "tile 8");
    fake.max_shared_memory = 0;  // no shared memory at all: the naive kernel
    pl = plan_for(DataType::f32, {.kernel = Kernel::automatic});
    CHECK(pl.kernel == Kernel::naive);
    CHECK(pl.description == "tile 16");
    fake.max_workgroup_invocations = 1;
    CHECK(plan_for(DataType::f32, {.kernel = Kernel::automatic}).description == "tile 1");
    CHECK_THROWS_WITH_AS(plan_for(DataType::f32, {.kernel = Kernel::naive, .tile = 16}),  // concrete: as given
                         doctest::Contains("maxComputeWorkGroupInvocations"), Error);
    fake.float64 = false;  // a feature no kernel can do without: its name comes back
    CHECK_THROWS_WITH_AS(plan_for(DataType::f64, {.kernel = Kernel::automatic}), doctest::Contains("shaderFloat64"),
                         Error);
    // On the real device: a checked call through auto, and the name parses.
    auto rng = test::case_rng("auto");
    const auto r = test::check_gemm_call(GemmDesc{.op_b = Op::t, .m = 33, .n = 17, .k = 40, .alpha = 2.0, .beta = 1.0},
                                         {.kernel = Kernel::automatic}, rng);
    INFO(r.detail);
    CHECK(r.passed);
    CHECK(parse_kernel("auto") == Kernel::automatic);
  }
}
