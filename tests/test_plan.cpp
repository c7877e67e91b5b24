// Plans (vkgemm/plan.hpp): planned once, recorded many times with different operands and offsets, each
// product checked against the CPU reference with C poisoned; recording allocates nothing (counted through
// the application's VkAllocationCallbacks and operator new); a plan whose engine is gone refuses to work;
// threads record their own plans at once. The application's instance runs synchronization validation.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string_view>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "app_vulkan.hpp"
#include "new_counter.hpp"
#include "support.hpp"
#include "vkgemm/reference.hpp"

using namespace vkgemm;
using vkgemm::test::expect_error;
using vkgemm::test::random_floats;

namespace {


// Operands for one product at byte offsets into app buffers, filled, with C poisoned (beta 0) or random.
struct Operands {
  test::AppBuffer a, b, c;
  std::vector<float> ha, hb, hc;
  VkDeviceSize at[3] = {0, 0, 0};
};

Operands make_operands(test::AppVulkan& app, const GemmDesc& d, const VkDeviceSize (&at)[3], std::mt19937_64& rng) {
  Operands o;
  const uint64_t count[3] = {operand_extent(d, 'A').elements, operand_extent(d, 'B').elements,
                             operand_extent(d, 'C').elements};
  o.ha = random_floats(count[0], rng), o.hb = random_floats(count[1], rng);
  o.hc = d.beta == 0.0 ? std::vector<float>(count[2], std::numeric_limits<float>::quiet_NaN())
                       : random_floats(count[2], rng);
  test::AppBuffer* bufs[3] = {&o.a, &o.b, &o.c};
  const std::vector<float>* host[3] = {&o.ha, &o.hb, &o.hc};
  for (int i = 0; i < 3; ++i) {
    o.at[i] = at[i];
    *bufs[i] = app.buffer(at[i] + host[i]->size() * 4 + 64);
    std::memcpy(static_cast<char*>(bufs[i]->mapped) + at[i], host[i]->data(), host[i]->size() * 4);
  }
  return o;
}

void record(GemmPlan& plan, VkCommandBuffer cmd, const Operands& o) {
  plan.record(cmd, {o.a.buffer, o.at[0], o.a.size - o.at[0]}, {o.b.buffer, o.at[1], o.b.size - o.at[1]},
              {o.c.buffer, o.at[2], o.c.size - o.at[2]});
}

void check_result(const GemmDesc& d, const Operands& o) {
  std::vector<float> got(o.hc.size());
  std::memcpy(got.data(), static_cast<const char*>(o.c.mapped) + o.at[2], got.size() * 4);
  const auto cmp = compare_with_reference(d, o.ha.data(), o.hb.data(), o.hc.data(), got.data());
  INFO(cmp.summary());
  CHECK(cmp.passed);
}

// VkAllocationCallbacks that count what they allocate while `on`. Each block carries its raw pointer and
// size in front of it (for free and realloc).
struct CountingAllocator {
  struct Header {
    void* raw;
    size_t size;
  };
  std::atomic<bool> on{false};
  std::atomic<uint64_t> count{0};

