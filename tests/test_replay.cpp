// An engine plan's command buffer, recorded once and submitted again (engine_impl.hpp, Replay; replay.cpp):
// a call on the buffers and offsets of the plan's last recording replays it unrecorded, any other records it
// first. The results are right either way (exact: small integers), a replay that ignored its operands would
// be caught by these checks (a mutation), the timestamps are the replayed submission's own, threads sharing
// one engine get their own products, and a replayed call allocates almost nothing.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "engine/engine_impl.hpp"
#include "new_counter.hpp"
#include "support.hpp"

using namespace vkgemm;

namespace {

constexpr int64_t kN = 16;                    // the smallest product the bench's latency section times
constexpr uint64_t kBytes = kN * kN * 4;      // one f32 operand
constexpr uint32_t kPoison = 0x7fc00000u;     // NaN: C must be written
const GemmDesc kDesc{.m = kN, .n = kN, .k = kN};

detail::EngineImpl& impl(Engine& e) { return detail::Access::impl(e); }
detail::ReplayStats replays(Engine& e) {
  std::lock_guard guard(impl(e).lock);
  return impl(e).replay_stats;
}

// Integers in [-8, 8]: every product of two and every sum of 16 of them is exact in f32, so a result is
// right or wrong bit for bit.
std::vector<float> integers(std::mt19937_64& rng) {
  std::uniform_int_distribution<int> d(-8, 8);
  std::vector<float> v(size_t(kN * kN));
  for (float& x : v) x = float(d(rng));
  return v;
}

// A and B on the host and in engine buffers, and C's buffer, with `c_room` bytes of room before C's
// granule-moved offsets.
struct Operands {
  std::vector<float> a, b;
  Buffer ba, bb, bc;
};
Operands make_operands(Engine& e, std::mt19937_64& rng, uint64_t c_room = 0) {
  Operands o{integers(rng), integers(rng), e.create_buffer(kBytes), e.create_buffer(kBytes),
             e.create_buffer(kBytes + c_room)};
  e.write(o.ba, 0, o.a.data(), kBytes);
  e.write(o.bb, 0, o.b.data(), kBytes);
  return o;
}
void new_inputs(Engine& e, Operands& o, std::mt19937_64& rng) {
  o.a = integers(rng), o.b = integers(rng);
  e.write(o.ba, 0, o.a.data(), kBytes);
  e.write(o.bb, 0, o.b.data(), kBytes);
}

// The exact C = A·B (row-major).
std::vector<float> reference(const std::vector<float>& a, const std::vector<float>& b) {
  std::vector<float> c(size_t(kN * kN));
  for (int64_t i = 0; i < kN; ++i) {
    for (int64_t j = 0; j < kN; ++j) {
      double sum = 0.0;
      for (int64_t k = 0; k < kN; ++k) sum += double(a[size_t(i * kN + k)]) * double(b[size_t(k * kN + j)]);
      c[size_t(i * kN + j)] = float(sum);
    }
  }
  return c;
}

// C poisoned, then C = A·B through Engine::gemm on the buffers, C at `c_offset`: whether C is exactly right.
bool product_right(Engine& e, Operands& o, const GemmOptions& options, uint64_t c_offset = 0) {
  e.fill(o.bc, c_offset, kBytes, kPoison);
  e.gemm(kDesc, BufferOffset{&o.ba}, BufferOffset{&o.bb}, BufferOffset{&o.bc, c_offset}, options);
  std::vector<float> c(size_t(kN * kN));
  e.read(o.bc, c_offset, c.data(), kBytes);
  return c == reference(o.a, o.b);
}

// What the next call did: +1 replayed or +1 recorded.
struct Counted {
  Engine& e;
  detail::ReplayStats before;
  explicit Counted(Engine& engine) : e(engine), before(replays(engine)) {}
  bool replayed() const {
    const detail::ReplayStats now = replays(e);
    return now.replayed == before.replayed + 1 && now.recorded == before.recorded;
  }
  bool recorded() const {
    const detail::ReplayStats now = replays(e);
    return now.recorded == before.recorded + 1 && now.replayed == before.replayed;
  }
};

// The whole of an engine buffer from `offset`, as the engine binds it.
VulkanBufferRange range_of(const Buffer& b, uint64_t offset = 0) {
  const detail::BufferImpl& i = *detail::Access::impl(b);
  return {i.alloc.buffer.get(), offset, i.alloc.size - offset};
}

}  // namespace

