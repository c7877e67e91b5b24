// Copies beside the products (engine/host_panels.hpp, docs/design/host-copies.md "Panels"): the rule that
// cuts a host-memory product, the copies of a panel's lines in every layout and op, and products cut into
// panels on lavapipe (VKGEMM_TEST_HOST_PANELS cuts small ones; the import knob imports small operands, the
// staging knob stages them through host threads):
// every layout and op pair, leading dimensions with gaps, beta, a bias, skewed pointers, inputs unchanged,
// C poisoned, guard bytes untouched.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "engine/engine_impl.hpp"
#include "engine/environment.hpp"
#include "app_vulkan.hpp"
#include "engine/host_panels.hpp"
#include "guarded.hpp"
#include "support.hpp"
#include "vkgemm/reference.hpp"
#include "vkgemm/vulkan.hpp"

using namespace vkgemm;

namespace {

constexpr uint64_t kLines = 8;  // the knob's panel: 37 rows are 5 panels, the last of 5

// An engine whose products are cut into panels of kLines wherever the rule allows, the caller's pages
// imported whatever their size.
std::unique_ptr<Engine> panel_engine() { return test::with_panels(kLines, [] { return test::make_engine(); }); }

uint64_t panels_run(Engine& e) { return detail::Access::impl(e).host_copies->counts().panels; }

const char* name(Layout l) { return l == Layout::row_major ? "row-major" : "column-major"; }
const char* name(Op op) { return op == Op::n ? "n" : "t"; }

GemmDesc square(int64_t size, DataType type = DataType::f32) {
  GemmDesc d;
  d.type = type;
  d.m = d.n = d.k = size;
  return d;
}

// The storage offsets of every element of `which` ('A', 'B', 'C') seen along `axis`, and their line.
std::map<uint64_t, uint64_t> element_lines(const GemmDesc& d, char which, char axis) {
  const detail::LineView v = detail::line_view(d, which, axis);
  const uint64_t lines = which == 'C' ? uint64_t(axis == 'M' ? d.m : d.n) : uint64_t(which == 'A' ? d.m : d.n);
  std::map<uint64_t, uint64_t> out;
  for (uint64_t r = 0; r < lines; ++r) {
    for (uint64_t i = 0; i < v.inner; ++i) out[r * v.line_step + i * v.inner_step] = r;
  }
  return out;
}

// Products cut into panels of kLines on `e`, both layouts, every op pair, beta 0 and not, gaps between lines:
// each against the reference, inputs unchanged, guard bytes intact. Staged panels cut only where the split
// operand's lines are contiguous (row-major op(A) = A, column-major op(B) = B); the others run whole.
void panel_grid(Engine& e, bool staged, std::mt19937_64& rng) {
  // 37 rows or 29 columns: 5 or 4 panels of 8, the last shorter.
  const GemmDesc shape{.m = 37, .n = 29, .k = 23, .lda = 41, .ldb = 43, .ldc = 47};
  test::each_layout_op_beta(shape, [&](const GemmDesc& d) {
    const bool cut = !staged || (d.layout == Layout::row_major ? d.op_a : d.op_b) == Op::n;
    const uint64_t before = panels_run(e);
    const test::GuardedHostRun run = test::guarded_host_gemm(e, d, rng);
    CHECK(panels_run(e) == before + (cut ? 1 : 0));
    CHECK((run.timing.config.find("panels of 8") != std::string::npos) == cut);
    CHECK((run.timing.config.find("staged by 3 host threads") != std::string::npos) == (cut && staged));
    CHECK(run.a_unchanged);
    CHECK(run.b_unchanged);
    for (const bool intact : run.guards_intact) CHECK(intact);
    const Comparison& r = run.result;
    CHECK_MESSAGE(r.passed, fmt::format("{} elements off, the first at {}", r.bad_elements, r.first_bad));
  });
}

}  // namespace

