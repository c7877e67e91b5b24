// The narrow input types: bf16 (C f32 or bf16) and i8 and u8 (C i32). Conversions, the reference and its
// bounds (each shown to reject a wrong result at every K the tests use), the type rules and the refusals
// that name a missing feature, exact products (bf16 rounding of C bit for bit, integer wrap-around), and
// the SIMT kernels over every tile boundary.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <vector>

#include <fmt/format.h>

#include "kernels/registry.hpp"  // kernels::check_supported on made-up devices
#include "support.hpp"

using namespace vkgemm;

namespace {

using test::expect_error;  // tests/support.hpp

float bits_to_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// The K values the SIMT grids and exact checks below use, and a long one.
constexpr std::array<uint32_t, 8> kKs = {1, 7, 15, 16, 17, 64, 67, 1024};

bool runs(DataType input) {
  try {
    test::engine().check_supported(input, {.kernel = Kernel::tiled});
    return true;
  } catch (const Error& why) {
    test::skip(why.what());
    return false;
  }
}

void run_shapes(DataType input, DataType output, const GemmOptions& options) {
  auto rng = test::case_rng(fmt::format("narrow {} {} {} {}", to_string(input), to_string(output),
                                        to_string(options.kernel), options.tile));
  int failures = 0, count = 0;
  // Across the tile (8, 16) boundaries in every dimension, K included.
  for (uint32_t m : {1u, 15u, 17u})
    for (uint32_t n : {8u, 16u, 33u})
      for (uint32_t k : kKs) {
        if (k == 1024 && (m != 17 || n != 33)) continue;  // one long K
        const auto r = test::check_product(input, output, m, n, k, options, rng);
        ++count;
        if (!r.passed && ++failures <= 5) FAIL_CHECK("seed ", test::run_seed(), ": ", r.detail);
      }
  CHECK_MESSAGE(failures == 0, failures, " of ", count, " shapes failed; seed ", test::run_seed());
}

}  // namespace

