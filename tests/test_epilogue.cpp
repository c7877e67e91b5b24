// Fused epilogues (blas.hpp's Epilogue): every kernel x activation x bias x float type it applies to against
// the CPU reference, the split-K reduce pass and K chunks applying it once, plans recording a bias at an
// offset, the door's refusals, and mutations showing that the bound rejects an epilogue done wrong (bias on
// the wrong axis, activation skipped, applied twice, applied before alpha).
#include <doctest/doctest.h>

#include <cstring>

#include <algorithm>
#include <cmath>
#include <random>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "support.hpp"
#include "vkgemm/plan.hpp"
#include "vkgemm/reference.hpp"

using namespace vkgemm;

namespace {

bool transcendental(Activation a) {
  return a == Activation::gelu_tanh || a == Activation::gelu_erf || a == Activation::silu ||
         a == Activation::sigmoid || a == Activation::tanh;
}

// The epilogue of case `i`: its activation, the bias axis and type turning with it so that every pair meets.
Epilogue epilogue_case(Activation act, size_t i, DataType c_type) {
  Epilogue e;
  e.activation = act;
  e.bias = static_cast<BiasAxis>(i % 3);
  e.bias_type = (i / 3) % 2 ? c_type : DataType::f32;
  // Parameters no float holds (0.7f != 0.7): an f64 product must apply them as doubles.
  e.slope = 0.7;
  e.lo = -0.3, e.hi = 0.7;
  return e;
}

// Whether `kernel` runs `input` -> `output` here; a skip names why not.
bool runs(Kernel kernel, DataType input, DataType output, const GemmOptions& options) {
  if (input == DataType::f64 && !test::engine().device().float64) return false;
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

// Every activation (and bias axis and type) on `kernel` for inputs `input` and C `output`, over shapes that
// cross its tiles and shapes of whole tiles, row- and column-major, with alpha and beta; returns how many
// products ran.
int run_epilogues(Kernel kernel, DataType input, DataType output, const GemmOptions& options) {
  const std::string name = fmt::format("epilogue {} {} {}", to_string(kernel), to_string(input), to_string(output));
  auto rng = test::case_rng(name);
  const test::GridSample sample = test::grid_sample(name);  // the sync and GPU-AV passes take one in 4
  int ran = 0;
  size_t i = 0;
  uint64_t index = 0;
  for (const Activation act : test::every_activation()) {
    if (output == DataType::f64 && transcendental(act)) continue;  // refused at the door (a test below)
    // Then whole tiles (the matrix kernels store their fragments straight, the epilogue applied in registers),
    // whole tiles beside an edge row, and whole 16-byte units of C short of a power-of-two block (the thin
    // kernel's padded block: its columns past N neither stored nor given a bias from past the vector).
    for (const auto [m, n, k] : {std::array<int64_t, 3>{37, 45, 29}, {64, 16, 67}, {5, 130, 8}, {64, 128, 64},
                                 {72, 128, 40}, {64, 24, 16}}) {
      if (!sample.takes(index++)) {
        ++i;  // the same case gets the same epilogue in every pass
        continue;
      }
      GemmDesc d;
      d.type = input, d.c_type = output, d.m = m, d.n = n, d.k = k;
      d.layout = i % 2 ? Layout::col_major : Layout::row_major;
      d.alpha = i % 4 == 3 ? -1.5 : 1.0;
      d.beta = i % 5 == 4 ? 0.5 : 0.0;
      d.epilogue = epilogue_case(act, i++, output);
      const auto result = test::check_gemm_call(d, options, rng, i % 2 ? 0 : 3);
      INFO("seed ", test::run_seed(), ": ", result.detail);
      CHECK(result.passed);
      ++ran;
    }
  }
  return ran;
}

// The activation on the host, for the mutation that applies it a second time.
double activate(const Epilogue& e, double x) {
  switch (e.activation) {
    case Activation::leaky_relu: return x >= 0 ? x : e.slope * x;
    case Activation::gelu_tanh: return 0.5 * x * (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
    case Activation::gelu_erf: return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
    case Activation::silu: return x / (1 + std::exp(-x));
    case Activation::sigmoid: return 1 / (1 + std::exp(-x));
    case Activation::tanh: return std::tanh(x);
    default: return x;
  }
}

struct TypePair {
  DataType input, output;
};
constexpr TypePair kFloatTypes[] = {{DataType::f32, DataType::f32}, {DataType::f64, DataType::f64},
                                    {DataType::f16, DataType::f32}, {DataType::f16, DataType::f16},
                                    {DataType::bf16, DataType::f32}, {DataType::bf16, DataType::bf16}};

void every_type(Kernel kernel, const GemmOptions& options) {
  int ran = 0;
  for (const TypePair& pair : kFloatTypes) {
    const DataType input = pair.input, output = pair.output;  // not a structured binding: CAPTURE's lambda takes them
    // fp16 sums: f16 inputs and C alone.
    if (options.f16_accumulate && (input != DataType::f16 || output != DataType::f16)) continue;
    CAPTURE(to_string(input));
    CAPTURE(to_string(output));
    if (runs(kernel, input, output, options)) ran += run_epilogues(kernel, input, output, options);
  }
  if (ran == 0) test::skip(fmt::format("{} runs no float type on {}", to_string(kernel), test::engine().device().name));
}

}  // namespace

TEST_SUITE("epilogue") {
  TEST_CASE("naive kernel") { every_type(Kernel::naive, {.kernel = Kernel::naive, .tile = 8}); }
  TEST_CASE("tiled kernel") { every_type(Kernel::tiled, {.kernel = Kernel::tiled, .tile = 16}); }
  TEST_CASE("gemv kernel") { every_type(Kernel::gemv, {.kernel = Kernel::gemv}); }
  TEST_CASE("blocked kernel") {
    every_type(Kernel::blocked, {.kernel = Kernel::blocked, .blocked = parse_blocked_config("64x64x8 8x4")});
  }
  TEST_CASE("blocked kernel, split-K: the reduce pass applies it once") {
    every_type(Kernel::blocked, {.kernel = Kernel::blocked, .blocked = parse_blocked_config("64x64x8 8x4 split 3")});
  }
  TEST_CASE("coopmat kernel") { every_type(Kernel::coopmat, {.kernel = Kernel::coopmat}); }
  TEST_CASE("coopmat kernel, fp16 sums") {
    every_type(Kernel::coopmat, {.kernel = Kernel::coopmat, .f16_accumulate = true});
  }
  TEST_CASE("coopmat2 kernel") { every_type(Kernel::coopmat2, {.kernel = Kernel::coopmat2}); }
  TEST_CASE("thin kernel") { every_type(Kernel::thin, {.kernel = Kernel::thin}); }
  TEST_CASE("auto") { every_type(Kernel::automatic, {}); }

  TEST_CASE("f64: leaky ReLU's slope and clamp's bounds are doubles, held to the f64 bound") {
    // 0.7 and -0.3 are not floats: carried as floats they err by about 1e-8 of the element, which the f64
    // bound (about 1e-15 of |A||B|) rejects. Every case, not a grid's sample: alpha 3 spreads x over about
    // +-10, so both bounds and the negative side are taken.
    auto rng = test::case_rng("epilogue f64 parameters");
    int ran = 0;
    for (const Kernel kernel : {Kernel::naive, Kernel::tiled, Kernel::blocked, Kernel::automatic}) {
      const GemmOptions options{.kernel = kernel};
      if (!runs(kernel, DataType::f64, DataType::f64, options)) continue;
      for (const Epilogue& e : {Epilogue{.activation = Activation::leaky_relu, .slope = 0.7},
                                Epilogue{.bias = BiasAxis::per_row, .activation = Activation::clamp, .lo = -0.3, .hi = 0.7},
                                Epilogue{.activation = Activation::clamp, .lo = -2.0 / 3, .hi = 0.1}}) {
        for (const Layout layout : {Layout::row_major, Layout::col_major}) {
          GemmDesc d;
          d.type = DataType::f64, d.m = 37, d.n = 45, d.k = 29, d.alpha = 3.0, d.beta = 0.5, d.layout = layout;
          d.epilogue = e;
          const auto result = test::check_gemm_call(d, options, rng);
          INFO(to_string(kernel), " ", to_string(e.activation), ", seed ", test::run_seed(), ": ", result.detail);
          CHECK(result.passed);
          ++ran;
        }
      }
    }
    if (ran == 0) test::skip(fmt::format("{} runs no f64", test::engine().device().name));
  }

  TEST_CASE("GELU, SiLU and sigmoid far out: sums of several hundred, where exp's argument is capped") {
    // alpha 200 spreads x over about -1000 to 1000: sigmoid and SiLU below -44 and GELU's tanh form below about
    // -7.6 take the capped exp (epilogue.glsl's kExpCap).
    auto rng = test::case_rng("epilogue far out");
    int ran = 0;
    for (const Kernel kernel : {Kernel::naive, Kernel::tiled, Kernel::blocked, Kernel::coopmat, Kernel::coopmat2}) {
      for (const DataType type : {DataType::f32, DataType::f16}) {
        const GemmOptions options{.kernel = kernel};
        if (!runs(kernel, type, DataType::f32, options)) continue;
        for (const Activation act : {Activation::gelu_tanh, Activation::silu, Activation::sigmoid}) {
          GemmDesc d;
          d.type = type, d.c_type = DataType::f32, d.m = 40, d.n = 36, d.k = 29, d.alpha = 200.0;
          d.epilogue = {.bias = BiasAxis::per_column, .activation = act};
          const auto result = test::check_gemm_call(d, options, rng);
          INFO(to_string(kernel), " ", to_string(type), " ", to_string(act), ", seed ", test::run_seed(), ": ",
               result.detail);
          CHECK(result.passed);
          ++ran;
        }
      }
    }
    CHECK(ran >= 12);  // naive and tiled run f32 and f16 everywhere
  }

  TEST_CASE("K chunks: the last applies it, the earlier ones keep raw sums") {
    auto rng = test::case_rng("epilogue K chunks");
    for (const Activation act : {Activation::sigmoid, Activation::gelu_erf, Activation::leaky_relu}) {
      GemmDesc d;
      d.m = 33, d.n = 20, d.k = 70, d.beta = 0.75;
      d.epilogue = epilogue_case(act, 1, DataType::f32);
      const auto result = test::check_gemm_call(d, {.kernel = Kernel::naive, .max_k_per_submission = 16}, rng);
      INFO("seed ", test::run_seed(), ": ", result.detail);
      CHECK(result.passed);
    }
  }

  TEST_CASE("a plan's K pieces (a watchdog bound): the last piece applies it") {
    Engine& e = test::engine();
    auto rng = test::case_rng("epilogue K pieces");
    GemmDesc d;
    d.m = 21, d.n = 34, d.k = 70, d.beta = 0.5;
    d.epilogue = {.bias = BiasAxis::per_row, .activation = Activation::gelu_erf};
    const auto a = test::random_elements(DataType::f32, 21 * 70, rng), b = test::random_elements(DataType::f32, 70 * 34, rng);
    const auto c0 = test::random_elements(DataType::f32, 21 * 34, rng), bias = test::random_elements(DataType::f32, 21, rng);
    Buffer ba = e.create_buffer(a.size()), bb = e.create_buffer(b.size()), bc = e.create_buffer(c0.size());
    Buffer bbias = e.create_buffer(bias.size());
    e.write(ba, 0, a.data(), a.size()), e.write(bb, 0, b.data(), b.size()), e.write(bc, 0, c0.data(), c0.size());
    e.write(bbias, 0, bias.data(), bias.size());
    GemmPlan plan = e.plan(d, {.gemm = {.kernel = Kernel::tiled, .max_k_per_submission = 16}});
    CHECK(plan.config().find("pieces") != std::string::npos);
    e.run(plan, {&ba, 0}, {&bb, 0}, {&bc, 0}, {&bbias, 0});
    std::vector<std::byte> c(c0.size());
    e.read(bc, 0, c.data(), c.size());
    const Comparison cmp = compare_with_reference(d, a.data(), b.data(), c0.data(), c.data(), {.random_inputs = true},
                                                  bias.data());
    INFO(plan.config(), ": ", cmp.summary());
    CHECK(cmp.passed);
  }

  TEST_CASE("alpha = 0 and k = 0: the epilogue still applies to beta C") {
    auto rng = test::case_rng("epilogue empty sum");
    for (const auto& [alpha, k] : {std::pair{0.0, int64_t{12}}, std::pair{1.0, int64_t{0}}}) {
      GemmDesc d;
      d.m = 9, d.n = 14, d.k = k, d.alpha = alpha, d.beta = -2.0;
      d.epilogue = epilogue_case(Activation::tanh, 1, DataType::f32);
      const auto result = test::check_gemm_call(d, {.kernel = Kernel::tiled}, rng);
      INFO("seed ", test::run_seed(), ": ", result.detail);
      CHECK(result.passed);
    }
  }

  TEST_CASE("a plan records the bias at another offset, and without it is refused") {
    Engine& e = test::engine();
    auto rng = test::case_rng("epilogue plan");
    GemmDesc d;
    d.m = 40, d.n = 24, d.k = 16;
    d.epilogue = {.bias = BiasAxis::per_column, .activation = Activation::silu};
    const auto a = test::random_elements(DataType::f32, 40 * 16, rng), b = test::random_elements(DataType::f32, 16 * 24, rng);
    const auto bias = test::random_elements(DataType::f32, 24, rng);
    Buffer ba = e.create_buffer(a.size()), bb = e.create_buffer(b.size()), bc = e.create_buffer(40 * 24 * 4);
    Buffer bbias = e.create_buffer(1024);
    e.write(ba, 0, a.data(), a.size());
    e.write(bb, 0, b.data(), b.size());
    GemmPlan plan = e.plan(d, GemmPlanOptions{.bias_offset = 4});
    for (const uint64_t offset : {uint64_t{4}, uint64_t{4 + plan.offset_granularity()}}) {
      e.fill(bc, 0, bc.size(), 0xFFFFFFFFu);
      e.write(bbias, offset, bias.data(), bias.size());
      e.run(plan, {&ba, 0}, {&bb, 0}, {&bc, 0}, {&bbias, offset});
      std::vector<float> c(40 * 24), c0(40 * 24, 0.0f);
      e.read(bc, 0, c.data(), c.size() * 4);
      const Comparison cmp = compare_with_reference(d, a.data(), b.data(), c0.data(), c.data(), {.random_inputs = true},
                                                    bias.data());
      INFO("bias offset ", offset, ": ", cmp.summary());
      CHECK(cmp.passed);
    }
    test::expect_error([&] { e.run(plan, {&ba, 0}, {&bb, 0}, {&bc, 0}); }, ErrorCode::invalid_argument,
                       "gave no bias buffer");
    test::expect_error([&] { e.run(plan, {&ba, 0}, {&bb, 0}, {&bc, 0}, {&bbias, 8}); }, ErrorCode::invalid_argument,
                       "bias_offset");
  }

  TEST_CASE("refused at the door, naming the argument") {
    Engine& e = test::engine();
    GemmDesc d;
    d.m = d.n = d.k = 8;
    const auto refused = [&](GemmDesc desc, const char* words, const GemmOptions& options = {}) {
      std::vector<std::byte> host(8 * 8 * 8), bias(64);
      test::expect_error([&] { e.gemm(desc, host.data(), host.data(), host.data(), options, bias.data()); },
                         ErrorCode::invalid_argument, words);
    };
    GemmDesc ints = d;
    ints.type = DataType::i8;
    ints.epilogue.activation = Activation::relu;
    refused(ints, "float C only");
    GemmDesc f64 = d;
    f64.type = DataType::f64;
    f64.epilogue.activation = Activation::gelu_tanh;
    refused(f64, "not available for f64");
    GemmDesc bias_type = d;
    bias_type.epilogue.bias = BiasAxis::per_row;
    bias_type.epilogue.bias_type = DataType::f16;
    refused(bias_type, "bias_type f16 must be f32 or C's type");
    GemmDesc clamp = d;
    clamp.epilogue = {.activation = Activation::clamp, .lo = 1.0, .hi = -1.0};
    refused(clamp, "lo <= hi");
    // No default bounds (0 would zero C): each missing one is named.
    clamp.epilogue = {.activation = Activation::clamp};
    refused(clamp, "clamp needs both bounds, lo and hi; lo and hi are not set");
    clamp.epilogue = {.activation = Activation::clamp, .hi = 0.5};
    refused(clamp, "lo is not set");
    clamp.epilogue = {.activation = Activation::clamp, .lo = -0.5};
    refused(clamp, "hi is not set");
    GemmDesc slope = d;
    slope.epilogue = {.activation = Activation::leaky_relu, .slope = INFINITY};
    refused(slope, "slope inf is not finite");
    GemmDesc activation = d;
    activation.epilogue.activation = static_cast<Activation>(42);
    refused(activation, "activation 42");
    GemmDesc no_bias = d;
    no_bias.epilogue.bias = BiasAxis::per_column;
    std::vector<float> host(64);
    test::expect_error([&] { e.gemm(no_bias, host.data(), host.data(), host.data(), {}, nullptr); },
                       ErrorCode::invalid_argument, "its host pointer is null");
    test::expect_error(
        [&] {
          GemmDesc emulated = d;
          emulated.epilogue.activation = Activation::relu;
          e.gemm(emulated, host.data(), host.data(), host.data(), {.kernel = Kernel::ozaki});
        },
        ErrorCode::unsupported_config, "takes no epilogue");
    Buffer small = e.create_buffer(64 * 4), tiny = e.create_buffer(16);
    test::expect_error([&] { e.gemm(no_bias, {&small, 0}, {&small, 0}, {&small, 0}, {}, {&tiny, 0}); },
                       ErrorCode::buffer_too_small, "per_column: n = 8 f32 values) needs 32 bytes");
  }

  TEST_CASE("mutations: an epilogue done wrong fails the check") {
    // The reference's result made wrong four ways on the host; the check must refuse each, at every
    // activation where the mistake changes the value (ReLU applied twice is ReLU).
    auto rng = test::case_rng("epilogue mutations");
    GemmDesc d;
    d.m = d.n = 24, d.k = 40, d.alpha = -1.5, d.beta = 0.0;
    const auto a = test::random_elements(DataType::f32, 24 * 40, rng), b = test::random_elements(DataType::f32, 40 * 24, rng);
    const auto bias = test::random_elements(DataType::f32, 24, rng);
    const std::vector<float> c0(24 * 24, 0.0f);
    const auto result = [&](const GemmDesc& desc) {
      std::vector<float> c(24 * 24);
      reference_gemm(desc, a.data(), b.data(), c0.data(), c.data(), bias.data());
      return c;
    };
    const auto passes = [&](const std::vector<float>& c) {
      return compare_with_reference(d, a.data(), b.data(), c0.data(), c.data(), {.random_inputs = true}, bias.data()).passed;
    };
    for (const Activation act : {Activation::gelu_tanh, Activation::gelu_erf, Activation::silu, Activation::sigmoid,
                                 Activation::tanh, Activation::leaky_relu, Activation::relu, Activation::clamp}) {
      CAPTURE(to_string(act));
      d.epilogue = {.bias = BiasAxis::per_column, .activation = act, .slope = 0.125, .lo = -0.25, .hi = 0.5};
      const std::vector<float> right = result(d);
      CHECK(passes(right));
      GemmDesc wrong_axis = d;
      wrong_axis.epilogue.bias = BiasAxis::per_row;
      CHECK_FALSE(passes(result(wrong_axis)));
      GemmDesc skipped = d;
      skipped.epilogue.activation = Activation::none;
      CHECK_FALSE(passes(result(skipped)));
      if (act != Activation::relu && act != Activation::clamp) {  // idempotent: twice is once
        std::vector<float> twice = right;
        for (float& y : twice) y = static_cast<float>(activate(d.epilogue, y));
        CHECK_FALSE(passes(twice));
      }
      GemmDesc before_alpha = d;  // alpha * act(s + bias / alpha): the activation before the scaling
      before_alpha.alpha = 1.0;
      std::vector<float> early = result(before_alpha);
      for (float& y : early) y = static_cast<float>(d.alpha) * y;
      CHECK_FALSE(passes(early));
    }
  }
}

namespace {

// A chain of `widths` (input width first) over `rows` samples with `acts`, run on the device, each layer judged
// against the CPU reference from the input the device gave it (its own intermediates), so that each is held
// to the one-product bound; the last layer's output against the reference from the previous intermediate.
void check_chain(DataType type, int64_t rows, const std::vector<int64_t>& widths, const std::vector<Activation>& acts,
                 const GemmOptions& options) {
  Engine& e = test::engine();
  auto rng = test::case_rng(fmt::format("chain {} {}", to_string(type), rows));
  ChainDesc net{.type = type, .rows = rows, .input_width = widths[0]};
  for (size_t i = 0; i < acts.size(); ++i) {
    net.layers.push_back({widths[i + 1], {.bias = i == 1 ? BiasAxis::none : BiasAxis::per_column, .activation = acts[i]}});
  }
  GemmChain chain = e.chain(net, {.gemm = options, .timestamps = true});
  const uint64_t es = element_size(type);
  const auto x = test::random_elements(type, uint64_t(rows * widths[0]), rng);
  std::vector<std::vector<std::byte>> w, b;
  std::vector<Buffer> wb, bb;
  for (size_t i = 0; i < acts.size(); ++i) {
    w.push_back(test::random_elements(type, uint64_t(widths[i] * widths[i + 1]), rng));
    b.push_back(test::random_elements(DataType::f32, uint64_t(widths[i + 1]), rng));
    wb.push_back(e.create_buffer(w[i].size()));
    bb.push_back(e.create_buffer(b[i].size()));
    e.write(wb[i], 0, w[i].data(), w[i].size());
    e.write(bb[i], 0, b[i].data(), b[i].size());
  }
  Buffer xb = e.create_buffer(x.size()), yb = e.create_buffer(uint64_t(rows * widths.back()) * es);
  e.write(xb, 0, x.data(), x.size());
  e.fill(yb, 0, yb.size(), 0xFFFFFFFFu);
  std::vector<BufferOffset> wo, bo;
  for (size_t i = 0; i < acts.size(); ++i) wo.push_back({&wb[i], 0}), bo.push_back({&bb[i], 0});
  const std::vector<GemmTiming> times = e.run(chain, {&xb, 0}, wo, bo, {&yb, 0});
  CHECK(times.size() == acts.size());
  std::vector<std::byte> in = x;
  for (size_t i = 0; i < acts.size(); ++i) {
    std::vector<std::byte> out(uint64_t(rows * widths[i + 1]) * es);
    e.read(i + 1 < acts.size() ? chain.intermediate(i) : yb, 0, out.data(), out.size());
    GemmDesc d;
    d.type = type, d.c_type = type, d.m = rows, d.n = widths[i + 1], d.k = widths[i];
    d.epilogue = net.layers[i].epilogue;
    const std::vector<std::byte> c0(out.size());
    const Comparison cmp = compare_with_reference(d, in.data(), w[i].data(), c0.data(), out.data(),
                                                  {.random_inputs = true}, b[i].data());
    INFO("layer ", i, " (", to_string(chain.layer(i).kernel()), " ", chain.layer(i).config(), "): ", cmp.summary());
    CHECK(cmp.passed);
    in = std::move(out);
  }
}

// The operands of a chain test: x, each layer's weights and bias (f32) as host bytes and engine buffers.
struct ChainOperands {
  std::vector<std::byte> x;
  std::vector<std::vector<std::byte>> w, b;
  std::vector<Buffer> wb, bb;
  Buffer xb;
  std::vector<BufferOffset> wo, bo;
};

ChainOperands chain_operands(Engine& e, const ChainDesc& net, std::mt19937_64& rng) {
  ChainOperands o;
  o.x = test::random_elements(net.type, uint64_t(net.rows * net.input_width), rng);
  o.xb = e.create_buffer(o.x.size());
  e.write(o.xb, 0, o.x.data(), o.x.size());
  int64_t k = net.input_width;
  for (const ChainLayer& layer : net.layers) {
    o.w.push_back(test::random_elements(net.type, uint64_t(k * layer.width), rng));
    o.b.push_back(test::random_elements(DataType::f32, uint64_t(layer.width), rng));
    o.wb.push_back(e.create_buffer(o.w.back().size()));
    o.bb.push_back(e.create_buffer(o.b.back().size()));
    e.write(o.wb.back(), 0, o.w.back().data(), o.w.back().size());
    e.write(o.bb.back(), 0, o.b.back().data(), o.b.back().size());
    k = layer.width;
  }
  for (size_t i = 0; i < o.wb.size(); ++i) o.wo.push_back({&o.wb[i], 0}), o.bo.push_back({&o.bb[i], 0});
  return o;
}

}  // namespace

TEST_SUITE("chain") {
  TEST_CASE("three layers, each checked from its own input") {
    for (const DataType type : {DataType::f32, DataType::f16}) {
      CAPTURE(to_string(type));
      check_chain(type, 301, {16, 24, 24, 4}, {Activation::relu, Activation::gelu_tanh, Activation::sigmoid}, {});
      check_chain(type, 77, {8, 64, 64, 64}, {Activation::relu, Activation::relu, Activation::sigmoid},
                  {.kernel = Kernel::tiled});
    }
  }

  TEST_CASE("refused: widths that do not meet, a per_row bias, an empty chain, a short list of weights") {
    Engine& e = test::engine();
    test::expect_error([&] { (void)e.chain(ChainDesc{.rows = 4, .input_width = 4}); }, ErrorCode::invalid_argument,
                       "layers is empty");
    test::expect_error(
        [&] { (void)e.chain(ChainDesc{.rows = 4, .input_width = 4, .layers = {{4, {.bias = BiasAxis::per_row}}}}); },
        ErrorCode::invalid_argument, "layer 0's bias is per_row");
    test::expect_error([&] { (void)e.chain(ChainDesc{.rows = 4, .input_width = 4, .layers = {{0, {}}}}); },
                       ErrorCode::invalid_argument, "layer 0's width is 0");
    test::expect_error([&] { (void)e.chain(ChainDesc{.type = DataType::i8, .rows = 4, .input_width = 4, .layers = {{4, {}}}}); },
                       ErrorCode::invalid_argument, "cannot feed a layer's output");
    GemmChain chain = e.chain(ChainDesc{.type = DataType::f32, .rows = 4, .input_width = 4, .layers = {{4, {}}, {4, {}}}});
    Buffer buf = e.create_buffer(256);
    const BufferOffset one[] = {{&buf, 0}};
    test::expect_error([&] { (void)e.run(chain, {&buf, 0}, one, one, {&buf, 0}); }, ErrorCode::invalid_argument,
                       "1 weights and 1 biases for 2 layers");
  }

  TEST_CASE("the application's intermediates: two alternating regions of one buffer, bit for bit the owning chain") {
    Engine& e = test::engine();
    for (const DataType type : {DataType::f32, DataType::f16}) {
      CAPTURE(to_string(type));
      auto rng = test::case_rng(fmt::format("chain intermediates {}", to_string(type)));
      ChainDesc net{.type = type, .rows = 53, .input_width = 8};
      for (const int64_t width : {24, 16, 24, 4}) {
        net.layers.push_back({width, {.bias = BiasAxis::per_column, .activation = Activation::relu}});
      }
      ChainOperands o = chain_operands(e, net, rng);
      const uint64_t es = element_size(type), y_bytes = uint64_t(net.rows * 4) * es;
      GemmChain owning = e.chain(net);
      GemmChain borrowing = e.chain(net, {.own_intermediates = false});
      for (size_t i = 0; i < owning.layers(); ++i) {  // the same plans, so the same sums in the same order
        REQUIRE(owning.layer(i).kernel() == borrowing.layer(i).kernel());
        REQUIRE(owning.layer(i).config() == borrowing.layer(i).config());
      }
      // Regions A and B, each past a granularity's worth of poisoned bytes: layers 0 and 2 write A, layer 1 B.
      uint64_t g = 1;
      for (size_t i = 0; i < borrowing.layers(); ++i) g = std::max(g, borrowing.layer(i).offset_granularity());
      const uint64_t region = (uint64_t(net.rows * 24) * es + g - 1) / g * g;
      Buffer mid = e.create_buffer(g + 2 * region + g);
      e.fill(mid, 0, mid.size(), 0xFFFFFFFFu);
      const BufferOffset a{&mid, g}, b{&mid, g + region};
      const std::vector<BufferOffset> ping_pong = {a, b, a};
      Buffer y_owning = e.create_buffer(y_bytes), y_borrowing = e.create_buffer(y_bytes);
      e.fill(y_owning, 0, y_bytes, 0xFFFFFFFFu);
      e.fill(y_borrowing, 0, y_bytes, 0xFFFFFFFFu);
      e.run(owning, {&o.xb, 0}, o.wo, o.bo, {&y_owning, 0});
      e.run(borrowing, {&o.xb, 0}, o.wo, o.bo, ping_pong, {&y_borrowing, 0});
      std::vector<std::byte> want(y_bytes), got(y_bytes), last(uint64_t(net.rows * 24) * es);
      e.read(y_owning, 0, want.data(), y_bytes);
      e.read(y_borrowing, 0, got.data(), y_bytes);
      e.read(mid, a.offset, last.data(), last.size());
      // The owning chain's last layer against the reference from its own input: y is not poison.
      GemmDesc d;
      d.type = type, d.c_type = type, d.m = net.rows, d.n = 4, d.k = 24, d.epilogue = net.layers[3].epilogue;
      std::vector<std::byte> own_last(last.size());
      e.read(owning.intermediate(2), 0, own_last.data(), own_last.size());
      const std::vector<std::byte> c0(y_bytes);
      CHECK(compare_with_reference(d, own_last.data(), o.w[3].data(), c0.data(), want.data(), {.random_inputs = true},
                                   o.b[3].data()).passed);
      CHECK(got == want);
      CHECK(last == own_last);  // region A holds layer 2's output last
      // The comparison sees a change: the last layer's bias raised by 1000 gives another y wherever the sums
      // lie above -1000, which is everywhere (a moved weight of an inner layer, as before, can vanish behind
      // ReLUs that are zero on every row: it did for one draw).
      std::vector<float> b3(o.b[3].size() / 4);
      std::memcpy(b3.data(), o.b[3].data(), o.b[3].size());
      for (float& v : b3) v += 1000.0f;
      e.write(o.bb[3], 0, b3.data(), o.b[3].size());
      e.run(borrowing, {&o.xb, 0}, o.wo, o.bo, ping_pong, {&y_borrowing, 0});
      e.read(y_borrowing, 0, got.data(), y_bytes);
      CHECK_FALSE(got == want);
    }
  }

  TEST_CASE("the application's intermediates refused: the wrong count, overlapping what their layer reads, too short") {
    Engine& e = test::engine();
    auto rng = test::case_rng("chain intermediates refused");
    const ChainDesc net{.type = DataType::f32, .rows = 8, .input_width = 4, .layers = {{4, {}}, {4, {}}, {4, {}}}};
    ChainOperands o = chain_operands(e, net, rng);
    GemmChain owning = e.chain(net);
    GemmChain borrowing = e.chain(net, {.own_intermediates = false});
    uint64_t g = 1;
    for (size_t i = 0; i < borrowing.layers(); ++i) g = std::max(g, borrowing.layer(i).offset_granularity());
    const uint64_t apart = (128 + g - 1) / g * g;  // an intermediate's 128 bytes, rounded up to the granularity
    Buffer mid = e.create_buffer(3 * apart), y = e.create_buffer(128), small = e.create_buffer(64);
    const BufferOffset a{&mid, 0}, b{&mid, apart};
    const std::vector<BufferOffset> two = {a, b}, one = {a}, same = {a, a}, short_one = {a, {&small, 0}};
    test::expect_error([&] { (void)e.run(borrowing, {&o.xb, 0}, o.wo, o.bo, {&y, 0}); }, ErrorCode::invalid_argument,
                       "0 intermediates for 3 layers");
    test::expect_error([&] { (void)e.run(borrowing, {&o.xb, 0}, o.wo, o.bo, one, {&y, 0}); },
                       ErrorCode::invalid_argument, "takes one for each layer but the last (2)");
    test::expect_error([&] { (void)e.run(owning, {&o.xb, 0}, o.wo, o.bo, two, {&y, 0}); }, ErrorCode::invalid_argument,
                       "owns its own");
    test::expect_error([&] { (void)e.run(borrowing, {&o.xb, 0}, o.wo, o.bo, same, {&y, 0}); },
                       ErrorCode::invalid_argument, "layer 1's output (intermediate 1, 128 bytes at offset 0) overlaps its input");
    test::expect_error([&] { (void)e.run(borrowing, {&o.xb, 0}, o.wo, o.bo, two, b); }, ErrorCode::invalid_argument,
                       fmt::format("layer 2's output (y, 128 bytes at offset {}) overlaps its input", apart));
    Buffer big = e.create_buffer(1024);
    std::vector<BufferOffset> weights_in_big = o.wo;
    weights_in_big[0] = {&big, 0};
    const std::vector<BufferOffset> on_weights = {{&big, 0}, b};
    test::expect_error([&] { (void)e.run(borrowing, {&o.xb, 0}, weights_in_big, o.bo, on_weights, {&y, 0}); },
                       ErrorCode::invalid_argument, "layer 0's output (intermediate 0, 128 bytes at offset 0) overlaps its weights");
    const std::vector<BufferOffset> off_granularity = {a, {&mid, apart + 4}};
    if (g > 4) {
      test::expect_error([&] { (void)e.run(borrowing, {&o.xb, 0}, o.wo, o.bo, off_granularity, {&y, 0}); },
                         ErrorCode::invalid_argument, "GemmChain::record: layer 1: plan record: C's offset");
    }
    test::expect_error([&] { (void)e.run(borrowing, {&o.xb, 0}, o.wo, o.bo, short_one, {&y, 0}); },
                       ErrorCode::buffer_too_small, "GemmChain::record: layer 1: gemm: C");
    test::expect_error([&] { (void)borrowing.intermediate(0); }, ErrorCode::invalid_argument, "are the application's");
    // The same ranges apart run: the refusals above were the overlaps, not the buffers.
    CHECK(e.run(borrowing, {&o.xb, 0}, o.wo, o.bo, two, {&y, 0}).size() == 3);
  }
}
