// The plan cache (engine/src/engine/plan_cache.hpp) and the wait (GemmOptions::wait, vk/submitter.hpp): a
// repeated call finds its plan and the door's memo, and computes the right product on other buffers; a
// changed field, offset class or tuning table misses; the cache keeps at most PlanCache::kCapacity plans, the
// least recently used going first; a wait polls within its bound, then sleeps.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdlib>
#include <vector>

#include "engine/engine_impl.hpp"
#include "engine/environment.hpp"
#include "kernels/check_count.hpp"
#include "support.hpp"

using namespace vkgemm;
using detail::Checked;
using detail::PlanCacheStats;

namespace {

detail::EngineImpl& impl(Engine& e) { return detail::Access::impl(e); }
PlanCacheStats stats(Engine& e) { return impl(e).plan_cache.stats(); }
uint64_t counted(Checked what) { return detail::check_counts()[static_cast<size_t>(what)]; }

// One checked product (support.hpp: poisoned C, guards, the CPU reference) on fresh buffers; what the cache
// and the door did for it.
struct Outcome {
  PlanCacheStats before, after;
};
Outcome checked_call(Engine& e, const GemmDesc& d, const GemmOptions& o, std::mt19937_64& rng, uint32_t skew = 3) {
  Outcome out;
  out.before = stats(e);
  const test::ProductCheck r = test::check_gemm_call(e, d, o, rng, skew);
  out.after = stats(e);
  CHECK_MESSAGE(r.passed, r.detail);
  return out;
}
bool hit(const Outcome& o) { return o.after.hits == o.before.hits + 1 && o.after.misses == o.before.misses; }
bool miss(const Outcome& o) { return o.after.misses == o.before.misses + 1 && o.after.hits == o.before.hits; }

}  // namespace

