// What this machine must support, asserted: VKGEMM_TEST_EXPECT names the kernels, element types and
// embedded SPIR-V that the device and build under test must have, so that a lost feature, driver or
// shader toolchain fails loudly instead of turning the suites that need it into skips. tools/run-tests.sh
// sets it for CI's lavapipe; unset, this suite reports itself skipped.
//   VKGEMM_TEST_EXPECT="kernels=naive,tiled,blocked types=f32,i32,f64,f16 spirv=coopmat,coopmat2"
// kernels: each runs here (f16 for the matrix kernels, else f32); types: each element type runs through
// auto; f16acc: each kernel sums in fp16 (C f16); int8: each kernel runs i8 and u8 (C i32); bf16: each
// kernel runs bf16 (C f32 and C bf16); dot8: each kernel sums i8 and u8 through packed dot products
// (the tiled kernel's form for devices with shaderIntegerDotProduct); spirv: each kernel's f16, i8, u8
// and bf16 variants are in the binary.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/spirv_table.hpp"
#include "support.hpp"
#include "vkgemm/vkgemm.hpp"

using namespace vkgemm;

namespace {

// "key=a,b key2=c" -> {key: [a, b], key2: [c]}
std::map<std::string, std::vector<std::string>> parse_expectation(const std::string& text) {
  std::map<std::string, std::vector<std::string>> out;
  std::istringstream words(text);
  std::string word;
  while (words >> word) {
    const auto eq = word.find('=');
    REQUIRE_MESSAGE(eq != std::string::npos, "VKGEMM_TEST_EXPECT: '", word, "' is not key=value,...");
    std::vector<std::string>& values = out[word.substr(0, eq)];
    std::istringstream list(word.substr(eq + 1));
    for (std::string v; std::getline(list, v, ',');) values.push_back(v);
  }
  for (const auto& entry : out) {  // no structured binding: CHECK_MESSAGE captures it, which clang 14 cannot
    const std::string& key = entry.first;
    CHECK_MESSAGE((key == "kernels" || key == "types" || key == "spirv" || key == "f16acc" || key == "int8" ||
                   key == "bf16" || key == "dot8"),
                  "VKGEMM_TEST_EXPECT: unknown key ", key);
  }
  return out;
}

// The element type a kernel is checked with: f16 for the matrix kernels, f32 for the rest.
DataType type_for(Kernel kernel) {
  return kernel == Kernel::coopmat || kernel == Kernel::coopmat2 ? DataType::f16 : DataType::f32;
}

}  // namespace