TEST_SUITE("narrow") {
  TEST_CASE("names, sizes and output types") {
    CHECK(parse_data_type("bf16") == DataType::bf16);
    CHECK(parse_data_type("i8") == DataType::i8);
    CHECK(parse_data_type("u8") == DataType::u8);
    CHECK(element_size(DataType::bf16) == 2);
    CHECK(element_size(DataType::i8) == 1);
    CHECK(element_size(DataType::u8) == 1);
    CHECK(default_output_type(DataType::bf16) == DataType::f32);
    CHECK(default_output_type(DataType::i8) == DataType::i32);
    CHECK(default_output_type(DataType::u8) == DataType::i32);
    CHECK(output_allowed(DataType::bf16, DataType::bf16));
    CHECK_FALSE(output_allowed(DataType::bf16, DataType::f16));
    CHECK_FALSE(output_allowed(DataType::i8, DataType::i8));
    CHECK(output_allowed(DataType::u8, DataType::f32));  // dequantized (GemmDesc::epilogue.scale)
    CHECK(output_allowed(DataType::i8, DataType::f16));
    CHECK_FALSE(output_allowed(DataType::u8, DataType::bf16));
    CHECK_FALSE(output_allowed(DataType::i32, DataType::f32));
  }

  TEST_CASE("bf16 conversions round to nearest even and round-trip every value") {
    CHECK(float_to_bfloat16(1.0f) == 0x3f80);
    CHECK(float_to_bfloat16(bits_to_float(0x3f808000)) == 0x3f80);  // 1 + 2^-8: a tie, to even (down)
    CHECK(float_to_bfloat16(bits_to_float(0x3f818000)) == 0x3f82);  // 1 + 3 * 2^-8: a tie, to even (up)
    CHECK(float_to_bfloat16(bits_to_float(0x3f808001)) == 0x3f81);  // just above the tie: up
    CHECK(float_to_bfloat16(bits_to_float(0xbf80ffff)) == 0xbf81);  // negative: by magnitude
    CHECK(float_to_bfloat16(std::numeric_limits<float>::max()) == 0x7f80);  // past bf16's largest: infinity
    CHECK(float_to_bfloat16(-std::numeric_limits<float>::infinity()) == 0xff80);
    CHECK(std::isnan(bfloat16_to_float(float_to_bfloat16(bits_to_float(0x7f800001)))));  // a NaN whose top half is Inf
    CHECK(float_to_bfloat16(bits_to_float(0x00000001)) == 0x0000);  // the smallest subnormal: to zero
    int mismatches = 0;
    for (uint32_t h = 0; h < 0x10000; ++h) {
      const float f = bfloat16_to_float(static_cast<uint16_t>(h));
      if (std::isnan(f)) continue;
      if (float_to_bfloat16(f) != h) ++mismatches;
    }
    CHECK(mismatches == 0);
  }

  TEST_CASE("the integer reference: sign and zero extension, wrap-around modulo 2^32") {
    // -1 * -1 is 1 for i8; the same bytes as u8 are 255 * 255.
    const std::vector<uint8_t> ones(4, 0xff);
    int32_t c = 0;
    reference_gemm(DataType::i8, DataType::i32, 1, 1, 4, ones.data(), ones.data(), &c);
    CHECK(c == 4);
    reference_gemm(DataType::u8, DataType::i32, 1, 1, 4, ones.data(), ones.data(), &c);
    CHECK(c == 4 * 255 * 255);
    // alpha * sum and beta * C wrap as int32 arithmetic does (two's complement modulo 2^32).
    GemmDesc d;
    d.type = DataType::u8, d.m = 1, d.n = 1, d.k = 4, d.lda = 4, d.ldb = 1, d.ldc = 1;
    d.alpha = 1 << 20, d.beta = -7;
    const int32_t c0 = 1 << 30;
    reference_gemm(d, ones.data(), ones.data(), &c0, &c);
    const uint32_t want = uint32_t{4 * 255 * 255} * (1u << 20) + uint32_t(-7) * uint32_t{1 << 30};
    CHECK(c == static_cast<int32_t>(want));
    CHECK(compare_with_reference(d, ones.data(), ones.data(), &c0, &c).passed);
    const int32_t off_by_one = c + 1;
    CHECK_FALSE(compare_with_reference(d, ones.data(), ones.data(), &c0, &off_by_one).passed);
    d.alpha = 0.5;
    expect_error([&] { check_gemm(d); }, ErrorCode::invalid_argument, "not an int32 value");
  }

  // The bf16 bounds reject a wrong result at every K the tests use: a dropped K step (the last term of every
  // sum missing), and, for C bf16, a result that was never rounded to bf16's grid or was rounded by more
  // than half an ulp. A right result, rounded to nearest even, passes.
  TEST_CASE("the bf16 bounds reject a wrong result at every K") {
    auto rng = test::case_rng("narrow bf16 bounds");
    const uint32_t m = 17, n = 33;
    for (uint32_t k : kKs) {
      CAPTURE(k);
      const auto a = test::random_elements(DataType::bf16, uint64_t{m} * k, rng);
      const auto b = test::random_elements(DataType::bf16, uint64_t{k} * n, rng);
      const ReferenceProduct ref32(DataType::bf16, DataType::f32, m, n, k, a.data(), b.data(), {.random_inputs = true});
      const ReferenceProduct ref16(DataType::bf16, DataType::bf16, m, n, k, a.data(), b.data(), {.random_inputs = true});
      std::vector<float> right(uint64_t{m} * n), dropped(uint64_t{m} * n);
      reference_gemm(DataType::bf16, DataType::f32, m, n, k, a.data(), b.data(), right.data());
      // The same product with its last K step dropped: op(A) without its last column, op(B) without its last row.
      if (k > 1) {
        std::vector<std::byte> a1(uint64_t{m} * (k - 1) * 2);
        for (uint32_t i = 0; i < m; ++i) std::memcpy(&a1[i * (k - 1) * 2], &a[i * k * 2], (k - 1) * 2);
        reference_gemm(DataType::bf16, DataType::f32, m, n, k - 1, a1.data(), b.data(), dropped.data());
      } else {
        std::fill(dropped.begin(), dropped.end(), 0.0f);
      }
      CHECK(ref32.compare(right.data()).passed);
      CHECK_FALSE(ref32.compare(dropped.data()).passed);
      std::vector<uint16_t> rounded(right.size()), dropped16(right.size()), off(right.size());
      for (size_t i = 0; i < right.size(); ++i) {
        rounded[i] = float_to_bfloat16(right[i]);
        dropped16[i] = float_to_bfloat16(dropped[i]);
        off[i] = rounded[i];
      }
      CHECK(ref16.compare(rounded.data()).passed);
      CHECK_FALSE(ref16.compare(dropped16.data()).passed);
      // C bf16 judged as f32 would let a result skip the rounding: the f32 sums pass the f32 bound only.
      // One element two ulps of bf16 away (a rounding gone wrong by more than its half ulp) fails. The element
      // is the largest in magnitude: where a sum cancels, the fp32 sums' own error may pass two ulps of the
      // small result, and the bound rightly lets it.
      const auto largest = static_cast<size_t>(std::distance(
          right.begin(), std::max_element(right.begin(), right.end(),
                                          [](float x, float y) { return std::fabs(x) < std::fabs(y); })));
      off[largest] = static_cast<uint16_t>(off[largest] + 2);
      CHECK_FALSE(ref16.compare(off.data()).passed);
    }
  }

  TEST_CASE("type rules: refusals name the types, the missing feature, the device") {
    Engine& e = test::engine();
    expect_error([&] { e.check_supported(DataType::bf16, DataType::f16, {}); }, ErrorCode::invalid_argument,
                 "bf16 inputs give C of f32 or bf16, not f16");
    expect_error([&] { e.check_supported(DataType::i8, DataType::i8, {}); }, ErrorCode::invalid_argument,
                 "i8 inputs give C of i32, not i8");
    expect_error([&] { e.check_supported(DataType::u8, {.kernel = Kernel::blocked}); }, ErrorCode::unsupported_type,
                 "use gemv, coopmat2, coopmat, tiled, naive or auto for u8");
    DeviceInfo bare = e.device();
    bare.storage16 = false, bare.storage8 = false;
    bare.name = "a device without narrow storage";
    const tuning::Table table;
    for (const DataType t : {DataType::i8, DataType::u8}) {
      expect_error([&] { kernels::check_supported(bare, table, t, {.kernel = Kernel::tiled}); },
                   ErrorCode::unsupported_type, "needs the storageBuffer8BitAccess feature");
    }
    expect_error([&] { kernels::check_supported(bare, table, DataType::bf16, {}); }, ErrorCode::unsupported_type,
                 "bf16 needs the storageBuffer16BitAccess feature");
    expect_error([&] { kernels::check_supported(bare, table, DataType::bf16, {}); }, ErrorCode::unsupported_type,
                 "a device without narrow storage");
  }

  // bf16 on the cooperative-matrix kernels needs VK_KHR_shader_bfloat16's shaderBFloat16CooperativeMatrix and
  // a bf16 * bf16 + f32 shape; the door names what is missing and the device. Live on this device where it
  // lacks them (both lavapipes: 22 has no cooperative matrices, 26 no bf16), and on this device as described
  // with the extensions and each missing piece in turn (no Vulkan call: the door alone).
  TEST_CASE("bf16 on coopmat and coopmat2: refused naming the missing feature or shape, and the device") {
    Engine& e = test::engine();
    const DeviceInfo& live = e.device();
    const auto lists_bf16 = [](const std::vector<CooperativeMatrixShape>& shapes) {
      return std::any_of(shapes.begin(), shapes.end(), [](const CooperativeMatrixShape& s) { return s.a_type == "bf16"; });
    };
    if (!live.bfloat16_coopmat) {
      // The extension first; then coopmat needs the shape (its tiles come from it) before the feature, coopmat2
      // the feature before the shape.
      const std::string khr = !live.coopmat_khr                  ? "VK_KHR_cooperative_matrix"
                              : lists_bf16(live.coopmat_shapes) ? "shaderBFloat16CooperativeMatrix"
                                                                : "bf16 x bf16 + f32 -> f32";
      const std::string nv2 = !live.coopmat2 ? "VK_NV_cooperative_matrix2" : "shaderBFloat16CooperativeMatrix";
      for (const Kernel k : {Kernel::coopmat, Kernel::coopmat2}) {
        CAPTURE(to_string(k));
        expect_error([&] { e.check_supported(DataType::bf16, {.kernel = k}); }, ErrorCode::unsupported_config,
                     k == Kernel::coopmat ? khr : nv2);
        expect_error([&] { e.check_supported(DataType::bf16, DataType::bf16, {.kernel = k}); },
                     ErrorCode::unsupported_config, live.name);
      }
    }
    DeviceInfo d = live;
    d.name = "a described device without bf16 matrices";
    d.type = DeviceType::discrete_gpu;
    d.coopmat_khr = d.coopmat2 = d.vulkan13 = d.vulkan_memory_model = d.float16 = d.storage16 = true;
    d.subgroup_size_control = true;
    d.subgroup_size = d.min_subgroup_size = d.max_subgroup_size = 32;
    d.max_workgroup_invocations = std::max(d.max_workgroup_invocations, 256u);
    d.max_shared_memory = std::max(d.max_shared_memory, 48u * 1024);
    d.coopmat_shapes.clear(), d.coopmat2_shapes.clear();
    for (const char* ab : {"f16", "bf16"}) {
      CooperativeMatrixShape s;
      s.m = s.n = s.k = 16;
      s.a_type = s.b_type = ab, s.c_type = s.result_type = "f32", s.scope = "subgroup";
      d.coopmat_shapes.push_back(s);
      s.scope = "workgroup", s.flexible = true;
      d.coopmat2_shapes.push_back(s);
    }
    DeviceInfo f16_only = d;
    std::erase_if(f16_only.coopmat_shapes, [](const CooperativeMatrixShape& s) { return s.a_type == "bf16"; });
    std::erase_if(f16_only.coopmat2_shapes, [](const CooperativeMatrixShape& s) { return s.a_type == "bf16"; });
    f16_only.bfloat16 = f16_only.bfloat16_coopmat = true;
    d.bfloat16 = d.bfloat16_coopmat = false;
    const tuning::Table table;
    for (const Kernel k : {Kernel::coopmat, Kernel::coopmat2}) {
      CAPTURE(to_string(k));
      const kernels::Types t{DataType::bf16, DataType::f32, false};
      // The shapes but not the feature.
      expect_error([&] { kernels::check_supported(d, table, t, {.kernel = k}); }, ErrorCode::unsupported_config,
                   "need the shaderBFloat16CooperativeMatrix feature (VK_KHR_shader_bfloat16); a described device "
                   "without bf16 matrices does not have it");
      // The feature but f16 shapes only.
      expect_error([&] { kernels::check_supported(f16_only, table, t, {.kernel = k}); }, ErrorCode::unsupported_config,
                   k == Kernel::coopmat ? "needs a subgroup-scope cooperative matrix shape bf16 x bf16 + f32 -> f32"
                                        : "needs a workgroup-scope flexible shape bf16 x bf16 + f32 -> f32");
      // Both: admitted (where this build has the kernel).
      DeviceInfo both = d;
      both.bfloat16 = both.bfloat16_coopmat = true;
      const bool built = VKGEMM_EXPECT_BF16_MATRICES && (k == Kernel::coopmat ? VKGEMM_EXPECT_COOPMAT : VKGEMM_EXPECT_COOPMAT2);
      if (built) CHECK_NOTHROW(kernels::check_supported(both, table, t, {.kernel = k}));
    }
  }

  // Sums that are exact in fp32, whose bf16 rounding is known: ties to even either way, just above and below
  // a tie, negative, and a tie past bf16's largest (to infinity). Each kernel must round C as
  // float_to_bfloat16 does, bit for bit, through its own bf16 store (beta 0).
  void check_bf16_rounding(std::initializer_list<Kernel> kernels) {
    // C(i, j) = a(i, 0) + a(i, 1) (B all ones): exact in fp32, and not a bf16 value.
    const std::vector<std::array<float, 2>> sums = {
        {1.0f, 0x1p-8f}, {1.0f, 0x1.8p-7f}, {1.0f, 0x1.8p-8f}, {1.0f, 0x1p-9f}, {1.0f, -0x1p-9f}, {-1.0f, -0x1.8p-8f},
        {1.0f, 0x1.fcp-8f}, {0x1.fep127f, 0x1p119f}};
    const auto m = static_cast<uint32_t>(sums.size());
    const uint32_t n = 3, k = 2;
    std::vector<uint16_t> a(uint64_t{m} * k), b(uint64_t{k} * n, float_to_bfloat16(1.0f)), want(uint64_t{m} * n);
    for (uint32_t i = 0; i < m; ++i) {
      a[i * k] = float_to_bfloat16(sums[i][0]);
      a[i * k + 1] = float_to_bfloat16(sums[i][1]);
      REQUIRE(bfloat16_to_float(a[i * k + 1]) == sums[i][1]);  // the inputs are bf16 values
      for (uint32_t j = 0; j < n; ++j) want[i * n + j] = float_to_bfloat16(sums[i][0] + sums[i][1]);
    }
    CHECK(want[0] == 0x3f80);            // 1 + 2^-8: a tie, to even (down)
    CHECK(want[n] == 0x3f82);            // 1 + 3 * 2^-8: a tie, to even (up)
    CHECK(want[(m - 1) * n] == 0x7f80);  // bf16's largest plus half an ulp: infinity
    for (const Kernel kernel : kernels) {
      const bool simt = kernel == Kernel::naive || kernel == Kernel::tiled;
      const GemmOptions options{.kernel = kernel, .tile = simt ? 4u : 16u};  // 16: the matrix kernels choose
      try {
        test::engine().check_supported(DataType::bf16, DataType::bf16, options);
      } catch (const Error& why) {
        test::skip(why.what());
        continue;
      }
      std::vector<uint16_t> got(uint64_t{m} * n);
      test::engine().gemm(DataType::bf16, DataType::bf16, m, n, k, a.data(), b.data(), got.data(), options);
      for (size_t i = 0; i < got.size(); ++i) {
        CHECK_MESSAGE(got[i] == want[i], to_string(kernel), " element ", i, ": got ", fmt::format("{:#06x}", got[i]),
                      " want ", fmt::format("{:#06x}", want[i]));
      }
    }
  }

  TEST_CASE("bf16 C is rounded to nearest even by the SIMT kernels, bit for bit") {
    if (!runs(DataType::bf16)) return;
    check_bf16_rounding({Kernel::naive, Kernel::tiled});
  }

  // A case of its own: a skip where the device has no bf16 matrices (lavapipe) names what it lacks.
  TEST_CASE("bf16 C is rounded to nearest even by the matrix kernels, bit for bit") {
    check_bf16_rounding({Kernel::coopmat, Kernel::coopmat2});
  }

  TEST_CASE("i8 and u8: exact, sign and zero extended, wrapping modulo 2^32 on the GPU") {
    for (const DataType t : {DataType::i8, DataType::u8}) {
      if (!runs(t)) return;
      CAPTURE(to_string(t));
      auto rng = test::case_rng(fmt::format("narrow wrap {}", to_string(t)));
      // alpha = 2^20 with sums of up to 67 * 2^14 and beta = 3 * 2^29: both products overflow int32.
      for (Kernel kernel : {Kernel::naive, Kernel::tiled}) {
        GemmDesc d;
        d.type = t, d.m = 17, d.n = 9, d.k = 67, d.lda = 67, d.ldb = 9, d.ldc = 9;
        d.alpha = 1 << 20, d.beta = 3 << 29;
        const auto r = test::check_gemm_call(d, {.kernel = kernel, .tile = 8}, rng);
        CHECK_MESSAGE(r.passed, r.detail);
      }
    }
  }

  TEST_CASE("SIMT bf16 over every tile boundary, C f32 and C bf16") {
    if (!runs(DataType::bf16)) return;
    for (DataType out : {DataType::f32, DataType::bf16}) {
      run_shapes(DataType::bf16, out, {.kernel = Kernel::tiled, .tile = 16});
      run_shapes(DataType::bf16, out, {.kernel = Kernel::naive, .tile = 8});
    }
  }

  // The tiled kernel's packed dot products (four K elements a 32-bit word, 4 x tile of K a step), where the
  // device has them: K across every word and step boundary, for tiles 4, 8 and 16, sides across the tile;
  // each plan must name the form. Mutations (shown once by hand, SPIR-V swapped in the development build):
  // i8 summed as unsigned bytes, or the word's bytes packed one place off, fail every tile.
  TEST_CASE("tiled i8 and u8 through packed dot products: every word and step boundary of K") {
    const Engine& e = test::engine();
    if (!e.device().integer_dot || !VKGEMM_EXPECT_INTEGER_DOT) {
      test::skip(e.device().integer_dot ? "this build has no packed-dot variant (its glslangValidator lacks "
                                          "GL_EXT_integer_dot_product)"
                                        : e.device().name + " has no shaderIntegerDotProduct (Vulkan 1.3)");
      return;
    }
    for (const DataType t : {DataType::i8, DataType::u8}) {
      if (!runs(t)) return;
      auto rng = test::case_rng(fmt::format("narrow dot {}", to_string(t)));
      int failures = 0, count = 0;
      for (const uint32_t tile : {4u, 8u, 16u}) {
        const uint32_t step = 4 * tile;
        for (const uint32_t k : {1u, 2u, 3u, 4u, 5u, 6u, step - 1, step, step + 2, 2 * step + 3, 3 * step - 2}) {
          const auto r = test::check_product(t, DataType::i32, tile + 1, tile - 1, k,
                                             {.kernel = Kernel::tiled, .tile = tile}, rng);
          ++count;
          if (r.passed && r.timing.config.find("packed dot products") == std::string::npos) {
            FAIL_CHECK("tile ", tile, " ran ", r.timing.config);
          }
          if (!r.passed && ++failures <= 5) FAIL_CHECK("seed ", test::run_seed(), ": ", r.detail);
        }
      }
      CHECK_MESSAGE(failures == 0, to_string(t), ": ", failures, " of ", count, " products failed; seed ",
                    test::run_seed());
    }
  }

  TEST_CASE("SIMT i8 and u8 over every tile boundary") {
    for (const DataType t : {DataType::i8, DataType::u8}) {
      if (!runs(t)) return;
      run_shapes(t, DataType::i32, {.kernel = Kernel::tiled, .tile = 16});
      run_shapes(t, DataType::i32, {.kernel = Kernel::naive, .tile = 8});
    }
  }

  // On a device with bf16 or int8 matrices auto takes a matrix kernel for them (coopmat2, coopmat), else tiled.
  TEST_CASE("auto runs every narrow type") {
    auto rng = test::case_rng("narrow auto");
    for (const DataType t : {DataType::bf16, DataType::i8, DataType::u8}) {
      if (!runs(t)) return;
      const auto r = test::check_product(t, default_output_type(t), 40, 24, 33, {}, rng);
      CHECK_MESSAGE(r.passed, r.detail);
    }
  }
}
