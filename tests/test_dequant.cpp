// The dequantization of int8 products (blas.hpp's ScaleAxis): i8 and u8 A and B into f32 or f16 C, the exact
// integer sums times a per-tensor or per-column scale, then beta C, the bias and the activation, on every
// kernel that multiplies int8 (naive, tiled, the KHR coopmat and coopmat2 kernels) against the CPU
// reference; a watchdog's K chunks (each scaled, the last alone applying the epilogue); the door's refusals;
// and mutations showing that the bound rejects a dequantization done wrong (the scale on the wrong axis,
// skipped, applied twice, applied after the activation).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "kernels/registry.hpp"
#include "support.hpp"
#include "vkgemm/plan.hpp"
#include "vkgemm/reference.hpp"

using namespace vkgemm;

namespace {

// The activation on the host, for the mutations (the reference's formulas in double).
double activate(const Epilogue& e, double x) {
  switch (e.activation) {
    case Activation::none: return x;
    case Activation::relu: return x > 0 ? x : 0.0;
    case Activation::leaky_relu: return x >= 0 ? x : e.slope * x;
    case Activation::gelu_tanh: return 0.5 * x * (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
    case Activation::gelu_erf: return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
    case Activation::silu: return x / (1 + std::exp(-x));
    case Activation::sigmoid: return 1 / (1 + std::exp(-x));
    case Activation::tanh: return std::tanh(x);
    case Activation::clamp: return std::min(std::max(x, *e.lo), *e.hi);
  }
  return x;
}

// Whether `kernel` runs `input` -> `output` here; a skip names why not.
bool runs(Kernel kernel, DataType input, DataType output, const GemmOptions& options) {
  try {
    test::engine().check_supported(input, output, options);
  } catch (const Error& e) {
    if (e.code() != ErrorCode::unsupported_type && e.code() != ErrorCode::unsupported_config) throw;
    MESSAGE("not on this device: ", to_string(kernel), " ", to_string(input), " -> ", to_string(output), ": ",
            std::string(e.what()));
    return false;
  }
  return true;
}

// Case i's dequantization and epilogue: the scale per_tensor or per_column, the bias's axis and type turning
// with i so that every pair meets across the activations. The tensor scale keeps the values O(1) for the
// activations to bend (none saturates, so that a wrong scale shows): an i8 sum of k terms is about
// +-5500 sqrt(k), a u8 one (all terms positive) about 16000 k.
Epilogue dequant_case(Activation act, size_t i, DataType input, DataType c_type) {
  Epilogue e;
  e.activation = act;
  e.scale = i % 2 ? ScaleAxis::per_column : ScaleAxis::per_tensor;
  const float typical = input == DataType::u8 ? 1.0f / 262144 : 1.0f / 4096;
  e.tensor_scale = e.scale == ScaleAxis::per_column ? typical * 16 : typical;  // per_column scales are ~1/16
  e.bias = static_cast<BiasAxis>((i / 2) % 3);
  e.bias_type = (i / 6) % 2 ? c_type : DataType::f32;
  e.slope = 0.125f;
  e.lo = -0.25f, e.hi = 0.5f;
  return e;
}

// Every activation with both scales (and bias axes and types) on `kernel` for `input` -> `output`, over shapes
// that cross its tiles, row- and column-major, with alpha and beta; returns how many products ran.
int run_dequant(Kernel kernel, DataType input, DataType output, const GemmOptions& options) {
  const std::string name = fmt::format("dequant {} {} {}", to_string(kernel), to_string(input), to_string(output));
  auto rng = test::case_rng(name);
  const test::GridSample sample = test::grid_sample(name);  // the sync pass takes one in 4
  constexpr std::array<int64_t, 3> kShapes[] = {{37, 45, 29}, {64, 16, 67}, {5, 130, 8}};
  int ran = 0;
  size_t i = 0;
  for (const Activation act : test::every_activation()) {
    for (int scale = 0; scale < 2; ++scale, ++i) {
      if (!sample.takes(i)) continue;
      const auto [m, n, k] = kShapes[i % 3];
      GemmDesc d;
      d.type = input, d.c_type = output, d.m = m, d.n = n, d.k = k;
      d.layout = (i / 3) % 2 ? Layout::col_major : Layout::row_major;
      // A u8 product's sums are all positive: a negative alpha would put every element where ReLU and GELU
      // are flat (0), and a wrong scale could not show; its alpha stays positive.
      d.alpha = i % 4 == 3 ? (input == DataType::u8 ? 1.5 : -1.5) : 1.0;
      d.beta = i % 5 == 4 ? 0.5 : 0.0;
      d.epilogue = dequant_case(act, i, input, output);
      const auto result = test::check_gemm_call(d, options, rng, i % 2 ? 0 : 3);
      INFO("seed ", test::run_seed(), ": ", result.detail);
      CHECK(result.passed);
      ++ran;
    }
  }
  return ran;
}

void every_type(Kernel kernel, const GemmOptions& options) {
  int ran = 0;
  for (const DataType input : {DataType::i8, DataType::u8}) {
    for (const DataType output : {DataType::f32, DataType::f16}) {
      CAPTURE(to_string(input));
      CAPTURE(to_string(output));
      if (runs(kernel, input, output, options)) ran += run_dequant(kernel, input, output, options);
    }
  }
  if (ran == 0) test::skip(fmt::format("{} dequantizes no int8 type on {}", to_string(kernel), test::engine().device().name));
}

}  // namespace

TEST_SUITE("dequant") {
  TEST_CASE("naive kernel") { every_type(Kernel::naive, {.kernel = Kernel::naive, .tile = 8}); }
  TEST_CASE("tiled kernel") { every_type(Kernel::tiled, {.kernel = Kernel::tiled, .tile = 16}); }
  TEST_CASE("coopmat kernel") { every_type(Kernel::coopmat, {.kernel = Kernel::coopmat}); }
  TEST_CASE("coopmat2 kernel") { every_type(Kernel::coopmat2, {.kernel = Kernel::coopmat2}); }
  TEST_CASE("auto") { every_type(Kernel::automatic, {}); }

  TEST_CASE("no scale: the sums converted, alpha in fp32") {
    auto rng = test::case_rng("dequant plain");
    for (const DataType output : {DataType::f32, DataType::f16}) {
      GemmDesc d;
      d.type = DataType::i8, d.c_type = output, d.m = 9, d.n = 12, d.k = 4000;
      if (output == DataType::f16) d.alpha = 1.0 / 8192;  // inside f16's range
      const auto result = test::check_gemm_call(d, {.kernel = Kernel::tiled}, rng);
      INFO("seed ", test::run_seed(), ": ", result.detail);
      CHECK(result.passed);
    }
  }

  TEST_CASE("K chunks: every chunk scaled, the last alone applying the epilogue") {
    auto rng = test::case_rng("dequant K chunks");
    for (const Activation act : {Activation::sigmoid, Activation::gelu_erf, Activation::relu}) {
      GemmDesc d;
      d.type = DataType::i8, d.c_type = DataType::f32, d.m = 33, d.n = 20, d.k = 70, d.beta = 0.75;
      d.epilogue = dequant_case(act, 1, DataType::i8, DataType::f32);  // per_column, a per_column bias
      const auto result = test::check_gemm_call(d, {.kernel = Kernel::naive, .max_k_per_submission = 16}, rng);
      INFO("seed ", test::run_seed(), ": ", result.detail);
      CHECK(result.passed);
    }
  }

  TEST_CASE("a plan's K pieces (a watchdog bound) and the vectors at an offset") {
    Engine& e = test::engine();
    auto rng = test::case_rng("dequant plan");
    GemmDesc d;
    d.type = DataType::u8, d.c_type = DataType::f16, d.m = 21, d.n = 34, d.k = 70, d.beta = 0.5;
    d.epilogue = dequant_case(Activation::tanh, 3, DataType::u8, DataType::f16);  // per_column, bias per_column
    d.layout = Layout::col_major;
    const auto a = test::random_elements(DataType::u8, 21 * 70, rng), b = test::random_elements(DataType::u8, 70 * 34, rng);
    const auto c0 = test::random_elements(DataType::f16, 21 * 34, rng);
    const auto vectors = test::epilogue_vectors(d, rng);
    Buffer ba = e.create_buffer(a.size()), bb = e.create_buffer(b.size()), bc = e.create_buffer(c0.size());
    Buffer bv = e.create_buffer(4096);
    e.write(ba, 0, a.data(), a.size()), e.write(bb, 0, b.data(), b.size());
    GemmPlan plan = e.plan(d, {.gemm = {.kernel = Kernel::tiled, .max_k_per_submission = 16}, .bias_offset = 12});
    CHECK(plan.config().find("pieces") != std::string::npos);
    for (const uint64_t offset : {uint64_t{12}, uint64_t{12 + plan.offset_granularity()}}) {
      e.write(bc, 0, c0.data(), c0.size());
      e.write(bv, offset, vectors.data(), vectors.size());
      e.run(plan, {&ba, 0}, {&bb, 0}, {&bc, 0}, {&bv, offset});
      std::vector<std::byte> c(c0.size());
      e.read(bc, 0, c.data(), c.size());
      const Comparison cmp = compare_with_reference(d, a.data(), b.data(), c0.data(), c.data(),
                                                    {.random_inputs = true, .k_chunks = 5}, vectors.data());
      INFO(plan.config(), ", vectors at ", offset, ": ", cmp.summary());
      CHECK(cmp.passed);
    }
    test::expect_error([&] { e.run(plan, {&ba, 0}, {&bb, 0}, {&bc, 0}); }, ErrorCode::invalid_argument,
                       "dequantization scales (per_column: n = 34 f32 values) then the bias");
  }

  TEST_CASE("refused at the door, naming the argument") {
    Engine& e = test::engine();
    std::vector<std::byte> host(64 * 64 * 8), vectors(256);
    const auto refused = [&](const GemmDesc& desc, ErrorCode code, const char* words) {
      test::expect_error([&] { e.gemm(desc, host.data(), host.data(), host.data(), {}, vectors.data()); }, code, words);
    };
    GemmDesc d;
    d.type = DataType::i8, d.c_type = DataType::f32, d.m = d.n = d.k = 8;
    GemmDesc on_float = d;  // a scale on a float product
    on_float.type = DataType::f16;
    on_float.epilogue.scale = ScaleAxis::per_tensor;
    refused(on_float, ErrorCode::invalid_argument, "applies to an i8 or u8 product into f32 or f16 C; this is f16");
    GemmDesc on_i32 = d;  // a scale on integer C
    on_i32.c_type.reset();
    on_i32.epilogue.scale = ScaleAxis::per_column;
    refused(on_i32, ErrorCode::invalid_argument, "this is i8 into i32");
    GemmDesc bias_on_i32 = on_i32;  // an epilogue on integer C, as before
    bias_on_i32.epilogue = {.activation = Activation::relu};
    refused(bias_on_i32, ErrorCode::invalid_argument, "float C only");
    GemmDesc unused = d;  // a tensor_scale that would be ignored
    unused.epilogue.tensor_scale = 0.5f;
    refused(unused, ErrorCode::invalid_argument, "tensor_scale 0.5 is set but epilogue.scale is none");
    GemmDesc not_finite = d;
    not_finite.epilogue = {.scale = ScaleAxis::per_tensor, .tensor_scale = NAN};
    refused(not_finite, ErrorCode::invalid_argument, "tensor_scale nan is not finite");
    GemmDesc unknown = d;
    unknown.epilogue.scale = static_cast<ScaleAxis>(7);
    refused(unknown, ErrorCode::invalid_argument, "epilogue.scale 7");
    GemmDesc long_k = d;  // sums that could wrap
    long_k.type = DataType::u8, long_k.k = 33026;
    test::expect_error([&] { (void)e.plan(long_k); }, ErrorCode::invalid_argument, "takes k up to 33025");
    GemmDesc i32_out = d;  // i32 inputs do not dequantize
    i32_out.type = DataType::i32;
    refused(i32_out, ErrorCode::invalid_argument, "i32 inputs give C of i32");
    GemmDesc f64_bias = d;
    f64_bias.epilogue = {.bias = BiasAxis::per_row, .bias_type = DataType::f64, .scale = ScaleAxis::per_tensor};
    refused(f64_bias, ErrorCode::invalid_argument, "bias_type f64 must be f32 or C's type (f32)");
    GemmDesc no_vectors = d;
    no_vectors.epilogue.scale = ScaleAxis::per_column;
    test::expect_error([&] { e.gemm(no_vectors, host.data(), host.data(), host.data(), {}, nullptr); },
                       ErrorCode::invalid_argument, "per_column scales but their host pointer (bias) is null");
    DeviceInfo bare = e.device();  // i8 into f16 C where the device cannot store 16-bit words
    bare.storage16 = false, bare.name = "a device without 16-bit storage";
    test::expect_error(
        [&] { kernels::check_supported(bare, tuning::Table{}, {DataType::i8, DataType::f16, false}, {.kernel = Kernel::tiled}); },
        ErrorCode::unsupported_type, "i8 into f16 C needs the storageBuffer16BitAccess feature, which a device without");
    Buffer small = e.create_buffer(64 * 8), tiny = e.create_buffer(28);
    test::expect_error([&] { e.gemm(no_vectors, {&small, 0}, {&small, 0}, {&small, 0}, {}, {&tiny, 0}); },
                       ErrorCode::buffer_too_small, "scales (per_column: n = 8 f32 values) needs 32 bytes");
    test::expect_error([&] { e.gemm(no_vectors, {&small, 0}, {&small, 0}, {&small, 0}, {}, {&small, 2}); },
                       ErrorCode::invalid_argument, "offset 2 is not a multiple of the 4-byte element");
  }

  TEST_CASE("mutations: a dequantization done wrong fails the check") {
    // The right result computed on the host from the exact sums (i8 -> i32 on the CPU reference), then made
    // wrong four ways; the check must refuse each, at every activation, and pass the right one.
    auto rng = test::case_rng("dequant mutations");
    constexpr int64_t kSide = 24, kK = 40;
    GemmDesc d;
    d.type = DataType::i8, d.c_type = DataType::f32, d.m = d.n = kSide, d.k = kK, d.alpha = -1.5;
    const auto a = test::random_elements(DataType::i8, kSide * kK, rng), b = test::random_elements(DataType::i8, kK * kSide, rng);
    GemmDesc sums_desc = d;
    sums_desc.c_type.reset(), sums_desc.alpha = 1.0;
    std::vector<int32_t> sums(kSide * kSide), zero(kSide * kSide, 0);
    reference_gemm(sums_desc, a.data(), b.data(), zero.data(), sums.data());
    const std::vector<float> c0(kSide * kSide, 0.0f);
    for (const Activation act : test::every_activation()) {
      CAPTURE(to_string(act));
      d.epilogue = {.bias = BiasAxis::per_column, .activation = act, .slope = 0.125f, .lo = -0.25f, .hi = 0.5f,
                    .scale = ScaleAxis::per_column, .tensor_scale = 1.0f / 4096};  // x = O(1): the activations bend
      const auto vectors = test::epilogue_vectors(d, rng);
      const auto* scale = reinterpret_cast<const float*>(vectors.data());
      const float* bias = scale + kSide;
      // power: the scale's exponent (0 skipped, 1 right, 2 twice); by_row: indexed by the row; after: applied
      // to the activation's result instead of the sum.
      const auto result = [&](int power, bool by_row, bool after) {
        std::vector<float> c(kSide * kSide);
        for (int64_t i = 0; i < kSide; ++i)
          for (int64_t j = 0; j < kSide; ++j) {
            const double s = std::pow(double(scale[by_row ? i : j]), power);
            const double x = d.alpha * d.epilogue.tensor_scale * (after ? 1.0 : s) * sums[size_t(i * kSide + j)] + bias[j];
            const double y = activate(d.epilogue, x);
            c[size_t(i * kSide + j)] = static_cast<float>(after ? y * s : y);
          }
        return c;
      };
      const auto passes = [&](const std::vector<float>& c) {
        return compare_with_reference(d, a.data(), b.data(), c0.data(), c.data(), {.random_inputs = true}, vectors.data())
            .passed;
      };
      CHECK(passes(result(1, false, false)));
      CHECK_FALSE(passes(result(1, true, false)));   // the scale on the wrong axis
      CHECK_FALSE(passes(result(0, false, false)));  // skipped
      CHECK_FALSE(passes(result(2, false, false)));  // applied twice
      CHECK_FALSE(passes(result(1, false, true)));   // applied after the activation
    }
  }
}
