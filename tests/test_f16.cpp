// Half precision: fp16 conversions, the SIMT fp16 kernels with C f16 and fp16 accumulation, exact
// small-integer products, the type checks, and the cooperative-matrix kernels: compiled into this build
// and, on a device that has the extensions, run over shapes crossing every fragment and tile boundary; on a
// device without them (lavapipe), refused with an error that names the missing extension.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "kernels/spirv_table.hpp"
#include "support.hpp"

using namespace vkgemm;

namespace {

using test::expect_error;  // tests/support.hpp

bool has_f16() {
  const auto& d = test::engine().device();
  return d.float16 && d.storage16;
}

// Runs every (m, n, k) from dims; reports the first failures.
void run_grid(DataType output, const GemmOptions& options, const std::vector<uint32_t>& dims, const char* label) {
  auto rng = test::case_rng(fmt::format("f16 {} {} {} {}", label, to_string(output), to_string(options.kernel),
                                        options.tile));
  int failures = 0;
  for (uint32_t m : dims)
    for (uint32_t n : dims)
      for (uint32_t k : dims) {
        const auto r = test::check_product(DataType::f16, output, m, n, k, options, rng);
        if (!r.passed && ++failures <= 5) FAIL_CHECK("seed ", test::run_seed(), ": ", r.detail);
      }
  CHECK_MESSAGE(failures == 0, failures, " shapes failed; seed ", test::run_seed());
}

// Inputs that are small integers: every product and partial sum is exact in fp32 (and, kept below 2048,
// in fp16), so the GPU must give exactly the reference, bit for bit.
// Integers in [-magnitude, magnitude]: every sum stays an integer below 2048 (exact in fp16) while
// magnitude^2 * k <= 2048.
void check_exact(DataType output, const GemmOptions& options, uint32_t m, uint32_t n, uint32_t k,
                 std::mt19937_64& rng, int magnitude = 4) {
  REQUIRE(uint64_t(magnitude * magnitude) * k <= 2048);
  std::uniform_int_distribution<int> d(-magnitude, magnitude);
  std::vector<uint16_t> a(uint64_t{m} * k), b(uint64_t{k} * n);
  for (auto& x : a) x = float_to_half(static_cast<float>(d(rng)));
  for (auto& x : b) x = float_to_half(static_cast<float>(d(rng)));
  const size_t c_bytes = uint64_t{m} * n * element_size(output);
  std::vector<std::byte> got(c_bytes), want(c_bytes);
  test::engine().gemm(DataType::f16, output, m, n, k, a.data(), b.data(), got.data(), options);
  reference_gemm(DataType::f16, output, m, n, k, a.data(), b.data(), want.data());
  CHECK_MESSAGE(std::memcmp(got.data(), want.data(), c_bytes) == 0, "exact product differs: ", m, "x", n, "x", k,
                " C ", to_string(output), " kernel ", to_string(options.kernel),
                options.f16_accumulate ? " fp16 sums" : "", " seed ", test::run_seed());
}

}  // namespace

