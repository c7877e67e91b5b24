// The add_activation check: an activation added by the steps of docs/architecture.md ("Adding an
// activation"; softsign, extra_activations.hpp and extra_activations.glsl) runs. Built from the library's
// objects with the files those steps touch compiled again with the entry (CMakeLists.txt says which), it
// checks the name the table makes, then runs products with the activation and a bias on the naive kernel
// (f32, f16 into f32 and f16, f64 where the device has it) against the CPU reference within the epilogue's
// bound, under the validation layer. With --mutant (the build whose GLSL formula is not the reference's) every
// product must fail the comparison instead: the check tells the formulas apart.
// Exit 0 when all is as expected, 1 otherwise, 77 when the device runs none of the products (a skip).
#include <cstdlib>
#include <cstring>

#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "core/element_access.hpp"
#include "vkgemm/names.hpp"
#include "vkgemm/reference.hpp"
#include "vkgemm/vkgemm.hpp"

using namespace vkgemm;

namespace {

int g_failures = 0;

void expect(bool ok, const std::string& what) {
  if (!ok) {
    fmt::print("FAILED: {}\n", what);
    ++g_failures;
  }
}

uint64_t run_seed() {
  if (const char* env = std::getenv("VKGEMM_TEST_SEED")) return std::strtoull(env, nullptr, 10);
  std::random_device rd;
  return (uint64_t{rd()} << 32) ^ rd();
}

// The name the table makes: spelled, parsed, listed last, and named at the door's f64 refusal (which lists
// what f64 takes from the table).
void check_names(Engine& engine) {
  expect(to_string(Activation::softsign) == "softsign", "to_string(Activation::softsign) is softsign");
  expect(parse_activation("softsign") == Activation::softsign, "parse_activation(\"softsign\") is softsign");
  const auto names = enumeration_names("activation");
  expect(!names.empty() && std::string_view(names.back()) == "softsign", "the activation list ends in softsign");
  GemmDesc d;
  d.type = DataType::f64, d.m = d.n = d.k = 4;
  d.epilogue.activation = Activation::silu;
  std::vector<double> a(16, 1.0), b(16, 1.0), c(16, 0.0);
  try {
    engine.gemm(d, a.data(), b.data(), c.data());
    expect(false, "silu on f64 C is refused at the door");
  } catch (const Error& e) {
    expect(std::strstr(e.what(), "relu, leaky-relu, clamp and softsign are") != nullptr,
           fmt::format("the door's f64 refusal lists softsign: {}", e.what()));
  }
}

// Uniform values in [-1, 1] in `type`, n of them.
std::vector<unsigned char> random_values(DataType type, size_t n, std::mt19937_64& rng) {
  std::vector<unsigned char> out(n * element_size(type));
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (size_t i = 0; i < n; ++i) detail::store_element(type, out.data(), i, u(rng));
  return out;
}

// One product with the activation; whether the comparison passed.
bool product(Engine& engine, GemmDesc d, std::mt19937_64& rng) {
  const auto a = random_values(d.type, size_t(d.m * d.k), rng);
  const auto b = random_values(d.type, size_t(d.k * d.n), rng);
  const auto c0 = random_values(output_type(d), size_t(d.m * d.n), rng);
  const int64_t bias_n = d.epilogue.bias == BiasAxis::per_column ? d.n : d.m;
  const auto bias = random_values(d.epilogue.bias_type, size_t(bias_n), rng);
  auto c = c0;
  engine.gemm(d, a.data(), b.data(), c.data(), GemmOptions{.kernel = Kernel::naive, .tile = 8}, bias.data());
  const Comparison cmp = compare_with_reference(d, a.data(), b.data(), c0.data(), c.data(),
                                                {.random_inputs = true}, bias.data());
  fmt::print("  {} -> {} {}x{}x{} {} alpha {} beta {} bias {} ({}): {}\n", to_string(d.type),
             to_string(output_type(d)), d.m, d.n, d.k, d.layout == Layout::row_major ? "row" : "col", d.alpha,
             d.beta, to_string(d.epilogue.bias), to_string(d.epilogue.bias_type), cmp.summary());
  return cmp.passed;
}

}  // namespace

int main(int argc, char** argv) {
  const bool mutant = argc > 1 && std::string_view(argv[1]) == "--mutant";
  const uint64_t seed = run_seed();
  fmt::print("add_activation{}: seed {} (VKGEMM_TEST_SEED repeats it)\n", mutant ? " (mutant)" : "", seed);
  std::mt19937_64 rng(seed);
  EngineOptions options;
  const char* validation = std::getenv("VKGEMM_TEST_VALIDATION");
  options.validation = !(validation && std::string_view(validation) == "0");
  int messages = 0;
  options.on_validation_message = [&messages](std::string_view message) {
    fmt::print("validation: {}\n", message);
    ++messages;
  };
  Engine engine(options);
  check_names(engine);
  struct Pair {
    DataType input, output;
  };
  int ran = 0, passed = 0;
  for (const Pair pair : {Pair{DataType::f32, DataType::f32}, Pair{DataType::f16, DataType::f32},
                          Pair{DataType::f16, DataType::f16}, Pair{DataType::f64, DataType::f64}}) {
    if (pair.input == DataType::f64 && !engine.device().float64) {
      fmt::print("  f64: not on {} (no shaderFloat64)\n", engine.device().name);
      continue;
    }
    // Shapes across the naive kernel's 8 x 8 tiles; alpha 3 spreads x over about +-5, so both tails and the
    // middle of the curve are taken.
    int i = 0;
    for (const auto [m, n, k] : {std::array<int64_t, 3>{37, 45, 29}, {64, 16, 67}}) {
      for (const Layout layout : {Layout::row_major, Layout::col_major}) {
        GemmDesc d;
        d.type = pair.input, d.c_type = pair.output, d.m = m, d.n = n, d.k = k, d.layout = layout;
        d.alpha = 3.0, d.beta = i % 2 ? 0.5 : 0.0;
        d.epilogue = {.bias = i % 2 ? BiasAxis::per_row : BiasAxis::per_column,
                      .bias_type = i % 2 ? pair.output : DataType::f32, .activation = Activation::softsign};
        ++i, ++ran;
        passed += product(engine, d, rng) ? 1 : 0;
      }
    }
  }
  if (mutant) {
    expect(passed == 0, fmt::format("the mutant's products all fail the comparison ({} of {} passed)", passed, ran));
  } else {
    expect(passed == ran, fmt::format("every product passes ({} of {})", passed, ran));
  }
  expect(messages == 0, fmt::format("no validation message ({})", messages));
  if (g_failures) {
    fmt::print("add_activation: {} failed; seed {}\n", g_failures, seed);
    return 1;
  }
  if (ran == 0) return 77;
  fmt::print("add_activation: {} products, {}\n", ran, mutant ? "every one told from the reference" : "all within the bound");
  return 0;
}