  static void* allocate(size_t size, size_t align) {
    const size_t front = std::max<size_t>(align, sizeof(Header) * 2);
    char* raw = static_cast<char*>(std::malloc(size + front + align));
    if (!raw) return nullptr;
    const uintptr_t at = (reinterpret_cast<uintptr_t>(raw) + front + align - 1) / align * align;
    char* user = reinterpret_cast<char*>(at);
    *reinterpret_cast<Header*>(user - sizeof(Header)) = {raw, size};
    return user;
  }
  static void release(void* p) {
    if (p) std::free(reinterpret_cast<Header*>(static_cast<char*>(p) - sizeof(Header))->raw);
  }
  VkAllocationCallbacks callbacks() {
    VkAllocationCallbacks cb{};
    cb.pUserData = this;
    cb.pfnAllocation = [](void* self, size_t size, size_t align, VkSystemAllocationScope) -> void* {
      auto* me = static_cast<CountingAllocator*>(self);
      if (me->on) ++me->count;
      return allocate(size, align);
    };
    cb.pfnReallocation = [](void* self, void* old, size_t size, size_t align, VkSystemAllocationScope) -> void* {
      auto* me = static_cast<CountingAllocator*>(self);
      if (me->on) ++me->count;
      if (size == 0) return release(old), nullptr;
      void* fresh = allocate(size, align);
      if (fresh && old) {
        const size_t had = reinterpret_cast<Header*>(static_cast<char*>(old) - sizeof(Header))->size;
        std::memcpy(fresh, old, std::min(had, size));
        release(old);
      }
      return fresh;
    };
    cb.pfnFree = [](void*, void* p) { release(p); };
    return cb;
  }
};

// Engine::submit: more products in flight than the engine has command buffers, each checked; waited on
// through the handles and, with a timeline, by the application itself.
void products_in_flight(bool timeline) {
  test::AppVulkan app(false, timeline);  // timeline: Vulkan 1.2 with timelineSemaphore where the device has it
  Engine e = adopt_device(app.adopt_info());
  std::mt19937_64 rng(23);
  const GemmDesc d{.m = 19, .n = 13, .k = 11, .alpha = 1.25};
  constexpr int kProducts = 20;  // more than the engine's 8 command buffers and the plan's 16 slots
  GemmPlan plan = e.plan(d, {.max_pending = 16});
  std::vector<Buffer> as, bs, cs;
  std::vector<std::vector<float>> has, hbs;
  std::vector<GemmSubmission> subs;
  for (int i = 0; i < kProducts; ++i) {
    has.push_back(random_floats(19 * 11, rng)), hbs.push_back(random_floats(11 * 13, rng));
    as.push_back(e.create_buffer(19 * 11 * 4)), bs.push_back(e.create_buffer(11 * 13 * 4));
    cs.push_back(e.create_buffer(19 * 13 * 4));
    e.write(as.back(), 0, has.back().data(), 19 * 11 * 4);
    e.write(bs.back(), 0, hbs.back().data(), 11 * 13 * 4);
    e.fill(cs.back(), 0, 19 * 13 * 4, 0xFFFFFFFFu);
  }
  for (size_t i = 0; i < kProducts; ++i) subs.push_back(e.submit(plan, {&as[i], 0}, {&bs[i], 0}, {&cs[i], 0}));
  for (size_t i = 1; i < kProducts; ++i) CHECK(subs[i].value() > subs[i - 1].value());
  CHECK((subs.back().semaphore() == VK_NULL_HANDLE) == !(timeline && app.enabled12.timelineSemaphore));
  if (subs.back().semaphore() != VK_NULL_HANDLE) {
    // The application waits on the engine's timeline itself.
    const VkSemaphore semaphore = subs.back().semaphore();
    const uint64_t value = subs.back().value();
    VkSemaphoreWaitInfo info{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
    info.semaphoreCount = 1;
    info.pSemaphores = &semaphore;
    info.pValues = &value;
    CHECK(vkWaitSemaphores(app.device, &info, UINT64_MAX) == VK_SUCCESS);
    CHECK(subs.back().done());
  } else {
    MESSAGE("no timeline semaphore: the fence path");
  }
  for (const GemmSubmission& s : subs) s.wait();
  for (size_t i = 0; i < kProducts; ++i) {
    CHECK(subs[i].done());
    std::vector<float> got(19 * 13);
    e.read(cs[i], 0, got.data(), got.size() * 4);
    const auto cmp = compare_with_reference(d, has[i].data(), hbs[i].data(), got.data(), got.data());
    INFO("product ", i, ": ", cmp.summary());
    CHECK(cmp.passed);
  }
  // A synchronous call between asynchronous ones; then a handle of a destroyed engine refuses to wait.
  (void)e.run(plan, {&as[0], 0}, {&bs[0], 0}, {&cs[0], 0});
  GemmSubmission last = e.submit(plan, {&as[1], 0}, {&bs[1], 0}, {&cs[1], 0});
  last.wait();
  as.clear(), bs.clear(), cs.clear();
  { Engine gone = std::move(e); }  // the engine is destroyed here
  expect_error([&] { last.wait(); }, ErrorCode::invalid_argument, "the submission's engine was destroyed");
  expect_error([&] { GemmSubmission{}.wait(); }, ErrorCode::invalid_argument, "this GemmSubmission is empty");
}

// Whether VKGEMM_TEST_NO_PUSH_DESCRIPTOR=1 forces the descriptor-set ring (the plan.ring CTest entries).
bool ring_forced() {
  const char* env = std::getenv("VKGEMM_TEST_NO_PUSH_DESCRIPTOR");
  return env && std::string_view(env) == "1";
}

}  // namespace

TEST_SUITE("plan") {
  TEST_CASE("plans push descriptors where the device has them (else the ring): more pending than max_pending") {
    test::AppVulkan app(false);
    Engine e = adopt_device(app.adopt_info());
    // What the application's own query of the device says, not what vkgemm reports: losing the feature fails.
    const bool expected = app.max_push_descriptors >= 3 && !ring_forced();
    const bool push = e.device().push_descriptor;
    MESSAGE(fmt::format("plans record with {} on {} (maxPushDescriptors {}{})",
                        push ? "push descriptors (VK_KHR_push_descriptor)" : "the descriptor-set ring", e.device().name,
                        app.max_push_descriptors, ring_forced() ? ", VKGEMM_TEST_NO_PUSH_DESCRIPTOR=1" : ""));
    CHECK(push == expected);
    Engine& own = test::engine();  // the engine's own device: the same rule on its own query
    CHECK(own.device().push_descriptor == (own.device().max_push_descriptors >= 3 && !ring_forced()));
    // Four recordings of one plan pending in one command buffer: with push descriptors a plan of
    // max_pending = 1 takes them (a ring of one slot would rewrite the set the first three bound, which
    // validation reports and the products show); the ring needs four slots.
    std::mt19937_64 rng(29);
    const GemmDesc d{.m = 27, .n = 18, .k = 35, .alpha = 0.5};
    GemmPlan plan = e.plan(d, {.max_pending = push ? 1u : 4u});
    const uint64_t g = plan.offset_granularity();
    VkCommandBuffer cmd = app.begin();
    std::vector<Operands> ops;
    for (VkDeviceSize i = 0; i < 4; ++i) {
      ops.push_back(make_operands(app, d, {i * g, 0, 2 * g}, rng));
      record(plan, cmd, ops.back());
    }
    app.submit_and_wait(cmd);
    for (const Operands& o : ops) check_result(d, o);
  }

  TEST_CASE("one plan recorded many times, with different operands and offsets, gives every product") {
    test::AppVulkan app(false);
    Engine e = adopt_device(app.adopt_info());
    std::mt19937_64 rng(17);
    // beta 0 with C poisoned, and beta != 0 (C read); A transposed; sizes off every tile boundary.
    const GemmDesc descs[2] = {GemmDesc{.m = 37, .n = 29, .k = 19, .alpha = 1.5},
                               GemmDesc{.op_a = Op::t, .m = 21, .n = 33, .k = 45, .alpha = -0.5, .beta = 0.75}};
    for (const GemmDesc& d : descs) {
      // Planned for A at byte 4: records at 4, 4 + 64, 4 + 128 (the granularity on lavapipe is 64).
      GemmPlan plan = e.plan(d, {.a_offset = 4});
      const uint64_t g = plan.offset_granularity();
      CHECK(g % 64 == 0);
      for (int round = 0; round < 4; ++round) {
        VkCommandBuffer cmd = app.begin();
        std::vector<Operands> ops;
        for (VkDeviceSize shift = 0; shift < 3; ++shift) {
          ops.push_back(make_operands(app, d, {4 + shift * g, shift * g, (2 - shift) * g}, rng));
          record(plan, cmd, ops.back());
        }
        app.submit_and_wait(cmd);
        for (const Operands& o : ops) check_result(d, o);
      }
      // An offset of another class is refused, naming what the plan needs; nothing is recorded.
      VkCommandBuffer cmd = app.begin();
      const Operands bad = make_operands(app, d, {8, 0, 0}, rng);
      expect_error([&] { record(plan, cmd, bad); }, ErrorCode::invalid_argument,
                   fmt::format("A's offset 8 is not 4 plus a multiple of {}", g));
      const Operands small = make_operands(app, d, {4, 0, 0}, rng);
      expect_error([&] { plan.record(cmd, {small.a.buffer, 4, 16}, {small.b.buffer, 0, small.b.size},
                                     {small.c.buffer, 0, small.c.size}); },
                   ErrorCode::buffer_too_small, "A (row-major");
      app.submit_and_wait(cmd);
    }
  }

  TEST_CASE("Engine::run runs a plan on engine buffers, again and again") {
    Engine& e = test::engine();
    std::mt19937_64 rng(5);
    const GemmDesc d{.m = 45, .n = 31, .k = 27, .alpha = 2.0};
    GemmPlan plan = e.plan(d, {.timestamps = true});
    Buffer a = e.create_buffer(64 + 45 * 27 * 4), b = e.create_buffer(45 * 27 * 4 + 64), c = e.create_buffer(64 + 45 * 31 * 4);
    for (int i = 0; i < 6; ++i) {
      const uint64_t shift = i % 2 ? 64 : 0;  // two offset classes' worth of shifts: both record as planned
      const auto ha = random_floats(45 * 27, rng), hb = random_floats(27 * 31, rng);
      e.write(a, shift, ha.data(), ha.size() * 4);
      e.write(b, 0, hb.data(), hb.size() * 4);
      e.fill(c, shift, 45 * 31 * 4, 0xFFFFFFFFu);
      const GemmTiming t = e.run(plan, {&a, shift}, {&b, 0}, {&c, shift});
      std::vector<float> got(45 * 31);
      e.read(c, shift, got.data(), got.size() * 4);
      const auto cmp = compare_with_reference(d, ha.data(), hb.data(), got.data(), got.data());
      INFO(cmp.summary());
      CHECK(cmp.passed);
      CHECK(t.kernel == plan.kernel());
      if (e.device().timestamps) CHECK(t.gpu_ms.size() == 1);
    }
    auto other = test::make_engine();
    expect_error([&] { (void)other->run(plan, {&a, 0}, {&b, 0}, {&c, 0}); }, ErrorCode::invalid_argument,
                 "belongs to another engine");
    expect_error([&] { (void)e.plan(d, {.max_pending = 0}); }, ErrorCode::invalid_argument, "max_pending must be 1");
    expect_error([&] { (void)e.plan(d, {.b_offset = 2}); }, ErrorCode::invalid_argument,
                 "b_offset 2 is not a multiple of the 4-byte element");
  }

  TEST_CASE("recording allocates nothing: no driver allocation outside the command pool, no operator new") {
    // Without the validation layer here: the layer allocates for its own tracking of every command. The
    // products recorded the same way are checked under validation in the other cases.
    CountingAllocator device_allocs, pool_allocs;
    const VkAllocationCallbacks device_cb = device_allocs.callbacks(), pool_cb = pool_allocs.callbacks();
    test::AppVulkan app(false, false, &device_cb, false);
    Engine e = adopt_device(app.adopt_info());
    std::mt19937_64 rng(3);
    const GemmDesc d{.m = 16, .n = 16, .k = 16};
    GemmPlan plan = e.plan(d, {.max_pending = 64});
    // The command buffers' own storage comes from a pool with its own allocator: the driver's.
    VkCommandPoolCreateInfo cpi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    cpi.queueFamilyIndex = app.family;
    VkCommandPool pool = VK_NULL_HANDLE;
    REQUIRE(vkCreateCommandPool(app.device, &cpi, &pool_cb, &pool) == VK_SUCCESS);
    VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    cai.commandPool = pool;
    cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    cai.commandBufferCount = 1;
    VkCommandBuffer cmd = VK_NULL_HANDLE;
    REQUIRE(vkAllocateCommandBuffers(app.device, &cai, &cmd) == VK_SUCCESS);
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    REQUIRE(vkBeginCommandBuffer(cmd, &bi) == VK_SUCCESS);
    const Operands o = make_operands(app, d, {0, 64, 128}, rng);
    record(plan, cmd, o);  // the first record: the driver may set up the command buffer's storage
    device_allocs.on = true;
    pool_allocs.on = true;
    test::count_news(true);
    const uint64_t news_before = test::news_counted();
    for (int i = 0; i < 63; ++i) record(plan, cmd, o);
    test::count_news(false);
    const uint64_t news = test::news_counted() - news_before;
    device_allocs.on = false;
    CHECK(device_allocs.count.load() == 0);
    if (test::new_counter_available()) {
      CHECK(news == 0);
    } else {
      MESSAGE("a sanitizer build: operator new is the sanitizer's, not counted here");
    }
    MESSAGE("the driver's own command storage: ", pool_allocs.count.load(), " allocations from the command pool");
    REQUIRE(vkEndCommandBuffer(cmd) == VK_SUCCESS);
    vkDestroyCommandPool(app.device, pool, &pool_cb);
  }

  TEST_CASE("a plan whose engine is gone refuses to work, and holds no Vulkan object of it") {
    test::AppVulkan app(false);
    std::mt19937_64 rng(9);
    const GemmDesc d{.m = 8, .n = 8, .k = 8};
    GemmPlan plan;
    {
      Engine e = adopt_device(app.adopt_info());
      plan = e.plan(d);
      CHECK(plan.valid());
    }
    const Operands o = make_operands(app, d, {0, 0, 0}, rng);
    VkCommandBuffer cmd = app.begin();
    expect_error([&] { record(plan, cmd, o); }, ErrorCode::invalid_argument, "the plan's engine was destroyed");
    expect_error([&] { (void)plan.timing(); }, ErrorCode::invalid_argument, "the plan's engine was destroyed");
    app.submit_and_wait(cmd);
    GemmPlan empty;
    expect_error([&] { empty.record(cmd, {}, {}, {}); }, ErrorCode::invalid_argument, "this GemmPlan is empty");
    // The plan is destroyed after its engine; the application's device is destroyed after it and validation
    // (which reports objects left on a destroyed device) stays quiet: the engine released the plan's.
  }

  TEST_CASE("threads record their own plans at once") {
    test::AppVulkan app(false);
    Engine e = adopt_device(app.adopt_info());
    constexpr int kThreads = 4;
    std::mt19937_64 rng(11);
    std::vector<GemmDesc> descs;
    std::vector<GemmPlan> plans;
    std::vector<Operands> ops;
    std::vector<VkCommandPool> pools(kThreads);
    std::vector<VkCommandBuffer> cmds(kThreads);
    for (int i = 0; i < kThreads; ++i) {
      descs.push_back(GemmDesc{.m = 17 + 8 * i, .n = 23, .k = 9 + i, .alpha = 1.0 + i});
      plans.push_back(e.plan(descs.back()));
      ops.push_back(make_operands(app, descs.back(), {0, 0, 0}, rng));
      VkCommandPoolCreateInfo cpi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
      cpi.queueFamilyIndex = app.family;
      REQUIRE(vkCreateCommandPool(app.device, &cpi, nullptr, &pools[size_t(i)]) == VK_SUCCESS);
      VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
      cai.commandPool = pools[size_t(i)];
      cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
      cai.commandBufferCount = 1;
      REQUIRE(vkAllocateCommandBuffers(app.device, &cai, &cmds[size_t(i)]) == VK_SUCCESS);
    }
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (size_t i = 0; i < kThreads; ++i) {
      threads.emplace_back([&, i] {
        try {
          VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
          vkBeginCommandBuffer(cmds[i], &bi);
          for (int r = 0; r < 3; ++r) {  // the same product three times: a barrier between them (C rewritten)
            if (r > 0) test::AppVulkan::compute_barrier(cmds[i]);
            record(plans[i], cmds[i], ops[i]);
          }
        } catch (...) {
          ++failures;
        }
      });
    }
    for (auto& t : threads) t.join();
    CHECK(failures == 0);
    for (size_t i = 0; i < kThreads; ++i) {
      app.submit_and_wait(cmds[i]);
      check_result(descs[i], ops[i]);
    }
    for (VkCommandPool p : pools) vkDestroyCommandPool(app.device, p, nullptr);
  }

  TEST_CASE("Engine::submit: many products in flight, on a timeline semaphore") { products_in_flight(true); }
  TEST_CASE("Engine::submit: many products in flight, on fences (no timeline semaphore)") { products_in_flight(false); }
}