TEST_SUITE("f16") {
  TEST_CASE("fp16 conversions round to nearest even and round-trip every value") {
    for (uint32_t h = 0; h < 0x10000; ++h) {
      const auto bits = static_cast<uint16_t>(h);
      const float f = half_to_float(bits);
      if (std::isnan(f)) {
        CHECK(std::isnan(half_to_float(float_to_half(f))));
      } else if (float_to_half(f) != bits) {
        FAIL_CHECK("fp16 0x", fmt::format("{:04x}", h), " -> ", f, " -> 0x",
                   fmt::format("{:04x}", float_to_half(f)));
      }
    }
    CHECK(half_to_float(0x3c00) == 1.0f);
    CHECK(half_to_float(0x0001) == std::ldexp(1.0f, -24));  // the smallest subnormal
    CHECK(float_to_half(1.0f + std::ldexp(1.0f, -11)) == 0x3c00);  // a tie goes to even
    CHECK(float_to_half(1.0f + 3 * std::ldexp(1.0f, -11)) == 0x3c02);
    CHECK(float_to_half(65520.0f) == 0x7c00);  // rounds past the largest finite value: infinity
    CHECK(float_to_half(65504.0f) == 0x7bff);
    CHECK(float_to_half(std::ldexp(1.0f, -25)) == 0x0000);  // half the smallest subnormal: ties to even, zero
    CHECK(float_to_half(std::ldexp(1.5f, -25)) == 0x0001);
  }

  TEST_CASE("SIMT fp16 kernels: C f16 and fp16 accumulation over every tile boundary") {
    if (!has_f16()) {
      test::skip(test::engine().device().name + " lacks shaderFloat16 or storageBuffer16BitAccess");
      return;
    }
    const std::vector<uint32_t> dims = {1, 15, 16, 17, 67};
    for (Kernel kernel : {Kernel::naive, Kernel::tiled}) {  // the SIMT kernels with f16 variants
      run_grid(DataType::f16, {.kernel = kernel, .tile = 16}, dims, "C f16");
      run_grid(DataType::f16, {.kernel = kernel, .tile = 16, .f16_accumulate = true}, dims, "acc16");
    }
  }

  TEST_CASE("small-integer f16 inputs give exact results") {
    if (!has_f16()) {
      test::skip(test::engine().device().name + " lacks shaderFloat16 or storageBuffer16BitAccess");
      return;
    }
    auto rng = test::case_rng("f16 exact");
    for (Kernel kernel : {Kernel::naive, Kernel::tiled}) {  // the SIMT kernels with f16 variants
      for (DataType out : {DataType::f32, DataType::f16}) {
        for (auto [m, n, k] : {std::array<uint32_t, 3>{17, 33, 127}, {64, 64, 64}, {1, 129, 5}}) {
          check_exact(out, {.kernel = kernel, .tile = 16}, m, n, k, rng);
          if (out == DataType::f16) check_exact(out, {.kernel = kernel, .tile = 16, .f16_accumulate = true}, m, n, k, rng);
        }
      }
    }
  }

  // The same claim on the tensor-core kernels, including a long K (2048, values in [-1, 1]) that takes
  // coopmat2's unrolled fast path on its interior tiles. A case of its own (ctest f16.exact_matrix): it is
  // a skip where the device has neither kernel.
  TEST_CASE("small-integer f16 inputs give exact results on the cooperative-matrix kernels") {
    auto rng = test::case_rng("f16 exact matrix");
    bool ran = false;
    for (Kernel kernel : matrix_kernels) {
      try {
        test::engine().check_supported(DataType::f16, DataType::f16, {.kernel = kernel});
      } catch (const Error& why) {
        MESSAGE(std::string(to_string(kernel)), ": ", std::string(why.what()));
        continue;
      }
      ran = true;
      for (DataType out : {DataType::f32, DataType::f16}) {
        for (bool acc16 : {false, true}) {
          if (acc16 && out != DataType::f16) continue;
          const GemmOptions options{.kernel = kernel, .f16_accumulate = acc16};
          for (auto [m, n, k] : {std::array<uint32_t, 3>{17, 33, 127}, {64, 64, 64}, {1, 129, 5}})
            check_exact(out, options, m, n, k, rng);
          check_exact(out, options, 256, 512, 2048, rng, 1);
        }
      }
    }
    if (!ran) test::skip(test::engine().device().name + " has no cooperative-matrix kernel");
  }

  TEST_CASE("type combinations: f16 inputs give f32 or f16, fp16 accumulation gives f16") {
    if (!has_f16()) {
      test::skip(test::engine().device().name + " lacks shaderFloat16 or storageBuffer16BitAccess");
      return;
    }
    Engine& e = test::engine();
    Buffer a = e.create_buffer(4096), b = e.create_buffer(4096), c = e.create_buffer(4096);
    expect_error([&] { e.gemm({&a, 0, 4, 4, DataType::f16}, {&b, 0, 4, 4, DataType::f32}, {&c, 0, 4, 4, DataType::f32}); },
                 ErrorCode::invalid_argument, "share one type");
    expect_error([&] { e.gemm({&a, 0, 4, 4, DataType::f16}, {&b, 0, 4, 4, DataType::f16}, {&c, 0, 4, 4, DataType::i32}); },
                 ErrorCode::invalid_argument, "share one type");
    expect_error([&] { e.gemm({&a, 0, 4, 4, DataType::f32}, {&b, 0, 4, 4, DataType::f32}, {&c, 0, 4, 4, DataType::f16}); },
                 ErrorCode::invalid_argument, "share one type");
    expect_error([&] { e.check_supported(DataType::f16, DataType::f32, {.f16_accumulate = true}); },
                 ErrorCode::invalid_argument, "f16 accumulation gives C of f16");
    expect_error([&] { e.check_supported(DataType::f32, DataType::f32, {.f16_accumulate = true}); },
                 ErrorCode::invalid_argument, "for f16 inputs");
    expect_error([&] { e.check_supported(DataType::f32, {.kernel = Kernel::coopmat}); }, ErrorCode::unsupported_type,
                 "multiplies f16, bf16, i8 and u8 matrices");
    // k = 0 with an odd-sized f16 C at an offset that is not a multiple of 4: zeroed by the kernel.
    std::vector<uint16_t> poison(16, 0x7e00), back(16);
    e.write(c, 0, poison.data(), 32);
    e.gemm({&a, 0, 3, 0, DataType::f16}, {&b, 0, 0, 3, DataType::f16}, {&c, 2, 3, 3, DataType::f16});
    e.read(c, 0, back.data(), 32);
    CHECK(back[0] == 0x7e00);
    for (int i = 1; i <= 9; ++i) CHECK(back[static_cast<size_t>(i)] == 0);
    CHECK(back[10] == 0x7e00);
  }

  TEST_CASE("every cooperative-matrix variant this compiler can build is in the binary") {
    // Configure probes the compiler; VKGEMM_EXPECT_* say what it found, so this test fails when a variant
    // the compiler supports did not make it into the table (or one it does not appears).
    std::set<std::string> names;
    for (const auto& blob : kernels::spirv_table()) {
      names.insert(blob.name);
      REQUIRE(blob.bytes >= 20);
      CHECK(blob.words[0] == 0x07230203u);  // the SPIR-V magic number
    }
    for (const char* kernel : {"coopmat", "coopmat2"}) {
      const bool expected = std::string(kernel) == "coopmat" ? VKGEMM_EXPECT_COOPMAT : VKGEMM_EXPECT_COOPMAT2;
      for (const char* variant : {"f16_f32", "f16_f16", "f16_acc16"}) {
        const std::string name = fmt::format("{}_{}", kernel, variant);
        CHECK_MESSAGE(names.count(name) == (expected ? 1u : 0u), name, expected ? " is missing" : " is unexpected");
      }
      bool listed_missing = false;
      for (const auto& m : kernels::spirv_missing()) listed_missing |= std::string(m.kernel) == kernel;
      CHECK(listed_missing == !expected);
    }
    for (const auto& blob : kernels::spirv_table()) {
      if (std::string(blob.name).rfind("coopmat", 0) == 0) CHECK(blob.words[1] == 0x00010600u);  // SPIR-V 1.6
    }
  }

  TEST_CASE("cooperative-matrix kernels: refused with the missing extension named, or run over every boundary") {
    Engine& e = test::engine();
    const auto& d = e.device();
    for (Kernel kernel : matrix_kernels) {
      CAPTURE(to_string(kernel));
      const bool has = kernel == Kernel::coopmat ? d.coopmat_khr : d.coopmat2;
      if (!has) {
        MESSAGE("the ", to_string(kernel), " kernel is not run: ", d.name, " lacks ",
                kernel == Kernel::coopmat ? "VK_KHR_cooperative_matrix" : "VK_NV_cooperative_matrix2",
                "; checking its refusal instead");
        const char* ext = kernel == Kernel::coopmat ? "VK_KHR_cooperative_matrix" : "VK_NV_cooperative_matrix2";
        if (!has_f16()) continue;  // the type is refused first, by the test above's rules
        expect_error([&] { e.check_supported(DataType::f16, {.kernel = kernel}); }, ErrorCode::unsupported_config, ext);
        std::vector<uint16_t> a(64), b(64);
        std::vector<float> c(64);
        expect_error([&] { e.gemm(DataType::f16, 8, 8, 8, a.data(), b.data(), c.data(), {.kernel = kernel}); },
                     ErrorCode::unsupported_config, ext);
        continue;
      }
      // Fragments are 8 or 16 on a side, tiles 64 to 256: sizes on both sides of each.
      const std::vector<uint32_t> dims = {1, 15, 16, 17, 63, 64, 65, 129, 257};
      for (uint32_t tile : {64u, 128u}) {
        run_grid(DataType::f32, {.kernel = kernel, .tile = tile}, dims, "coopmat");
      }
      run_grid(DataType::f16, {.kernel = kernel}, {1, 17, 64, 130}, "coopmat C f16");
      auto rng = test::case_rng("coopmat exact");
      check_exact(DataType::f32, {.kernel = kernel}, 129, 255, 127, rng);
    }
  }
}
