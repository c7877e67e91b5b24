// vkgemm inside an application's Vulkan (vulkan.hpp): adopting its device, recording into its command
// buffers on its buffers at byte offsets, timestamps there, and submit_gemm() with its semaphores and
// fence. The application's instance runs synchronization validation; any message fails the test.
#include <doctest/doctest.h>

#include <cstring>
#include <random>
#include <vector>

#include "app_vulkan.hpp"
#include "vkgemm/half.hpp"
#include "support.hpp"

using namespace vkgemm;
using vkgemm::test::expect_error;
using vkgemm::test::random_floats;

namespace {



}  // namespace

TEST_SUITE("adopt") {
  TEST_CASE("adopting checks what it is given") {
    test::AppVulkan app(false);
    VulkanDevice info = app.adopt_info();
    info.device = VK_NULL_HANDLE;
    expect_error([&] { (void)adopt_device(info); }, ErrorCode::invalid_argument, "the VkDevice is missing");
    info = app.adopt_info();
    info.get_instance_proc_addr = nullptr;
    expect_error([&] { (void)adopt_device(info); }, ErrorCode::invalid_argument, "vkGetInstanceProcAddr is missing");
    info = app.adopt_info();
    info.api_version = VK_API_VERSION_1_0;
    expect_error([&] { (void)adopt_device(info); }, ErrorCode::unsupported_config, "needs 1.1");
    info = app.adopt_info();
    info.queue_family_index = 99;
    expect_error([&] { (void)adopt_device(info); }, ErrorCode::unsupported_config, "queue family 99");
  }

  TEST_CASE("a feature the application did not enable is refused by name") {
    {
      test::AppVulkan app(false);
      Engine e = adopt_device(app.adopt_info());
      expect_error([&] { e.check_supported(DataType::f64, {}); }, ErrorCode::unsupported_type, "shaderFloat64");
      CHECK_NOTHROW(e.check_supported(DataType::f32, {}));
    }
    test::AppVulkan app(true);
    if (!app.enabled.shaderFloat64) {
      MESSAGE("this device has no shaderFloat64; only the refusal is covered");
      return;
    }
    Engine e = adopt_device(app.adopt_info());
    CHECK_NOTHROW(e.check_supported(DataType::f64, {}));
    std::vector<double> a = {1, 2, 3, 4}, c(4, -1.0);
    e.gemm(GemmDesc{.type = DataType::f64, .m = 2, .n = 2, .k = 2}, a.data(), a.data(), c.data());
    CHECK(c == std::vector<double>{7, 10, 15, 22});
  }

  TEST_CASE("timestamps are reset on the host where the application enabled hostQueryReset, else by a command") {
    for (const bool v12 : {false, true}) {
      CAPTURE(v12);
      test::AppVulkan app(false, v12);  // v12: a 1.2 instance with hostQueryReset enabled where the device has it
      Engine e = adopt_device(app.adopt_info());
      // The application's own query, not vkgemm's: an engine that resets on the host without the feature on
      // is reported by validation (vkResetQueryPool), one that never does fails this check.
      CHECK(e.device().host_query_reset == (v12 && app.enabled12.hostQueryReset == VK_TRUE));
      std::vector<float> a = {1, 2, 3, 4}, c(4, -1.0f);
      for (int i = 0; i < 3; ++i) {  // the same cached plan again: its queries reset each time
        const GemmTiming t = e.gemm(GemmDesc{.m = 2, .n = 2, .k = 2}, a.data(), a.data(), c.data(), {.repeat = 2});
        CHECK(t.gpu_ms.size() == (e.device().timestamps ? 2u : 0u));
        CHECK(c == std::vector<float>{7, 10, 15, 22});
      }
    }
  }

  TEST_CASE("f16 runs where the application declared shaderFloat16 and 16-bit storage, and only there") {
    {
      test::AppVulkan app(false);  // nothing declared: refused, naming the features
      Engine e = adopt_device(app.adopt_info());
      expect_error([&] { e.check_supported(DataType::f16, {}); }, ErrorCode::unsupported_type, "shaderFloat16");
    }
    test::AppVulkan app(false, true);
    if (!app.enabled12.shaderFloat16 || !app.enabled11.storageBuffer16BitAccess) {
      MESSAGE("this device lacks shaderFloat16 or storageBuffer16BitAccess; only the refusal is covered");
      return;
    }
    Engine e = adopt_device(app.adopt_info());
    CHECK(e.device().float16);
    CHECK_FALSE(e.device().coopmat_khr);  // not declared: off, whatever the hardware has
    CHECK_FALSE(e.device().coopmat2);
    // [1 2; 3 4]^2 = [7 10; 15 22], exact in fp16, C f32 and C f16.
    const std::vector<uint16_t> a = {float_to_half(1), float_to_half(2), float_to_half(3), float_to_half(4)};
    std::vector<float> c32(4, -1.0f);
    e.gemm(GemmDesc{.type = DataType::f16, .m = 2, .n = 2, .k = 2}, a.data(), a.data(), c32.data());
    CHECK(c32 == std::vector<float>{7, 10, 15, 22});
    std::vector<uint16_t> c16(4, 0);
    e.gemm(GemmDesc{.type = DataType::f16, .c_type = DataType::f16, .m = 2, .n = 2, .k = 2}, a.data(), a.data(),
           c16.data());
    for (size_t i = 0; i < 4; ++i) CHECK(half_to_float(c16[i]) == std::vector<float>{7, 10, 15, 22}[i]);
  }

  TEST_CASE("recorded into the application's command buffer, on its buffers at byte offsets, chained") {
    test::AppVulkan app(false);
    Engine e = adopt_device(app.adopt_info());
    auto rng = test::case_rng("adopt record");
    // C1 = 2 A B (row-major, A 13 x 7, B 7 x 11), then, column-major, C2 = C1^T E - C2_0: the row-major
    // 13 x 11 C1 is the column-major 11 x 13 C1^T (ld 11), read right after the first GEMM wrote it, with
    // the application's barrier between them.
    const GemmDesc d1{.m = 13, .n = 11, .k = 7, .alpha = 2.0};
    const GemmDesc d2{.layout = Layout::col_major, .m = 11, .n = 5, .k = 13, .lda = 11, .alpha = 1.0, .beta = -1.0};
    const auto a = random_floats(13 * 7, rng), b = random_floats(7 * 11, rng), ee = random_floats(13 * 5, rng),
               c2_0 = random_floats(11 * 5, rng);
    // One buffer holds A and B at unaligned byte offsets (12 and 12 + 4 * 91 + 8); C1 and E and C2 have their own.
    test::AppBuffer ab = app.buffer(1024), c1 = app.buffer(13 * 11 * 4), eb = app.buffer(13 * 5 * 4 + 4),
                    c2 = app.buffer(11 * 5 * 4);
    const VkDeviceSize a_at = 12, b_at = 12 + 4 * 91 + 8;
    std::memcpy(static_cast<char*>(ab.mapped) + a_at, a.data(), a.size() * 4);
    std::memcpy(static_cast<char*>(ab.mapped) + b_at, b.data(), b.size() * 4);
    std::memcpy(static_cast<char*>(eb.mapped) + 4, ee.data(), ee.size() * 4);
    std::memcpy(c2.mapped, c2_0.data(), c2_0.size() * 4);
    // E is column-major 13 x 5 for d2; the values are what they are, the reference reads them the same way.

    VkCommandBuffer cmd = app.begin();
    GemmRecording r1 = record_gemm(e, cmd, d1, {ab.buffer, a_at, 4 * 91}, {ab.buffer, b_at, ab.size - b_at},
                                   {c1.buffer, 0, c1.size}, {.repeat = 3});
    test::AppVulkan::compute_barrier(cmd);  // C1 written -> read by the second GEMM
    GemmRecording r2 = record_gemm(e, cmd, d2, {c1.buffer, 0, c1.size}, {eb.buffer, 4, eb.size - 4},
                                   {c2.buffer, 0, c2.size});
    CHECK(r1.recorded());
    app.submit_and_wait(cmd);

    std::vector<float> got1(13 * 11), got2(11 * 5);
    std::memcpy(got1.data(), c1.mapped, got1.size() * 4);
    std::memcpy(got2.data(), c2.mapped, got2.size() * 4);
    const auto cmp1 = compare_with_reference(d1, a.data(), b.data(), got1.data(), got1.data());
    INFO("first: ", cmp1.summary());
    CHECK(cmp1.passed);
    const auto cmp2 = compare_with_reference(d2, got1.data(), ee.data(), c2_0.data(), got2.data());
    INFO("second: ", cmp2.summary());
    CHECK(cmp2.passed);
    const GemmTiming t = r1.timing();
    if (t.gpu_timestamps) {
      CHECK(t.gpu_ms.size() == 3);
      for (double ms : t.gpu_ms) CHECK(ms > 0.0);
    }
    // An empty product records nothing and says so.
    VkCommandBuffer empty = app.begin();
    GemmRecording r3 = record_gemm(e, empty, GemmDesc{.m = 0, .n = 4, .k = 4}, {ab.buffer, 0, 64}, {ab.buffer, 0, 64},
                                   {ab.buffer, 0, 64});
    CHECK_FALSE(r3.recorded());
    app.submit_and_wait(empty);
    // Bad ranges are refused before anything is recorded.
    VkCommandBuffer bad = app.begin();
    expect_error([&] { (void)record_gemm(e, bad, d1, {ab.buffer, a_at, 4 * 90}, {ab.buffer, b_at, 400}, {c1.buffer, 0, c1.size}); },
                 ErrorCode::buffer_too_small, "A (row-major 13x7");
    expect_error([&] { (void)record_gemm(e, bad, d1, {ab.buffer, 2, 1000}, {ab.buffer, b_at, 400}, {c1.buffer, 0, c1.size}); },
                 ErrorCode::invalid_argument, "offset 2 is not a multiple");
    expect_error([&] { (void)record_gemm(e, bad, d1, {VK_NULL_HANDLE, 0, 1000}, {ab.buffer, b_at, 400}, {c1.buffer, 0, c1.size}); },
                 ErrorCode::invalid_argument, "A has no buffer");
    app.submit_and_wait(bad);
  }

  TEST_CASE("timing() before the submission completes is not_ready, after it works") {
    test::AppVulkan app(false);
    Engine e = adopt_device(app.adopt_info());
    if (!e.device().timestamps) {
      MESSAGE("no timestamps on this queue");
      return;
    }
    test::AppBuffer buf = app.buffer(3 * 64);
    VkCommandBuffer cmd = app.begin();
    GemmRecording r = record_gemm(e, cmd, GemmDesc{.m = 4, .n = 4, .k = 4}, {buf.buffer, 0, 64}, {buf.buffer, 64, 64},
                                  {buf.buffer, 128, 64});
    // Recorded, not yet submitted: its timestamps do not exist yet.
    expect_error([&] { (void)r.timing(); }, ErrorCode::not_ready, "has not completed");
    app.submit_and_wait(cmd);
    CHECK(r.timing().gpu_ms.size() == 1);
  }

  TEST_CASE("submit_gemm waits on and signals the application's semaphores and fence") {
    test::AppVulkan app(false);
    Engine e = adopt_device(app.adopt_info());
    VkSemaphoreCreateInfo sci{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
    VkSemaphore before = VK_NULL_HANDLE, after = VK_NULL_HANDLE;
    REQUIRE(vkCreateSemaphore(app.device, &sci, nullptr, &before) == VK_SUCCESS);
    REQUIRE(vkCreateSemaphore(app.device, &sci, nullptr, &after) == VK_SUCCESS);
    VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkFence fence = VK_NULL_HANDLE;
    REQUIRE(vkCreateFence(app.device, &fci, nullptr, &fence) == VK_SUCCESS);
    // The application signals `before` from its own (empty) submission.
    VkSubmitInfo signal{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    signal.signalSemaphoreCount = 1;
    signal.pSignalSemaphores = &before;
    REQUIRE(vkQueueSubmit(app.queue, 1, &signal, VK_NULL_HANDLE) == VK_SUCCESS);

    Buffer a = e.create_buffer(4 * 6), b = e.create_buffer(4 * 6), c = e.create_buffer(4 * 4 + 8);
    const std::vector<float> av = {1, 2, 3, 4, 5, 6}, bv = {1, 0, 0, 1, 1, 1};
    e.write(a, 0, av.data(), 24);
    e.write(b, 0, bv.data(), 24);
    const VkPipelineStageFlags stage = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
    SubmitSync sync{{&before, 1}, {&stage, 1}, {&after, 1}, fence};
    const GemmDesc d{.m = 2, .n = 2, .k = 3};
    submit_gemm(e, d, vulkan_range(a), vulkan_range(b), vulkan_range(c, 8), {}, sync);
    CHECK(vkGetFenceStatus(app.device, fence) == VK_SUCCESS);
    // The application consumes `after`.
    VkSubmitInfo wait{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    wait.waitSemaphoreCount = 1;
    wait.pWaitSemaphores = &after;
    wait.pWaitDstStageMask = &stage;
    REQUIRE(vkQueueSubmit(app.queue, 1, &wait, VK_NULL_HANDLE) == VK_SUCCESS);
    REQUIRE(vkQueueWaitIdle(app.queue) == VK_SUCCESS);
    std::vector<float> cv(4);
    e.read(c, 8, cv.data(), 16);
    CHECK(cv == std::vector<float>{4, 5, 10, 11});
    SubmitSync mismatched{{&before, 1}, {}, {}, VK_NULL_HANDLE};
    expect_error([&] { (void)submit_gemm(e, d, vulkan_range(a), vulkan_range(b), vulkan_range(c), {}, mismatched); },
                 ErrorCode::invalid_argument, "one stage mask per semaphore");
    expect_error([&] { (void)vulkan_range(c, 100); }, ErrorCode::invalid_argument, "past the end");
    vkDestroyFence(app.device, fence, nullptr);
    vkDestroySemaphore(app.device, before, nullptr);
    vkDestroySemaphore(app.device, after, nullptr);
  }
}