TEST_SUITE("support") {
  TEST_CASE("the device and build have what VKGEMM_TEST_EXPECT names") {
    const char* env = std::getenv("VKGEMM_TEST_EXPECT");
    if (!env || !*env) {
      test::skip("VKGEMM_TEST_EXPECT is not set, so nothing is expected of this machine");
      return;
    }
    const auto expected = parse_expectation(env);
    Engine& e = test::engine();
    INFO("device: ", e.device().name);
    for (const std::string& name : expected.count("kernels") ? expected.at("kernels") : std::vector<std::string>{}) {
      const auto kernel = parse_kernel(name);
      REQUIRE_MESSAGE(kernel.has_value(), "VKGEMM_TEST_EXPECT: no kernel is named ", name);
      CAPTURE(name);
      CHECK_NOTHROW(e.check_supported(type_for(*kernel), {.kernel = *kernel}));
    }
    for (const std::string& name : expected.count("types") ? expected.at("types") : std::vector<std::string>{}) {
      const auto type = parse_data_type(name);
      REQUIRE_MESSAGE(type.has_value(), "VKGEMM_TEST_EXPECT: no element type is named ", name);
      CAPTURE(name);
      CHECK_NOTHROW(e.check_supported(*type, GemmOptions{}));
    }
    for (const std::string& name : expected.count("f16acc") ? expected.at("f16acc") : std::vector<std::string>{}) {
      const auto kernel = parse_kernel(name);
      REQUIRE_MESSAGE(kernel.has_value(), "VKGEMM_TEST_EXPECT: no kernel is named ", name);
      CAPTURE(name);
      CHECK_NOTHROW(e.check_supported(DataType::f16, DataType::f16, {.kernel = *kernel, .f16_accumulate = true}));
    }
    for (const std::string& name : expected.count("int8") ? expected.at("int8") : std::vector<std::string>{}) {
      const auto kernel = parse_kernel(name);
      REQUIRE_MESSAGE(kernel.has_value(), "VKGEMM_TEST_EXPECT: no kernel is named ", name);
      CAPTURE(name);
      for (const DataType t : {DataType::i8, DataType::u8}) {
        CAPTURE(to_string(t));
        CHECK_NOTHROW(e.check_supported(t, DataType::i32, {.kernel = *kernel}));
      }
    }
    for (const std::string& name : expected.count("bf16") ? expected.at("bf16") : std::vector<std::string>{}) {
      const auto kernel = parse_kernel(name);
      REQUIRE_MESSAGE(kernel.has_value(), "VKGEMM_TEST_EXPECT: no kernel is named ", name);
      CAPTURE(name);
      CHECK_NOTHROW(e.check_supported(DataType::bf16, DataType::f32, {.kernel = *kernel}));
      CHECK_NOTHROW(e.check_supported(DataType::bf16, DataType::bf16, {.kernel = *kernel}));
    }
    for (const std::string& name : expected.count("dot8") ? expected.at("dot8") : std::vector<std::string>{}) {
      const auto kernel = parse_kernel(name);
      REQUIRE_MESSAGE(kernel.has_value(), "VKGEMM_TEST_EXPECT: no kernel is named ", name);
      CAPTURE(name);
      CHECK_MESSAGE(e.device().integer_dot, "no shaderIntegerDotProduct (VK_KHR_shader_integer_dot_product)");
      for (const DataType t : {DataType::i8, DataType::u8}) {
        CAPTURE(to_string(t));
        const std::vector<uint8_t> a(4 * 8, 1), b(8 * 4, 1);
        std::vector<int32_t> c(4 * 4);
        const GemmTiming timing = e.gemm(t, DataType::i32, 4, 4, 8, a.data(), b.data(), c.data(), {.kernel = *kernel});
        CHECK_MESSAGE(timing.config.find("packed dot products") != std::string::npos, "ran ", timing.config,
                      " (without GL_EXT_integer_dot_product, glslangValidator built no packed-dot variant)");
        CHECK(c[0] == 8);
      }
    }
    std::set<std::string> embedded;
    for (const auto& blob : kernels::spirv_table()) embedded.insert(blob.name);
    for (const std::string& kernel : expected.count("spirv") ? expected.at("spirv") : std::vector<std::string>{}) {
      for (const char* variant : {"f16_f32", "f16_f16", "f16_acc16", "i8", "u8", "bf16_f32", "bf16_bf16"}) {
        const std::string name = kernel + "_" + variant;
        CHECK_MESSAGE(embedded.count(name) == 1, name, " is not in this build (configure's probe of glslangValidator "
                                                       "failed, or the shader toolchain was lost)");
      }
    }
  }

  TEST_CASE("VKGEMM_TEST_QUICK_SAMPLE takes one item in N and never none; unset, every one") {
    // The quick tier sets it; this case puts back whatever the run had.
    const char* before = std::getenv("VKGEMM_TEST_QUICK_SAMPLE");
    const std::string saved = before ? before : "";
    const auto count = [](const test::QuickSample& s, uint64_t items) {
      int taken = 0;
      for (uint64_t i = 0; i < items; ++i) taken += s.takes(i, items) ? 1 : 0;
      return taken;
    };
    unsetenv("VKGEMM_TEST_QUICK_SAMPLE");
    CHECK(count(test::quick_sample("a list"), 26) == 26);
    setenv("VKGEMM_TEST_QUICK_SAMPLE", "4", 1);
    const test::QuickSample s = test::quick_sample("a list");
    CHECK(s.every == 4);
    CHECK(s.offset < 4);
    CHECK(count(s, 40) == 10);
    for (uint64_t offset = 0; offset < 4; ++offset) {  // every offset a run's seed may give
      const test::QuickSample at{4, offset};
      CHECK(count(at, 40) == 10);
      for (uint64_t items = 1; items <= 4; ++items) CHECK(count(at, items) == 1);  // a short list keeps one
    }
    setenv("VKGEMM_TEST_QUICK_SAMPLE", "0", 1);
    CHECK_THROWS_WITH_AS(test::quick_sample("a list"), doctest::Contains("N >= 1"), std::runtime_error);
    if (before) {
      setenv("VKGEMM_TEST_QUICK_SAMPLE", saved.c_str(), 1);
    } else {
      unsetenv("VKGEMM_TEST_QUICK_SAMPLE");
    }
  }

  TEST_CASE("VKGEMM_TEST_GRID_SAMPLE takes one product in N, at an offset below N; unset, every one") {
    // The sanitizer pass sets it; this case puts back whatever the run had.
    const char* before = std::getenv("VKGEMM_TEST_GRID_SAMPLE");
    const std::string saved = before ? before : "";
    const auto count = [](const test::GridSample& s) {
      int taken = 0;
      for (uint64_t i = 0; i < 80; ++i) taken += s.takes(i) ? 1 : 0;
      return taken;
    };
    unsetenv("VKGEMM_TEST_GRID_SAMPLE");
    CHECK(count(test::grid_sample("a grid")) == 80);
    setenv("VKGEMM_TEST_GRID_SAMPLE", "8", 1);
    const test::GridSample s = test::grid_sample("a grid");
    CHECK(s.every == 8);
    CHECK(s.offset < 8);
    CHECK(count(s) == 10);
    setenv("VKGEMM_TEST_GRID_SAMPLE", "0", 1);
    CHECK_THROWS_WITH_AS(test::grid_sample("a grid"), doctest::Contains("N >= 1"), std::runtime_error);
    if (before) {
      setenv("VKGEMM_TEST_GRID_SAMPLE", saved.c_str(), 1);
    } else {
      unsetenv("VKGEMM_TEST_GRID_SAMPLE");
    }
  }
}