TEST_SUITE("plan cache") {
  TEST_CASE("every field of the description and the options, and the offset class, changes the key") {
    const uint64_t granularity = 64;
    const auto key = [&](const GemmDesc& d, const GemmOptions& o, uint64_t a_offset = 0, uint64_t bias_offset = 0) {
      const uint64_t offsets[detail::kOperands] = {a_offset, 0, 0, bias_offset};
      return detail::call_key(detail::Door::buffers, d, o, offsets, granularity);
    };
    const GemmDesc d0{.m = 8, .n = 8, .k = 8};
    const GemmOptions o0;
    const detail::CallKey base = key(d0, o0);
    CHECK(base.valid());
    CHECK(key(d0, o0) == base);
    CHECK(key(d0, o0, 3 * granularity) == base);  // moved by whole granules
    CHECK_FALSE(key(d0, o0, 16) == base);
    CHECK_FALSE(key(d0, o0, 0, 16) == base);  // the bias's offset class
    const uint64_t zero[detail::kOperands] = {};
    CHECK_FALSE(detail::call_key(detail::Door::host, d0, o0, zero, granularity) == base);
    using Change = void (*)(GemmDesc&, GemmOptions&);
    const Change changes[] = {
        [](GemmDesc& d, GemmOptions&) { d.type = DataType::f64; },
        [](GemmDesc& d, GemmOptions&) { d.c_type = DataType::f32; },  // the default, but given
        [](GemmDesc& d, GemmOptions&) { d.layout = Layout::col_major; },
        [](GemmDesc& d, GemmOptions&) { d.op_a = Op::t; },
        [](GemmDesc& d, GemmOptions&) { d.op_b = Op::t; },
        [](GemmDesc& d, GemmOptions&) { d.m = 9; },
        [](GemmDesc& d, GemmOptions&) { d.n = 9; },
        [](GemmDesc& d, GemmOptions&) { d.k = 9; },
        [](GemmDesc& d, GemmOptions&) { d.lda = 8; },
        [](GemmDesc& d, GemmOptions&) { d.ldb = 8; },
        [](GemmDesc& d, GemmOptions&) { d.ldc = 8; },
        [](GemmDesc& d, GemmOptions&) { d.alpha = -1.0; },
        [](GemmDesc& d, GemmOptions&) { d.beta = 1.0; },
        [](GemmDesc& d, GemmOptions&) { d.batch = 2; },
        [](GemmDesc& d, GemmOptions&) { d.stride_a = 64; },
        [](GemmDesc& d, GemmOptions&) { d.stride_b = 0; },
        [](GemmDesc& d, GemmOptions&) { d.stride_c = 64; },
        [](GemmDesc& d, GemmOptions&) { d.epilogue.bias = BiasAxis::per_row; },
        [](GemmDesc& d, GemmOptions&) { d.epilogue.bias_type = DataType::f16; },
        [](GemmDesc& d, GemmOptions&) { d.epilogue.activation = Activation::relu; },
        [](GemmDesc& d, GemmOptions&) { d.epilogue.slope = 0.5f; },
        [](GemmDesc& d, GemmOptions&) { d.epilogue.lo = -1.0f; },
        [](GemmDesc& d, GemmOptions&) { d.epilogue.hi = 1.0f; },
        [](GemmDesc&, GemmOptions& o) { o.kernel = Kernel::tiled; },
        [](GemmDesc&, GemmOptions& o) { o.tile = 8; },
        [](GemmDesc&, GemmOptions& o) { o.blocked.split_k = 2; },
        [](GemmDesc&, GemmOptions& o) { o.blocked.group_m = 4; },
        [](GemmDesc&, GemmOptions& o) { o.repeat = 2; },
        [](GemmDesc&, GemmOptions& o) { o.warmup = 1; },
        [](GemmDesc&, GemmOptions& o) { o.timestamps = false; },
        [](GemmDesc&, GemmOptions& o) { o.f16_accumulate = true; },
        [](GemmDesc&, GemmOptions& o) { o.max_k_per_submission = 4; },
        [](GemmDesc&, GemmOptions& o) { o.wait = WaitMode::sleep; },
        [](GemmDesc&, GemmOptions& o) { o.precision = Precision::emulated; },
        [](GemmDesc&, GemmOptions& o) { o.emulation_moduli = 9; },
    };
    for (size_t i = 0; i < std::size(changes); ++i) {
      CAPTURE(i);
      GemmDesc d = d0;
      GemmOptions o = o0;
      changes[i](d, o);
      CHECK_FALSE(key(d, o) == base);
    }
  }

  TEST_CASE("a repeated call finds its plan and the door's memo, and is right on other buffers") {
    Engine& e = test::engine();
    auto rng = test::case_rng(test::current_case_name());
    const GemmDesc d{.m = 19, .n = 23, .k = 17, .alpha = 0.5, .beta = 0.25};
    Buffer a = e.create_buffer(19 * 17 * 4), b = e.create_buffer(17 * 23 * 4), c = e.create_buffer(19 * 23 * 4);
    for (const Kernel kernel : {Kernel::blocked, Kernel::automatic}) {
      CAPTURE(to_string(kernel));
      const GemmOptions o{.kernel = kernel, .timestamps = false};
      // Checked against the CPU reference (whose own checks of the description count too: not counted here).
      CHECK(miss(checked_call(e, d, o, rng)));
      // The same call on fresh buffers (fresh random A, B, C): the plan and the door's memo.
      const Outcome second = checked_call(e, d, o, rng);
      CHECK(hit(second));
      CHECK(second.after.admitted_hits == second.before.admitted_hits + 1);
      // What the door does, on engine buffers at offset 0 (another offset class: a plan of its own first).
      const auto call = [&] { e.gemm(d, BufferOffset{&a}, BufferOffset{&b}, BufferOffset{&c}, o); };
      detail::check_counts() = {};
      call();
      CHECK(counted(Checked::support) == 1);
      CHECK(counted(Checked::admitted_before) == 0);
      detail::check_counts() = {};
      call();
      CHECK(counted(Checked::admitted_before) == 1);
      CHECK(counted(Checked::desc) == 0);
      CHECK(counted(Checked::run) == 0);
      CHECK(counted(Checked::support) == 0);
      CHECK(counted(Checked::blocked_choice) == 0);
      CHECK(counted(Checked::buffers) == 1);  // the buffers are the call's own: checked every call
    }
  }

  TEST_CASE("a changed field, options or offset class is another key; an offset moved by whole granules is not") {
    Engine& e = test::engine();
    auto rng = test::case_rng(test::current_case_name());
    const GemmDesc d{.m = 21, .n = 13, .k = 11};
    const GemmOptions o{.kernel = Kernel::tiled, .tile = 8};
    checked_call(e, d, o, rng);
    CHECK(hit(checked_call(e, d, o, rng)));
    GemmDesc alpha = d;
    alpha.alpha = 2.0;
    CHECK(miss(checked_call(e, alpha, o, rng)));
    GemmDesc transposed = d;
    transposed.op_b = Op::t;
    CHECK(miss(checked_call(e, transposed, o, rng)));
    CHECK(miss(checked_call(e, d, GemmOptions{.kernel = Kernel::tiled, .tile = 4}, rng)));
    CHECK(miss(checked_call(e, d, GemmOptions{.kernel = Kernel::tiled, .tile = 8, .repeat = 2}, rng)));
    CHECK(miss(checked_call(e, d, GemmOptions{.kernel = Kernel::tiled, .tile = 8, .wait = WaitMode::sleep}, rng)));
    // Offsets: 3 elements past an aligned start (check_gemm_call's skew), then 2, then 3 again.
    CHECK(miss(checked_call(e, d, o, rng, 2)));
    CHECK(hit(checked_call(e, d, o, rng, 3)));
  }

  TEST_CASE("a refused call is never cached, and a hostile wait mode is refused at the door") {
    Engine& e = test::engine();
    auto rng = test::case_rng(test::current_case_name());
    const GemmDesc d{.m = 9, .n = 7, .k = 5};
    GemmOptions bad{.kernel = Kernel::tiled, .tile = 4};
    bad.wait = static_cast<WaitMode>(7);
    const std::vector<float> a(9 * 5, 1.0f), b(5 * 7, 1.0f);
    std::vector<float> c(9 * 7, 0.0f);
    for (int i = 0; i < 2; ++i) {  // the second time too: nothing was cached for it
      test::expect_error([&] { e.gemm(d, a.data(), b.data(), c.data(), bad); }, ErrorCode::invalid_argument,
                         "GemmOptions::wait 7");
    }
    GemmOptions good = bad;
    good.wait = WaitMode::spin;
    checked_call(e, d, good, rng);
    CHECK(hit(checked_call(e, d, good, rng)));
  }

  TEST_CASE("a K chunk's plan is cached but not admitted: a call with its key goes through the door once") {
    Engine& e = test::engine();
    const GemmDesc whole{.m = 8, .n = 8, .k = 32};
    const GemmOptions o{.kernel = Kernel::tiled, .tile = 4, .max_k_per_submission = 16};
    std::vector<float> a(8 * 32, 1.0f), b(32 * 8, 1.0f), c(8 * 8, 0.0f);
    e.gemm(whole, a.data(), b.data(), c.data(), o);  // two chunks of K 16, each planned and cached
    CHECK(c[0] == 32.0f);
    // The first chunk as the engine plans it (gemm.cpp, submit_k_chunks): the call's lds and strides given.
    GemmDesc chunk = whole;
    chunk.k = 16;
    chunk.lda = operand_extent(whole, 'A').ld, chunk.ldb = operand_extent(whole, 'B').ld;
    chunk.ldc = operand_extent(whole, 'C').ld;
    chunk.stride_a = operand_extent(whole, 'A').stride, chunk.stride_b = operand_extent(whole, 'B').stride;
    chunk.stride_c = operand_extent(whole, 'C').stride;
    // On engine buffers at offset 0, as the chunks were planned (their door: buffers, whatever the call's).
    Buffer ba = e.create_buffer(8 * 32 * 4), bb = e.create_buffer(32 * 8 * 4), bc = e.create_buffer(8 * 8 * 4);
    e.write(ba, 0, a.data(), 8 * 32 * 4);
    e.write(bb, 0, b.data(), 32 * 8 * 4);
    for (const bool first : {true, false}) {
      CAPTURE(first);
      e.fill(bc, 0, 8 * 8 * 4, 0x7fc00000u);  // NaN: C must be written
      const PlanCacheStats before = stats(e);
      detail::check_counts() = {};
      e.gemm(chunk, BufferOffset{&ba}, BufferOffset{&bb}, BufferOffset{&bc}, o);
      const PlanCacheStats after = stats(e);
      e.read(bc, 0, c.data(), 8 * 8 * 4);
      CHECK(c[0] == 16.0f);  // A's first 16 columns of each row of 32 times B's first 16 rows: a sum of 16
      CHECK(c[63] == 16.0f);
      CHECK(after.hits == before.hits + 1);  // the chunk's plan
      CHECK(after.admitted_hits == before.admitted_hits + (first ? 0 : 1));
      CHECK(counted(Checked::support) == (first ? 1 : 0));
      CHECK(counted(Checked::admitted_before) == (first ? 0 : 1));
    }
  }

  TEST_CASE("a change to the tuning table empties the cache, and the next call is checked at the door again") {
    // An engine of its own: its table is changed here.
    std::unique_ptr<Engine> own = test::make_engine();
    Engine& e = *own;
    auto rng = test::case_rng(test::current_case_name());
    const GemmDesc d{.m = 27, .n = 31, .k = 29};
    const GemmOptions o{.kernel = Kernel::blocked};
    checked_call(e, d, o, rng);
    CHECK(hit(checked_call(e, d, o, rng)));
    impl(e).tuning.update(e.device(), {});  // no entry changes, but the table's generation does
    const Outcome after = checked_call(e, d, o, rng);
    CHECK(miss(after));
    CHECK(after.after.invalidations == after.before.invalidations + 1);
    CHECK(after.after.size == 1);
    CHECK(hit(checked_call(e, d, o, rng)));
    // The door's checks again after the change, on host memory (a key of its own: made, then the change).
    std::vector<float> a(27 * 29, 1.0f), b(29 * 31, 1.0f), c(27 * 31, 0.0f);
    e.gemm(d, a.data(), b.data(), c.data(), o);
    impl(e).tuning.update(e.device(), {});
    detail::check_counts() = {};
    e.gemm(d, a.data(), b.data(), c.data(), o);
    CHECK(counted(Checked::support) == 1);
    CHECK(counted(Checked::admitted_before) == 0);
    CHECK(c[0] == 29.0f);
  }

  TEST_CASE("the cache keeps at most kCapacity plans, the least recently used going first") {
    Engine& e = test::engine();
    constexpr size_t capacity = detail::PlanCache::kCapacity;
    const GemmOptions o{.kernel = Kernel::naive, .tile = 4, .timestamps = false};
    // Host-memory products of kCapacity + 2 shapes (m = 1, 2, ...), with m = 1 used again before the last two
    // push the oldest out: m = 2 and m = 3 go, m = 1 stays.
    std::vector<float> a(80 * 3, 1.0f), b(3 * 2, 1.0f), c(80 * 2, 0.0f);
    const auto call = [&](int64_t m) {
      const GemmDesc d{.m = m, .n = 2, .k = 3};
      e.gemm(d, a.data(), b.data(), c.data(), o);
      CHECK(c[size_t(m - 1) * 2] == 3.0f);  // a row of ones times a column of ones, 3 long
    };
    const PlanCacheStats start = stats(e);
    for (int64_t m = 1; m <= int64_t(capacity); ++m) call(m);
    CHECK(stats(e).size == capacity);
    call(1);  // a hit: now the most recent
    call(int64_t(capacity) + 1);
    call(int64_t(capacity) + 2);
    PlanCacheStats now = stats(e);
    CHECK(now.size == capacity);
    CHECK(now.evictions >= start.evictions + 2);
    const uint64_t hits = now.hits, misses = now.misses;
    call(1);
    CHECK(stats(e).hits == hits + 1);
    call(2);
    CHECK(stats(e).misses == misses + 1);
    CHECK(stats(e).size == capacity);
  }
}