TEST_SUITE("host panels") {
  TEST_CASE("the rule: products large enough to hide their copies, cut in whole tiles, along C's contiguous lines") {
    const auto cut = [&](const GemmDesc& d, bool bus = true, uint64_t forced = 0, bool chunked = false,
                         const GemmOptions& o = GemmOptions{}) { return detail::panel_cut(d, o, chunked, bus, forced); };
    detail::PanelCut c = cut(square(4096));  // 2048 rows x 4096 columns: kPanelMinOutputs a panel
    CHECK(c.axis == 'M');
    CHECK(c.lines == 2048);
    CHECK(c.count == 2);
    c = cut(square(8192));  // 8 panels of 1024 rows (8M outputs each)
    CHECK(c.lines == 1024);
    CHECK(c.count == 8);
    c = cut(square(16384, DataType::f64));  // at most kMaxPanels: 2048 rows
    CHECK(c.lines == 2048);
    CHECK(c.count == 8);
    GemmDesc col = square(8192);
    col.layout = Layout::col_major;
    CHECK(cut(col).axis == 'N');  // C's columns are its contiguous lines
    GemmDesc tall = square(8192);
    tall.m = 20000, tall.n = 1000;  // 8389 rows a panel, rounded up to 8448: 3 panels
    c = cut(tall);
    CHECK(c.lines == 8448);
    CHECK(c.count == 3);
    CHECK(cut(square(2048)).count == 0);  // 4M outputs: one panel's worth
    CHECK(cut(square(4096), false).count == 0);  // no bus: the storage is the host's
    GemmDesc batched = square(4096);
    batched.batch = 2;
    CHECK(cut(batched).count == 0);
    GemmOptions timed;
    timed.repeat = 3;
    CHECK(cut(square(4096), true, 0, false, timed).count == 0);
    CHECK(cut(square(4096), true, 0, true).count == 0);  // K chunks: submissions of their own
    GemmDesc no_ab = square(4096);
    no_ab.alpha = 0.0;
    CHECK(cut(no_ab).count == 0);  // nothing of A or B is read
    GemmDesc row_bias = square(4096);
    row_bias.epilogue.bias = BiasAxis::per_row;
    CHECK(cut(row_bias).count == 0);  // the bias along the cut
    row_bias.epilogue.bias = BiasAxis::per_column;
    CHECK(cut(row_bias).count == 2);  // the bias across it: every panel reads all of it
    GemmDesc small = square(20);
    c = cut(small, false, 7);  // the knob: 7 rows a panel whatever the size and the bus
    CHECK(c.lines == 7);
    CHECK(c.count == 3);
    CHECK(cut(small, false, 20).count == 0);  // one panel is no cut
    CHECK(cut(square(8192), true, detail::HostCopyKnobs::kNoPanels).count == 0);  // the knob's none
  }

  TEST_CASE("a panel's copies hold every element of its lines and none of another line, in every layout and op") {
    for (const Layout layout : {Layout::row_major, Layout::col_major}) {
      for (const Op op_a : {Op::n, Op::t}) {
        for (const Op op_b : {Op::n, Op::t}) {
          GemmDesc d;
          d.layout = layout, d.op_a = op_a, d.op_b = op_b;
          d.m = 13, d.n = 11, d.k = 7;
          d.lda = 17, d.ldb = 19, d.ldc = 23;  // gaps after every stored line
          for (const char axis : {'M', 'N'}) {
            for (const char which : {axis == 'M' ? 'A' : 'B', 'C'}) {
              INFO(fmt::format("{} op_a {} op_b {}, {} along {}", name(layout), name(op_a), name(op_b),
                               which, axis));
              const auto lines = element_lines(d, which, axis);
              const detail::LineView v = detail::line_view(d, which, axis);
              // No structured bindings below: clang 14 does not let doctest's message lambdas capture them.
              for (const auto& range : {std::pair<uint64_t, uint64_t>{0, 3}, {3, 8}, {8, axis == 'M' ? 13 : 11}}) {
                const uint64_t r0 = range.first, r1 = range.second;
                for (const bool to_host : {false, true}) {
                  const uint64_t es = 4, shift = 12;
                  std::map<uint64_t, int> covered;
                  for (const VkBufferCopy& region : detail::line_copies(v, r0, r1, es, shift, to_host)) {
                    const uint64_t device = to_host ? region.srcOffset : region.dstOffset;
                    const uint64_t host = to_host ? region.dstOffset : region.srcOffset;
                    CHECK(host == device + shift);  // the same offset, the import's shift apart
                    CHECK(device % es == 0);
                    CHECK(region.size % es == 0);
                    for (uint64_t x = device / es; x < (device + region.size) / es; ++x) ++covered[x];
                  }
                  for (const auto& element : lines) {
                    const uint64_t x = element.first, line = element.second;
                    const bool inside = line >= r0 && line < r1;
                    CHECK_MESSAGE(covered.count(x) == (inside ? 1u : 0u),
                                  fmt::format("element at {} of line {}, lines [{}, {})", x, line, r0, r1));
                  }
                  for (const auto& element : covered) CHECK(element.second == 1);  // no element copied twice
                }
              }
            }
          }
        }
      }
    }
  }

  TEST_CASE("products cut into panels: every layout and op pair, gaps, beta, skewed pointers, C's gaps unchanged") {
    auto rng = test::case_rng(test::current_case_name());
    for (const char* path : {"import", "staging"}) {
      if (path == std::string("import") && !test::engine().device().host_import) {
        MESSAGE("imported panels not run: this device has no VK_EXT_external_memory_host");
        continue;
      }
      CAPTURE(path);
      // Staged: a chunk of 1000 bytes, so that a panel's lines cross chunks and wrap the ring.
      if (path == std::string("staging")) setenv("VKGEMM_TEST_STAGING_CHUNK", "1000", 1);
      auto e = test::with_panels(kLines, [] { return test::make_engine(); }, path, 3);
      unsetenv("VKGEMM_TEST_STAGING_CHUNK");
      panel_grid(*e, path == std::string("staging"), rng);
    }
  }

  TEST_CASE("staged panels whose copies the host's threads share: every part of a copy lands, in both directions") {
    auto rng = test::case_rng(test::current_case_name());
    // 640 x 643 x 601 f32 in panels of 256 rows: 601 KiB of A and 643 KiB of C a full panel (2 parts each), the
    // whole B 1.5 MiB (3 parts): CopyWorkers splits a copy where it holds two of kMinPart, and none of these
    // sizes divides into whole cache lines.
    auto e = test::with_panels(256, [] { return test::make_engine(); }, "staging", 3);
    REQUIRE(detail::Access::impl(*e).host_copies->copy_threads() == 3);
    for (const double beta : {0.0, 0.5}) {
      GemmDesc d;
      d.m = 640, d.n = 643, d.k = 601, d.beta = beta;
      CAPTURE(beta);
      const uint64_t before = panels_run(*e);
      const test::GuardedHostRun run = test::guarded_host_gemm(*e, d, rng);
      CHECK(panels_run(*e) == before + 1);
      CHECK(run.timing.config.find("3 panels of 256 rows with their copies beside them (staged by 3 host threads)") !=
            std::string::npos);
      CHECK(run.a_unchanged);
      CHECK(run.b_unchanged);
      for (const bool intact : run.guards_intact) CHECK(intact);
      CHECK_MESSAGE(run.result.passed, fmt::format("{} elements off, the first at {}", run.result.bad_elements,
                                                   run.result.first_bad));
    }
  }

  TEST_CASE("cut into panels: f64, A and B one array, a bias across the cut with an activation; along it, not cut") {
    auto rng = test::case_rng(test::current_case_name());
    if (!test::engine().device().host_import) {
      test::skip("this device has no VK_EXT_external_memory_host: products are cut only where the pages import");
      return;
    }
    auto e = panel_engine();
    {
      GemmDesc d = square(30, DataType::f64);
      d.n = 21;
      std::vector<double> a(30 * 30), b(30 * 21), c(30 * 21, NAN);
      for (auto& x : a) x = double(test::random_floats(1, rng)[0]);
      for (auto& x : b) x = double(test::random_floats(1, rng)[0]) / 3.0;
      const uint64_t before = panels_run(*e);
      e->gemm(d, a.data(), b.data(), c.data());
      CHECK(panels_run(*e) == before + 1);
      const Comparison r = compare_with_reference(d, a.data(), b.data(), nullptr, c.data());
      CHECK_MESSAGE(r.passed, fmt::format("f64: {} elements off, the first at {}", r.bad_elements, r.first_bad));
    }
    {  // a @ a: A and B one host array, its pages imported twice at once (B whole, A panel by panel)
      GemmDesc d = square(33);
      const auto a = test::random_floats(33 * 33, rng);
      std::vector<float> c(33 * 33, NAN);
      const uint64_t before = panels_run(*e);
      e->gemm(d, a.data(), a.data(), c.data());
      CHECK(panels_run(*e) == before + 1);
      const Comparison r = compare_with_reference(d, a.data(), a.data(), nullptr, c.data());
      CHECK_MESSAGE(r.passed, fmt::format("a @ a: {} elements off, the first at {}", r.bad_elements, r.first_bad));
    }
    for (const BiasAxis axis : {BiasAxis::per_column, BiasAxis::per_row}) {
      GemmDesc d = square(26);
      d.n = 19;
      d.epilogue.bias = axis;
      d.epilogue.activation = Activation::relu;
      const auto a = test::random_floats(26 * 26, rng), b = test::random_floats(26 * 19, rng);
      const auto bias = test::random_floats(axis == BiasAxis::per_row ? 26 : 19, rng);
      std::vector<float> c(26 * 19, NAN);
      const uint64_t before = panels_run(*e);
      e->gemm(d, a.data(), b.data(), c.data(), GemmOptions{}, bias.data());
      // Row-major C is cut along its rows: a bias per row would need its own slice a panel.
      CHECK(panels_run(*e) == before + (axis == BiasAxis::per_column ? 1 : 0));
      const Comparison r = compare_with_reference(d, a.data(), b.data(), nullptr, c.data(), {}, bias.data());
      CHECK_MESSAGE(r.passed, fmt::format("bias {}: {} elements off, the first at {}", to_string(axis),
                                          r.bad_elements, r.first_bad));
    }
  }

  TEST_CASE("cut into panels on an application's device: its one queue, fences where it enabled no timeline") {
    auto rng = test::case_rng(test::current_case_name());
    for (const bool timeline : {false, true}) {  // AppVulkan's f16 flag: Vulkan 1.2 with timelineSemaphore
      CAPTURE(timeline);
      test::AppVulkan app(false, timeline, nullptr, true, true);
      Engine e = test::with_panels(kLines, [&] { return adopt_device(app.adopt_info()); });
      if (!e.device().host_import) {
        test::skip("the application's device has no VK_EXT_external_memory_host: nothing is cut there");
        return;
      }
      GemmDesc d;
      d.m = 37, d.n = 29, d.k = 23, d.ldc = 31, d.alpha = 0.5, d.beta = -1.0;
      const auto a = test::random_floats(37 * 23, rng), b = test::random_floats(23 * 29, rng);
      const auto c0 = test::random_floats(36 * 31 + 29, rng);
      auto c = c0;
      e.gemm(d, a.data(), b.data(), c.data());
      CHECK(panels_run(e) == 1);
      const Comparison r = compare_with_reference(d, a.data(), b.data(), c0.data(), c.data());
      CHECK_MESSAGE(r.passed, fmt::format("{} elements off, the first at {}", r.bad_elements, r.first_bad));
    }
  }

  TEST_CASE("the panel knob: none cuts nothing; it refuses what it does not know") {
    if (test::engine().device().host_import) {
      setenv("VKGEMM_TEST_HOST_COPIES", "import", 1);
      setenv("VKGEMM_TEST_HOST_PANELS", "none", 1);
      auto e = test::make_engine();
      unsetenv("VKGEMM_TEST_HOST_COPIES");
      std::vector<float> a(40 * 40, 0.5f), c(40 * 40, NAN);
      e->gemm(DataType::f32, 40, 40, 40, a.data(), a.data(), c.data());
      CHECK(panels_run(*e) == 0);
      CHECK(c[0] == 10.0f);
    }
    setenv("VKGEMM_TEST_NO_COPY_QUEUES", "1", 1);  // a device's copy queues off (lavapipe has none to turn off)
    DeviceInfo gpu;
    gpu.copy_queues = 2;
    detail::apply_test_limits(gpu);
    CHECK(gpu.copy_queues == 0);
    CHECK(test::make_engine()->device().copy_queues == 0);
    setenv("VKGEMM_TEST_NO_COPY_QUEUES", "yes", 1);
    test::expect_error([] { test::make_engine(); }, ErrorCode::invalid_argument, "VKGEMM_TEST_NO_COPY_QUEUES=yes");
    unsetenv("VKGEMM_TEST_NO_COPY_QUEUES");
    setenv("VKGEMM_TEST_HOST_PANELS", "0", 1);
    test::expect_error([] { test::make_engine(); }, ErrorCode::invalid_argument, "VKGEMM_TEST_HOST_PANELS=0");
    setenv("VKGEMM_TEST_HOST_PANELS", "8rows", 1);
    test::expect_error([] { test::make_engine(); }, ErrorCode::invalid_argument, "VKGEMM_TEST_HOST_PANELS=8rows");
    unsetenv("VKGEMM_TEST_HOST_PANELS");
  }
}
