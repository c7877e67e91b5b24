// The door (engine/src/engine/door.cpp): a call is checked once where it enters the engine (its
// description, its run options, the device's support, its buffers), and the layers inside trust it. The
// engine counts its checks per thread (kernels/check_count.hpp); these cases hold each count to one for a
// product planned afresh, and for a call with the key of one that passed (the plan cache's memo) to the
// memo's one count and the buffers' check.
#include <doctest/doctest.h>

#include <cstddef>
#include <vector>

#include "kernels/check_count.hpp"
#include "kernels/registry.hpp"
#include "support.hpp"
#include "vkgemm/plan.hpp"

using namespace vkgemm;
using detail::Checked;
using detail::CheckCounts;

namespace {

// What `f` checks on this thread.
template <typename F>
CheckCounts counted(F&& f) {
  detail::check_counts() = {};
  f();
  return detail::check_counts();
}

uint64_t times(const CheckCounts& counts, Checked what) { return counts[static_cast<size_t>(what)]; }

// Each check of a call once: the description, the run options, the device's support, and the buffers where
// the caller brings them (`buffers`); a blocked configuration chosen once where the product is planned
// (`planned`) and checked against the device at most once (the caller's, or the fallback's).
void once_each(const CheckCounts& c, bool buffers, bool planned) {
  CHECK(times(c, Checked::desc) == 1);
  CHECK(times(c, Checked::run) == 1);
  CHECK(times(c, Checked::support) == 1);
  CHECK(times(c, Checked::admitted_before) == 0);
  CHECK(times(c, Checked::buffers) == (buffers ? 1 : 0));
  CHECK(times(c, Checked::blocked_choice) == (planned ? 1 : 0));
  CHECK(times(c, Checked::blocked_config) <= 1);
}

// A call with the key of one that passed: the memo once in place of desc, run and support, nothing chosen
// or checked again but the buffers (`buffers`).
void admitted_before(const CheckCounts& c, bool buffers) {
  CHECK(times(c, Checked::admitted_before) == 1);
  CHECK(times(c, Checked::desc) == 0);
  CHECK(times(c, Checked::run) == 0);
  CHECK(times(c, Checked::support) == 0);
  CHECK(times(c, Checked::buffers) == (buffers ? 1 : 0));
  CHECK(times(c, Checked::blocked_choice) == 0);
  CHECK(times(c, Checked::blocked_config) == 0);
}

}  // namespace

TEST_SUITE("door") {
  TEST_CASE("the first f32 product from host memory checks each thing once, and a second only the memo") {
    // Shapes no other case runs: the engine's plan cache misses, and the product is planned.
    Engine& e = test::engine();
    const GemmDesc d{.m = 37, .n = 29, .k = 41};
    std::vector<float> a(64 * 64, 1.0f), b(64 * 64, 2.0f), c(64 * 64, -1.0f);  // room for both products
    const GemmOptions blocked{.kernel = Kernel::blocked};
    once_each(counted([&] { e.gemm(d, a.data(), b.data(), c.data(), blocked); }), false, true);
    CHECK(c[0] == 82.0f);
    admitted_before(counted([&] { e.gemm(d, a.data(), b.data(), c.data(), blocked); }), false);
    CHECK(c[0] == 82.0f);
    // auto: the blocked kernel's configuration (where auto takes it) is chosen once too.
    const GemmDesc other{.m = 39, .n = 31, .k = 43};
    const CheckCounts automatic = counted([&] { e.gemm(other, a.data(), b.data(), c.data()); });
    CHECK(times(automatic, Checked::desc) == 1);
    CHECK(times(automatic, Checked::run) == 1);
    CHECK(times(automatic, Checked::support) == 1);
    CHECK(times(automatic, Checked::blocked_choice) <= 1);
    CHECK(times(automatic, Checked::blocked_config) <= 1);
  }

  TEST_CASE("a product on engine buffers, with the caller's blocked configuration, checks each thing once") {
    Engine& e = test::engine();
    const GemmDesc d{.m = 35, .n = 27, .k = 45};
    Buffer a = e.create_buffer(35 * 45 * 4), b = e.create_buffer(45 * 27 * 4), c = e.create_buffer(35 * 27 * 4);
    const GemmOptions options{.kernel = Kernel::blocked,
                              .blocked = kernels::fallback_blocked_config(DataType::f32)};
    const CheckCounts first = counted([&] { e.gemm(d, BufferOffset{&a}, BufferOffset{&b}, BufferOffset{&c}, options); });
    once_each(first, true, true);
    CHECK(times(first, Checked::blocked_config) == 1);  // the caller's, at the door
    admitted_before(counted([&] { e.gemm(d, BufferOffset{&a}, BufferOffset{&b}, BufferOffset{&c}, options); }), true);
    // Another offset class: another key, so the door's checks again (A and B are read from 16 bytes in).
    Buffer a2 = e.create_buffer(35 * 45 * 4 + 16), b2 = e.create_buffer(45 * 27 * 4 + 16);
    const CheckCounts moved =
        counted([&] { e.gemm(d, BufferOffset{&a2, 16}, BufferOffset{&b2, 16}, BufferOffset{&c}, options); });
    once_each(moved, true, true);
  }

  TEST_CASE("Engine::plan checks the call once; running the plan checks its operands, not the call") {
    Engine& e = test::engine();
    const GemmDesc d{.m = 33, .n = 25, .k = 47};
    once_each(counted([&] { (void)e.plan(d, GemmPlanOptions{.gemm = {.kernel = Kernel::blocked}}); }), false, true);
    GemmPlan plan = e.plan(d, GemmPlanOptions{.gemm = {.kernel = Kernel::blocked}});
    Buffer a = e.create_buffer(33 * 47 * 4), b = e.create_buffer(47 * 25 * 4), c = e.create_buffer(33 * 25 * 4);
    const CheckCounts run = counted([&] { e.run(plan, {&a}, {&b}, {&c}); });
    CHECK(run == CheckCounts{});
  }

  TEST_CASE("an empty product's kernel is checked at the door, before the early return of Engine::plan") {
    Engine& e = test::engine();
    if (e.device().coopmat2) {
      test::skip("the device has coopmat2: nothing to refuse");
      return;
    }
    CHECK_THROWS_AS((void)e.plan({.m = 0, .n = 4, .k = 4}, GemmPlanOptions{.gemm = {.kernel = Kernel::coopmat2}}),
                    Error);
  }
}
