// The thin kernel (shaders/thin.comp): long op(A) against a small op(B) held in registers, on the KHR cooperative
// matrices. On the device under test: every op combination and layout, C f32 and f16 (bf16 where the device has
// bf16 matrices), sizes across the fragment, the block of rows (four strips), the workgroups' grid-stride walk
// and the block of columns, K of whole fragments and not up to the largest it holds, batches with a broadcast
// operand, alpha and beta, operands aligned (fragments loaded and stored straight) and not (staged), each checked
// against the CPU reference with poisoned gaps and guard regions. On a described NVIDIA device: auto's rule and
// its plans. A device without VK_KHR_cooperative_matrix (Debian 12's lavapipe) runs the described cases and skips
// the rest; tools/dev/coopmat-lavapipe.sh runs them on Mesa 26's lavapipe, which has the extension.
#include <doctest/doctest.h>

#include <array>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "aligned_call.hpp"
#include "described_devices.hpp"
#include "kernels/registry.hpp"
#include "plan/schedule.hpp"
#include "spec_constant.hpp"
#include "support.hpp"
#include "tuning/tuning_table.hpp"

using namespace vkgemm;

namespace {

using test::padded_desc;
using test::Size;

// Whether the kernel runs `input` -> `output` here; for f16 -> f32, the case's skip when it does not.
bool runs_here(DataType input, DataType output, bool skip_if_not) {
  try {
    test::engine().check_supported(input, output, {.kernel = Kernel::thin});
    return true;
  } catch (const Error& err) {
    if (skip_if_not) test::skip(err.what());
    else MESSAGE(to_string(input), " -> ", to_string(output), " not run here: ", std::string(err.what()));
    return false;
  }
}

GemmDesc make_desc(DataType input, DataType c_type, Layout layout, Op op_a, Op op_b, const Size& s, int64_t pad,
                   int64_t batch, char broadcast, std::pair<double, double> scalars) {
  return padded_desc({.input = input, .c_type = c_type, .layout = layout, .op_a = op_a, .op_b = op_b, .pad = pad,
                      .batch = batch, .broadcast = broadcast},
                     s, scalars);
}

// A strip's rows (RF fragments), a block's (one strip a subgroup), the fragment's depth and the largest K the
// kernel holds, as the device's plans say.
struct Geometry {
  uint32_t strip, block, tk, max_k;
};
Geometry geometry(DataType input) {
  const DeviceInfo& d = test::engine().device();
  const kernels::KhrFragment f = kernels::khr_fragment(d, Kernel::thin, {input, DataType::f32, false});
  kernels::Problem p;
  p.types = {input, DataType::f32, false};
  uint32_t max_k = 16 * f.tk;
  for (; max_k > f.tk; max_k -= f.tk) {  // the largest K it plans
    p.m = 1, p.n = 1, p.k = max_k, p.lda = max_k, p.ldb = 1, p.ldc = 1;
    try {
      kernels::plan(d, tuning::Table{}, {.kernel = Kernel::thin}, p);
      break;
    } catch (const Error&) {
    }
  }
  p.k = f.tk, p.lda = f.tk;
  const kernels::KernelLaunch plan = kernels::plan(d, tuning::Table{}, {.kernel = Kernel::thin}, p);
  const uint32_t strip = test::spec_constant(plan.main, "RF") * f.tm;
  return {strip, plan.main.tile[1], f.tk, max_k};
}

// Sizes from the geometry: rows around a strip and a block (4 strips), a long M whose blocks outnumber any
// grid (each workgroup walks several); K around a fragment, not whole, and the largest; N around a fragment,
// past one workgroup's block of columns, whole 16-byte units short of a block (its padding fragment left
// unstored), and wide enough over one fragment of K that shared memory, not B's fragments, limits the block
// (f32 C on lavapipe).
std::vector<Size> sizes(const Geometry& g) {
  const int64_t strip = g.strip, block = g.block, tk = g.tk, kmax = g.max_k;
  return {{1, 1, 1},          {strip, strip, tk},          {strip + 1, 5, tk - 1},    {block, 16, 2 * tk},
          {block + 3, 17, 3 * tk + 2}, {3 * block, 64, 64}, {5 * block - 1, 33, kmax}, {40000, 8, tk},
          {2 * block, 100, 24}, {strip, 130, tk}, {3 * block + 1, 24, tk}};
}

constexpr std::array<std::pair<double, double>, 4> kScalars = {
    std::pair{1.0, 0.0}, {1.0, 1.0}, {-1.5, 0.0}, {0.75, -2.0}};

// The grid for one pair of types; returns the products run and counts the failures.
int run_grid(DataType input, DataType c_type, const std::vector<Size>& grid, std::mt19937_64& rng, int& failures) {
  int runs = 0;
  size_t turn = 0;
  const GemmOptions options{.kernel = Kernel::thin};
  for (Layout layout : {Layout::row_major, Layout::col_major})
    for (Op op_a : {Op::n, Op::t})
      for (Op op_b : {Op::n, Op::t})
        for (const Size& s : grid) {
          ++turn;
          const bool aligned = turn % 3 != 0;
          const int64_t batch = turn % 4 == 0 ? 2 : 1;
          const char broadcast = turn % 8 == 0 ? 'A' : turn % 12 == 0 ? 'B' : ' ';
          // The long M once per layout, aligned, op NN: it is the grid-stride walk's case, and costly on a CPU.
          if (s.m > 10000 && (op_a != Op::n || op_b != Op::n)) continue;
          const GemmDesc d = make_desc(input, c_type, layout, op_a, op_b, s, aligned ? 8 : 3,
                                       s.m > 10000 ? 1 : batch, broadcast, kScalars[turn % kScalars.size()]);
          const auto r = aligned || s.m > 10000 ? test::check_aligned_call(d, options, rng)
                                                : test::check_gemm_call(d, options, rng);
          ++runs;
          if (!r.passed && ++failures <= 5) FAIL_CHECK("seed ", test::run_seed(), ": ", r.detail);
          if (r.passed && r.timing.kernel != Kernel::thin) FAIL_CHECK("ran ", to_string(r.timing.kernel));
        }
  return runs;
}

kernels::Problem layer(uint32_t m, uint32_t n, uint32_t k, DataType c = DataType::f16) {
  kernels::Problem p;
  p.types = {DataType::f16, c, false};
  p.m = m, p.n = n, p.k = k, p.lda = k, p.ldb = n, p.ldc = n;
  return p;
}

}  // namespace