TEST_SUITE("replay") {
  TEST_CASE("a call on the last recording's buffers and offsets replays it; any other records it; all right") {
    Engine& e = test::engine();
    auto rng = test::case_rng(test::current_case_name());
    const uint64_t granule = std::max<uint64_t>(impl(e).physical.storage_offset_alignment, 64);
    for (const bool timestamps : {false, true}) {
      CAPTURE(timestamps);
      const GemmOptions o{.timestamps = timestamps};
      Operands one = make_operands(e, rng, granule), two = make_operands(e, rng);
      const auto next = [&](Operands& x, uint64_t c_offset = 0) {
        Counted counted(e);
        CHECK(product_right(e, x, o, c_offset));
        return counted;
      };
      next(one);  // the plan's first call (or a plan another case left: recorded either way, other buffers)
      CHECK(next(one).replayed());
      new_inputs(e, one, rng);  // the same buffers, new contents: the replay reads them
      CHECK(next(one).replayed());
      CHECK(next(two).recorded());
      CHECK(next(one).recorded());  // one recording per plan: the last operands'
      CHECK(next(one).replayed());
      CHECK(next(one, granule).recorded());  // C moved by a whole granule: the same plan, another binding
      CHECK(next(one, granule).replayed());
      CHECK(next(one).recorded());
    }
  }

  TEST_CASE("mutation: a replay that ignores its operands leaves a product on other buffers wrong") {
    Engine& e = test::engine();
    auto rng = test::case_rng(test::current_case_name());
    const GemmOptions o{.timestamps = false};
    Operands one = make_operands(e, rng), two = make_operands(e, rng);
    CHECK(product_right(e, one, o));
    impl(e).test_replay_any_operands = true;
    Counted counted(e);
    const bool right = product_right(e, two, o);  // replays one's recording: C of `two` stays poisoned
    impl(e).test_replay_any_operands = false;
    CHECK(counted.replayed());
    CHECK_FALSE(right);
    Counted again(e);
    CHECK(product_right(e, two, o));
    CHECK(again.recorded());
  }

  TEST_CASE("a buffer destroyed and another made in its place is another operand, whatever its handle") {
    Engine& e = test::engine();
    auto rng = test::case_rng(test::current_case_name());
    const GemmOptions o{.timestamps = false};
    Operands one = make_operands(e, rng);
    CHECK(product_right(e, one, o));
    CHECK(product_right(e, one, o));
    const VkBuffer old_c = range_of(one.bc).buffer;
    one.bc = Buffer();
    one.bc = e.create_buffer(kBytes);  // a driver may hand out the old handle again
    MESSAGE("C's new buffer ", std::string(range_of(one.bc).buffer == old_c ? "has" : "does not have"),
            " the old handle");
    Counted counted(e);
    CHECK(product_right(e, one, o));
    CHECK(counted.recorded());
  }

  TEST_CASE("host memory: repeated calls replay through the engine's host buffers, and a grown buffer records") {
    Engine& e = test::engine();
    auto rng = test::case_rng(test::current_case_name());
    const GemmOptions o{.timestamps = false};
    const auto host_call = [&](const GemmDesc& d, const std::vector<float>& a, const std::vector<float>& b) {
      std::vector<float> c(size_t(d.m * d.n), 0.0f);
      e.gemm(d, a.data(), b.data(), c.data(), o);
      return c;
    };
    for (int i = 0; i < 3; ++i) {
      CAPTURE(i);
      const std::vector<float> a = integers(rng), b = integers(rng);
      Counted counted(e);
      CHECK(host_call(kDesc, a, b) == reference(a, b));
      if (i > 0) CHECK(counted.replayed());
    }
    // A larger product grows the host buffers (new buffers, new ids): the small product's recording is stale.
    const GemmDesc big{.m = 4 * kN, .n = 4 * kN, .k = 4 * kN};
    const std::vector<float> ones(size_t(16 * kN * kN), 1.0f);
    CHECK(host_call(big, ones, ones)[0] == float(4 * kN));
    const std::vector<float> a = integers(rng), b = integers(rng);
    Counted counted(e);
    CHECK(host_call(kDesc, a, b) == reference(a, b));
    CHECK(counted.recorded());
  }

  TEST_CASE("a replayed call's timestamps are its own submission's") {
    Engine& e = test::engine();
    if (!e.device().timestamps) {
      test::skip("this device's compute queue has no timestamps");
      return;
    }
    auto rng = test::case_rng(test::current_case_name());
    const GemmOptions o{.timestamps = true};
    Operands one = make_operands(e, rng);
    const VulkanBufferRange ranges[detail::kOperands] = {range_of(one.ba), range_of(one.bb), range_of(one.bc), {}};
    detail::EngineImpl& ei = impl(e);
    // The raw stamps of the plan's queries after each call: a replay writes new ones, later than the last.
    const auto stamps = [&] {
      std::lock_guard guard(ei.lock);
      const detail::CallKey key = ei.plan_key(detail::Door::buffers, kDesc, o, ranges);
      const auto plan = ei.plan_cache.find(key, ei.tuning.generation()).plan;
      REQUIRE(plan);
      std::array<uint64_t, 2> s{};
      REQUIRE(ei.device->table().vkGetQueryPoolResults(ei.device->get(), plan->queries.get(), 0, 2, sizeof s, s.data(),
                                                       sizeof(uint64_t), VK_QUERY_RESULT_64_BIT) == VK_SUCCESS);
      return s;
    };
    CHECK(product_right(e, one, o));
    std::array<uint64_t, 2> last = stamps();
    for (int i = 0; i < 3; ++i) {
      CAPTURE(i);
      Counted counted(e);
      e.fill(one.bc, 0, kBytes, kPoison);
      const GemmTiming t = e.gemm(kDesc, BufferOffset{&one.ba}, BufferOffset{&one.bb}, BufferOffset{&one.bc}, o);
      CHECK(counted.replayed());
      const std::array<uint64_t, 2> now = stamps();
      CHECK(now[0] > last[1]);  // written by this submission, after the last one's end
      CHECK(now[1] >= now[0]);
      REQUIRE(t.gpu_ms.size() == 1);
      const double ms = double(now[1] - now[0]) * double(e.device().timestamp_period_ns) * 1e-6;
      CHECK(t.gpu_ms[0] == doctest::Approx(ms));
      CHECK(t.gpu_ms[0] <= t.submit_wait_ms);  // inside the host's window around the submission
      last = now;
    }
  }

  TEST_CASE("threads sharing one engine, each on its own buffers of one shape: every product right and counted") {
    Engine& e = test::engine();
    constexpr int kThreads = 4, kCalls = 20;
    const GemmOptions o{.timestamps = false};
    std::mutex failures_lock;
    std::vector<std::string> failures;
    const detail::ReplayStats before = replays(e);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        auto rng = test::case_rng(fmt::format("replay thread {}", t));
        Operands mine = make_operands(e, rng);
        for (int i = 0; i < kCalls; ++i) {
          if (i % 4 == 0) new_inputs(e, mine, rng);
          // Half the threads through host memory (the engine's one set of host buffers, shared by all).
          bool right = false;
          if (t % 2) {
            std::vector<float> c(size_t(kN * kN), 0.0f);
            e.gemm(kDesc, mine.a.data(), mine.b.data(), c.data(), o);
            right = c == reference(mine.a, mine.b);
          } else {
            right = product_right(e, mine, o);
          }
          if (!right) {
            std::lock_guard guard(failures_lock);
            failures.push_back(fmt::format("thread {} call {}", t, i));
          }
        }
      });
    }
    for (auto& th : threads) th.join();
    CHECK_MESSAGE(failures.empty(), "seed ", test::run_seed(), ": ", failures.empty() ? "" : failures[0]);
    const detail::ReplayStats after = replays(e);
    CHECK(after.replayed + after.recorded == before.replayed + before.recorded + kThreads * kCalls);
    MESSAGE("of ", kThreads * kCalls, " calls: ", after.replayed - before.replayed, " replayed, ",
            after.recorded - before.recorded, " recorded");
  }

  TEST_CASE("what a call's stages cost on the host, replayed and recorded (printed: docs/design/latency.md)") {
    // The submission (recording where it records, vkQueueSubmit) and the wait, each timed alone around the
    // engine's own steps, for a series on the same buffers (replayed) and one alternating C (recorded), in
    // blocks taken in turn so that the machine's drift falls on both. Nothing here is judged: a loaded
    // machine's times are not a bound; the counts are.
    Engine& e = test::engine();
    auto rng = test::case_rng(test::current_case_name());
    const GemmOptions o{.timestamps = false};
    Operands one = make_operands(e, rng), two = make_operands(e, rng);
    CHECK(product_right(e, one, o));
    detail::EngineImpl& ei = impl(e);
    std::lock_guard guard(ei.lock);
    const VulkanBufferRange first[detail::kOperands] = {range_of(one.ba), range_of(one.bb), range_of(one.bc), {}};
    const VulkanBufferRange second[detail::kOperands] = {range_of(one.ba), range_of(one.bb), range_of(two.bc), {}};
    const detail::OperandIds first_ids{detail::Access::impl(one.ba)->id, detail::Access::impl(one.bb)->id,
                                       detail::Access::impl(one.bc)->id};
    detail::OperandIds second_ids = first_ids;
    second_ids[2] = detail::Access::impl(two.bc)->id;
    const auto plan = ei.plan_cache.find(ei.plan_key(detail::Door::buffers, kDesc, o, first), ei.tuning.generation()).plan;
    REQUIRE(plan);
    using clock = std::chrono::steady_clock;
    const auto us = [](clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); };
    std::vector<double> submit[2], wait[2];  // [0] replayed, [1] recorded
    const detail::ReplayStats before = ei.replay_stats;
    constexpr int kBlocks = 4, kCalls = 50;
    for (int block = 0; block < kBlocks; ++block) {
      for (const int recorded : {0, 1}) {
        for (int i = 0; i < kCalls; ++i) {
          const bool other = recorded && i % 2;
          const auto start = clock::now();
          const uint64_t serial = ei.submit_plan_async(*plan, other ? second : first, nullptr,
                                                       other ? &second_ids : &first_ids);
          const auto submitted = clock::now();
          ei.submitter->wait(serial);
          submit[recorded].push_back(us(submitted - start));
          wait[recorded].push_back(us(clock::now() - submitted));
        }
      }
    }
    // A recorded block's first call follows a replayed one on `first` and replays; its last (odd) is on
    // `second`, so the next replayed block's first records.
    CHECK(ei.replay_stats.replayed == before.replayed + kBlocks * kCalls + 1);
    CHECK(ei.replay_stats.recorded == before.recorded + kBlocks * (kCalls - 1) + (kBlocks - 1));
    // The recording's own steps, timed apart, into the plan's buffer as submit_replayed records it.
    std::vector<double> begin_us, record_us, end_us;
    const auto& t = ei.device->table();
    const VkCommandBuffer cmd = plan->replay.cmd;
    bool recorded = true;
    for (int i = 0; i < kCalls && recorded; ++i) {
      const auto t0 = clock::now();
      const VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
      recorded = t.vkBeginCommandBuffer(cmd, &begin) == VK_SUCCESS;
      const auto t1 = clock::now();
      ei.record_call(*plan, cmd, first, plan->push ? nullptr : plan->slot_sets(0), VK_NULL_HANDLE,
                     detail::QueryReset::in_commands);
      const auto t2 = clock::now();
      recorded = recorded && t.vkEndCommandBuffer(cmd) == VK_SUCCESS;
      begin_us.push_back(us(t1 - t0)), record_us.push_back(us(t2 - t1)), end_us.push_back(us(clock::now() - t2));
      ei.submitter->wait(ei.submitter->submit_recorded(cmd));
    }
    CHECK(recorded);
    plan->replay.recorded = false;  // what it holds is no longer what its bookkeeping says
    const auto median = [](std::vector<double> v) {
      std::sort(v.begin(), v.end());
      return v[v.size() / 2];
    };
    MESSAGE(fmt::format("16^3 f32 {} ({}): submission {:.2f} us replayed, {:.2f} us recorded; wait {:.1f} us, {:.1f} us "
                        "(medians of {}); a recording: begin {:.2f}, commands {:.2f}, end {:.2f} us (medians of {})",
                        to_string(plan->product.kernel), plan->product.config, median(submit[0]), median(submit[1]),
                        median(wait[0]), median(wait[1]), kBlocks * kCalls, median(begin_us), median(record_us),
                        median(end_us), kCalls));
  }

  TEST_CASE("a replayed call allocates nothing on the host but its timing's configuration text") {
    if (!test::new_counter_available()) {
      test::skip("a sanitizer build: operator new is the sanitizer's, not counted here");
      return;
    }
    // An engine without the validation layer, whose own bookkeeping of each Vulkan call allocates.
    Engine e(EngineOptions{});
    auto rng = test::case_rng(test::current_case_name());
    const GemmOptions o{.timestamps = false};
    Operands one = make_operands(e, rng);
    const auto call = [&] {
      return e.gemm(kDesc, BufferOffset{&one.ba}, BufferOffset{&one.bb}, BufferOffset{&one.bc}, o);
    };
    call();
    const GemmTiming timing = call();
    Counted counted(e);
    test::count_news(true);
    const uint64_t before = test::news_counted();
    call();
    test::count_news(false);
    const uint64_t news = test::news_counted() - before;
    CHECK(counted.replayed());
    // std::string keeps up to 15 characters in place; a longer configuration's text is one allocation.
    const uint64_t text = timing.config.size() > 15 ? 1 : 0;
    CHECK_MESSAGE(news == text, news, " allocations; the configuration: ", timing.config);
  }
}
