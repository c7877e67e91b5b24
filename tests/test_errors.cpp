// Every bad input gets its own clear error, nothing is dispatched, and the engine stays usable.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "support.hpp"

using namespace vkgemm;
using vkgemm::test::expect_error;

TEST_SUITE("errors") {
  TEST_CASE("dimension mismatch names the shapes") {
    Engine& e = test::engine();
    Buffer a = e.create_buffer(1024), b = e.create_buffer(1024), c = e.create_buffer(1024);
    expect_error([&] { e.gemm({&a, 0, 3, 2, DataType::f32}, {&b, 0, 3, 3, DataType::f32}, {&c, 0, 3, 3, DataType::f32}); },
                 ErrorCode::dimension_mismatch, "A is 3x2, B is 3x3");
    expect_error([&] { e.gemm({&a, 0, 3, 2, DataType::f32}, {&b, 0, 2, 3, DataType::f32}, {&c, 0, 4, 3, DataType::f32}); },
                 ErrorCode::dimension_mismatch, "C is 4x3");
    expect_error([&] { e.gemm({&a, 0, 2, 2, DataType::f32}, {&b, 0, 2, 2, DataType::i32}, {&c, 0, 2, 2, DataType::f32}); },
                 ErrorCode::invalid_argument, "share one type");
  }

  TEST_CASE("buffers too small, misaligned offsets, missing or foreign buffers") {
    Engine& e = test::engine();
    Buffer a = e.create_buffer(64), b = e.create_buffer(1024), c = e.create_buffer(1024);
    expect_error([&] { e.gemm({&a, 0, 8, 8, DataType::f32}, {&b, 0, 8, 8, DataType::f32}, {&c, 0, 8, 8, DataType::f32}); },
                 ErrorCode::buffer_too_small, "its buffer has 64 bytes");
    expect_error([&] { e.gemm({&b, 2, 2, 2, DataType::f32}, {&b, 0, 2, 2, DataType::f32}, {&c, 0, 2, 2, DataType::f32}); },
                 ErrorCode::invalid_argument, "not a multiple");
    expect_error([&] { e.gemm({nullptr, 0, 2, 2, DataType::f32}, {&b, 0, 2, 2, DataType::f32}, {&c, 0, 2, 2, DataType::f32}); },
                 ErrorCode::invalid_argument, "A has no buffer");
    Buffer empty;
    expect_error([&] { e.gemm({&empty, 0, 2, 2, DataType::f32}, {&b, 0, 2, 2, DataType::f32}, {&c, 0, 2, 2, DataType::f32}); },
                 ErrorCode::invalid_argument, "empty");
    expect_error([&] { e.write(a, 60, "12345678", 8); }, ErrorCode::invalid_argument, "outside");
    expect_error([&] { (void)e.create_buffer(0); }, ErrorCode::invalid_argument, "0 bytes");
  }

  TEST_CASE("tile sizes that do not fit name the limit") {
    Engine& e = test::engine();
    const auto& dev = e.device();
    // 64 x 64 = 4096 invocations: over every device's maxComputeWorkGroupInvocations we know of.
    if (64u * 64u > dev.max_workgroup_invocations) {
      expect_error([&] { e.check_supported(DataType::f32, {.kernel = Kernel::tiled, .tile = 64}); },
                   ErrorCode::unsupported_config, "maxComputeWorkGroupInvocations");
    }
    expect_error([&] { e.check_supported(DataType::f32, {.kernel = Kernel::tiled, .tile = 0}); },
                 ErrorCode::invalid_argument, "tile size 0");
    // A tile whose two f64 tiles overflow shared memory while its workgroup still fits.
    for (uint32_t t = 1; t * t <= dev.max_workgroup_invocations; ++t) {
      if (2ull * t * t * 8 > dev.max_shared_memory && dev.float64) {
        expect_error([&] { e.check_supported(DataType::f64, {.kernel = Kernel::tiled, .tile = t}); },
                     ErrorCode::unsupported_config, "maxComputeSharedMemorySize");
        break;
      }
    }
    std::vector<float> a(4, 1.0f), c(4);
    expect_error([&] { e.gemm(DataType::f32, 2, 2, 2, a.data(), a.data(), c.data(), {.kernel = Kernel::tiled, .tile = 64}); },
                 ErrorCode::unsupported_config, "tiled tile 64");
  }

  // Matrices larger than maxStorageBufferRange are no longer refused but cut into pieces: see
  // tests/test_limits.cpp (6000x6000) and tests/test_partition.cpp (the refusal that remains).

  TEST_CASE("bad repeat counts, null pointers, bad device selectors") {
    Engine& e = test::engine();
    std::vector<float> a(4, 1.0f), c(4);
    expect_error([&] { e.gemm(DataType::f32, 2, 2, 2, a.data(), a.data(), c.data(), {.repeat = 0}); },
                 ErrorCode::invalid_argument, "repeat");
    expect_error([&] { e.gemm(DataType::f32, 2, 2, 2, nullptr, a.data(), c.data()); }, ErrorCode::invalid_argument,
                 "null");
    expect_error([] { Engine bad({.device = "no-such-device-xyz"}); }, ErrorCode::device_not_found, "no-such-device-xyz");
    expect_error([] { Engine bad({.device = "999"}); }, ErrorCode::device_not_found, "out of range");
  }

  TEST_CASE("f64 without shaderFloat64 is a clear error") {
    Engine& e = test::engine();
    if (e.device().float64) {
      MESSAGE("this device has shaderFloat64; the refusal path is covered where it has not");
      CHECK_NOTHROW(e.check_supported(DataType::f64, {}));
    } else {
      expect_error([&] { e.check_supported(DataType::f64, {}); }, ErrorCode::unsupported_type, "shaderFloat64");
    }
  }

  TEST_CASE("empty products: m or n = 0 does nothing, k = 0 gives zeros") {
    Engine& e = test::engine();
    std::vector<float> a(6, 1.0f), c(6, 7.0f);
    auto t = e.gemm(DataType::f32, 0, 3, 2, a.data(), a.data(), c.data());
    CHECK(t.gpu_ms.empty());
    CHECK(c[0] == 7.0f);
    // k = 0 is C = beta C with beta = 0: one dispatch that writes zeros without reading A or B.
    t = e.gemm(DataType::f32, 2, 3, 0, nullptr, nullptr, c.data());
    for (float v : c) CHECK(v == 0.0f);
    // On device buffers k = 0 zeroes C too.
    Buffer ab = e.create_buffer(64), cb = e.create_buffer(64);
    std::vector<float> ones(16, 1.0f), back(16, -1.0f);
    e.write(cb, 0, ones.data(), 64);
    e.gemm({&ab, 0, 4, 0, DataType::f32}, {&ab, 0, 0, 4, DataType::f32}, {&cb, 0, 4, 4, DataType::f32});
    e.read(cb, 0, back.data(), 64);
    for (float v : back) CHECK(v == 0.0f);
  }

  TEST_CASE("the engine still works after every error above") {
    auto rng = test::case_rng("after errors");
    const auto result = test::check_product(DataType::f32, 33, 17, 65, {}, rng);
    INFO(result.detail);
    CHECK(result.passed);
  }
}