TEST_SUITE("thin") {
  TEST_CASE("every op, layout and C type across strips, blocks, the grid-stride walk and column blocks") {
    if (!runs_here(DataType::f16, DataType::f32, true)) return;
    auto rng = test::case_rng("thin grid");
    int runs = 0, failures = 0;
    const std::vector<Size> f16_grid = sizes(geometry(DataType::f16));
    for (const DataType c : {DataType::f32, DataType::f16}) runs += run_grid(DataType::f16, c, f16_grid, rng, failures);
    if (runs_here(DataType::bf16, DataType::f32, false)) {
      const std::vector<Size> bf16_grid = sizes(geometry(DataType::bf16));
      for (const DataType c : {DataType::f32, DataType::bf16}) runs += run_grid(DataType::bf16, c, bf16_grid, rng, failures);
    }
    MESSAGE(runs, " products checked");
    fmt::print("thin grid: {} products checked, {} failed\n", runs, failures);
    CHECK(runs > 0);
    CHECK_MESSAGE(failures == 0, failures, " of ", runs, " calls failed (the first 5 are listed); seed ", test::run_seed());
  }

  TEST_CASE("refused before any work: K past what it holds, fp16 sums, types it does not multiply") {
    if (!runs_here(DataType::f16, DataType::f32, true)) return;
    const Geometry g = geometry(DataType::f16);
    GemmDesc d = make_desc(DataType::f16, DataType::f32, Layout::row_major, Op::n, Op::n,
                           {64, 16, int64_t{g.max_k} + g.tk}, 0, 1, ' ', {1.0, 0.0});
    auto rng = test::case_rng("thin refusals");
    const auto r = test::check_gemm_call(d, {.kernel = Kernel::thin}, rng);
    CHECK(!r.passed);
    CHECK_MESSAGE(r.detail.find(fmt::format("K = {} is past its {}", g.max_k + g.tk, g.max_k)) != std::string::npos,
                  r.detail);
    const auto acc16 = [] {
      test::engine().check_supported(DataType::f16, DataType::f16, {.kernel = Kernel::thin, .f16_accumulate = true});
    };
    CHECK_THROWS_WITH(acc16(), doctest::Contains("no fp16 sums"));
    CHECK_THROWS_WITH(test::engine().check_supported(DataType::f32, DataType::f32, {.kernel = Kernel::thin}),
                      doctest::Contains("thin kernel multiplies f16 and bf16"));
  }

  TEST_CASE("auto on a described H200: K and N up to 128, N in one block, 262144 rows and more, A untransposed") {
    DeviceInfo d = test::nvidia();
    d.compute_units = 132;
    const tuning::Table table;
    const auto kernel_of = [&](const kernels::Problem& p) {
      return kernels::plan(d, table, {.kernel = Kernel::automatic}, p).kernel;
    };
    if (!VKGEMM_EXPECT_COOPMAT) return;  // this build has no KHR kernels
    CHECK(kernel_of(layer(2073600, 64, 64)) == Kernel::thin);
    CHECK(kernel_of(layer(2073600, 4, 64)) == Kernel::thin);
    CHECK(kernel_of(layer(1 << 18, 64, 16)) == Kernel::thin);
    CHECK(kernel_of(layer((1 << 18) - 1, 64, 64)) != Kernel::thin);  // too few rows
    CHECK(kernel_of(layer(2073600, 128, 64)) == Kernel::thin);  // 128 columns: one block, B from shared memory
    CHECK(kernel_of(layer(2073600, 96, 64)) == Kernel::thin);
    CHECK(kernel_of(layer(2073600, 129, 64)) != Kernel::thin);       // wider than 128
    CHECK(kernel_of(layer(2073600, 128, 64, DataType::f32)) != Kernel::thin);  // a 4-byte C: two blocks of 64
    CHECK(kernel_of(layer(2073600, 64, 64, DataType::f32)) == Kernel::thin);
    CHECK(kernel_of(layer(2073600, 64, 128)) == Kernel::thin);
    CHECK(kernel_of(layer(2073600, 128, 128)) != Kernel::thin);  // B 128 x 128 and the strips past 48 KB: two blocks
    CHECK(kernel_of(layer(2073600, 64, 129)) != Kernel::thin);       // deeper than 128
    // A fused activation that needs exp: thin for blocks of up to 4 fragments (64 columns) and for wider blocks
    // without padding (128 columns: 8 fragments) of a C other than bf16, another kernel for padded wide ones (96
    // columns in a block of 8) and a bf16 C's wide ones; from the call's descriptor (the whole plan) and from the
    // problem.
    const DeviceInfo with_bf16 = test::nvidia_bf16();
    const auto with_gelu = [&](uint32_t n, DataType type = DataType::f16) {
      const GemmDesc desc{.type = type, .c_type = type, .m = 2073600, .n = n, .k = 64,
                          .epilogue = {.bias = BiasAxis::per_column, .activation = Activation::gelu_tanh}};
      return detail::schedule_product(desc, {}, type == DataType::bf16 ? with_bf16 : d, table).kernel;
    };
    CHECK(with_gelu(96) != Kernel::thin);
    CHECK(with_gelu(112) != Kernel::thin);
    CHECK(with_gelu(128) == Kernel::thin);
    CHECK(with_gelu(128, DataType::bf16) != Kernel::thin);  // a bf16 C: wide blocks go to coopmat2
    CHECK(with_gelu(64, DataType::bf16) == Kernel::thin);
    CHECK(with_gelu(64) == Kernel::thin);
    CHECK(with_gelu(48) == Kernel::thin);
    kernels::Problem relu = layer(2073600, 96, 64);  // no flag: a ReLU or a bias alone keeps the thin kernel
    CHECK(kernel_of(relu) == Kernel::thin);
    relu.transcendental_epilogue = true;
    CHECK(kernel_of(relu) != Kernel::thin);
    kernels::Problem turned = layer(2073600, 64, 64);
    turned.trans_a = true, turned.lda = 2073600;
    CHECK(kernel_of(turned) != Kernel::thin);
    kernels::Problem acc16 = layer(2073600, 64, 64);
    acc16.types.f16_accumulate = true;
    CHECK(kernel_of(acc16) != Kernel::thin);
    // The plan: all of B (4 x 4 fragments) held, A in 16-byte loads, 4 workgroups a compute unit walking the
    // blocks.
    const kernels::KernelLaunch plan = kernels::plan(d, table, {.kernel = Kernel::automatic}, layer(2073600, 64, 64));
    CHECK(plan.main.shader == "thin_f16_f16");
    CHECK(plan.grid == std::array<uint32_t, 3>{132 * 4, 1, 1});
    CHECK(test::spec_constant(plan.main, "KF") == 4);
    CHECK(test::spec_constant(plan.main, "NF") == 4);
    CHECK(test::spec_constant(plan.main, "DIRECT_A") == 1);
    CHECK(test::spec_constant(plan.main, "RF") == 1);  // a strip of one fragment's rows for a 2-byte C, two for f32
    CHECK(test::spec_constant(plan.main, "PREFETCH") == 1);  // the next block's strip fetched before the multiplies
    const auto f32_c = kernels::plan(d, table, {.kernel = Kernel::thin}, layer(2073600, 64, 64, DataType::f32));
    CHECK(test::spec_constant(f32_c.main, "RF") == 2);
    CHECK(test::spec_constant(f32_c.main, "PREFETCH") == 1);
    CHECK(f32_c.main.tile == std::array<uint32_t, 2>{64, 128});
    CHECK(test::spec_constant(plan.main, "HOLD_B") == 1);  // 4 x 4 fragments of B fit the registers held
    // 128 columns over K 64: held, B's 16 fragments would cut them in two blocks (A read twice); read from
    // shared memory, one block of 8 fragments.
    const auto wide = kernels::plan(d, table, {.kernel = Kernel::thin}, layer(2073600, 128, 64));
    CHECK(test::spec_constant(wide.main, "HOLD_B") == 0);
    CHECK(test::spec_constant(wide.main, "NF") == 8);
    CHECK(wide.grid[1] == 1);
    kernels::Problem odd = layer(2073600, 64, 60);  // K not whole fragments: staged
    CHECK(test::spec_constant(kernels::plan(d, table, {.kernel = Kernel::thin}, odd).main, "DIRECT_A") == 0);
  }
}