TEST_SUITE("wait") {
  TEST_CASE("the bound a wait polls for, by mode, device and the plan's previous time") {
    using us = std::chrono::microseconds;
    using vk::wait_spin;
    const us bound{kWaitSpinMicroseconds}, none{0};
    const auto gpu = DeviceType::discrete_gpu, cpu = DeviceType::cpu;
    CHECK(wait_spin(WaitMode::spin, WaitMode::automatic, cpu) == bound);
    CHECK(wait_spin(WaitMode::sleep, WaitMode::spin, gpu) == none);
    CHECK(wait_spin(WaitMode::automatic, WaitMode::automatic, gpu) == bound);         // a first submission
    CHECK(wait_spin(WaitMode::automatic, WaitMode::automatic, gpu, us{150}) == bound);
    CHECK(wait_spin(WaitMode::automatic, WaitMode::automatic, gpu, us{250}) == none);  // longer than the bound
    CHECK(wait_spin(WaitMode::automatic, WaitMode::automatic, cpu) == none);
    CHECK(wait_spin(WaitMode::automatic, WaitMode::spin, cpu, us{5000}) == bound);    // VKGEMM_WAIT=spin
    CHECK(wait_spin(WaitMode::automatic, WaitMode::sleep, gpu) == none);              // VKGEMM_WAIT=sleep
  }

  TEST_CASE("VKGEMM_WAIT names the engine's default, and another value is refused") {
    const char* before = std::getenv("VKGEMM_WAIT");
    const std::string saved = before ? before : "";
    ::setenv("VKGEMM_WAIT", "spin", 1);
    CHECK(detail::environment_wait_mode() == WaitMode::spin);
    ::setenv("VKGEMM_WAIT", "sleep", 1);
    CHECK(detail::environment_wait_mode() == WaitMode::sleep);
    ::setenv("VKGEMM_WAIT", "fast", 1);
    test::expect_error([] { (void)detail::environment_wait_mode(); }, ErrorCode::invalid_argument, "VKGEMM_WAIT=fast");
    ::unsetenv("VKGEMM_WAIT");
    CHECK(detail::environment_wait_mode() == WaitMode::automatic);
    if (before) ::setenv("VKGEMM_WAIT", saved.c_str(), 1);
  }

  TEST_CASE("spin polls no longer than its bound on a product that takes longer, then sleeps; sleep never polls") {
    Engine& e = test::engine();
    // Tens of milliseconds on lavapipe, far past the bound; on a GPU it may finish sooner (then nothing to hold).
    constexpr uint32_t n = 128;
    Buffer a = e.create_buffer(n * n * 4), b = e.create_buffer(n * n * 4), c = e.create_buffer(n * n * 4);
    for (Buffer* x : {&a, &b, &c}) e.fill(*x, 0, n * n * 4, 0x3f800000u);  // 1.0f
    const MatrixRef ra{&a, 0, n, n}, rb{&b, 0, n, n}, rc{&c, 0, n, n};
    const vk::Submitter& submitter = *impl(e).submitter;
    const auto bound = std::chrono::microseconds{kWaitSpinMicroseconds};
    GemmOptions spin{.kernel = Kernel::tiled, .tile = 16, .wait = WaitMode::spin};
    e.gemm(ra, rb, rc, spin);  // its plan made (pipelines compiled) before the call measured
    // Only the call's own wait counts: an earlier submission whose slot it reuses is complete already.
    const vk::WaitStats before = submitter.wait_stats();
    const GemmTiming timing = e.gemm(ra, rb, rc, spin);
    const vk::WaitStats after = submitter.wait_stats();
    const auto polled = std::chrono::duration_cast<std::chrono::microseconds>(after.last_poll);
    const auto took = std::chrono::microseconds(int64_t(timing.submit_wait_ms * 1e3));
    MESSAGE("spin: polled for ", polled.count(), " us (bound ", bound.count(), " us) of a product of ", took.count(),
            " us");
    std::vector<float> out(n * n);
    e.read(c, 0, out.data(), n * n * 4);
    CHECK(out[0] == float(n));  // ones times ones
    // A driver may run the work inside vkQueueSubmit (lavapipe under GPU-assisted validation does): then the
    // wait finds it complete and neither polls nor sleeps, and there is nothing to judge.
    if (after.slept + after.woke_polling == before.slept + before.woke_polling) {
      test::skip("the driver completed the product inside its submission: no wait to judge");
      return;
    }
    // One poll past the bound, on a loaded machine: a product shorter than that cannot show the bound held.
    const auto slack = std::chrono::milliseconds(10);
    if (took < bound + 2 * slack) {
      test::skip("the product took less than the bound and its slack here: nothing to show");
      return;
    }
    CHECK(polled < bound + slack);
    CHECK(polled >= bound);
    CHECK(after.slept == before.slept + 1);
    CHECK(after.woke_polling == before.woke_polling);
    GemmOptions sleep = spin;
    sleep.wait = WaitMode::sleep;
    e.gemm(ra, rb, rc, sleep);  // a plan of its own (the wait is part of the key): made, then the call measured
    const vk::WaitStats unmeasured = submitter.wait_stats();
    e.gemm(ra, rb, rc, sleep);
    const vk::WaitStats slept = submitter.wait_stats();
    CHECK(slept.slept == unmeasured.slept + 1);
    CHECK(slept.woke_polling == unmeasured.woke_polling);
    CHECK(slept.last_poll < std::chrono::microseconds(100));  // the bound is 0: not one poll
  }
}
