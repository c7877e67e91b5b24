#include "support.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <stdexcept>

#include <sys/wait.h>

#include <doctest/doctest.h>
#include <fmt/format.h>

#include "vkgemm/names.hpp"

namespace vkgemm::test {
namespace {

std::atomic<uint64_t> g_messages{0};
// ExpectedMessages: the words an expected message contains (empty: none expected) and how many came.
std::mutex g_expected_mutex;
std::vector<std::string> g_expected_words;
uint64_t g_expected_seen = 0;

bool is_expected(std::string_view message) {
  std::lock_guard lock(g_expected_mutex);
  const bool expected = std::any_of(g_expected_words.begin(), g_expected_words.end(),
                                    [&](const std::string& w) { return message.find(w) != std::string_view::npos; });
  if (!expected) return false;
  ++g_expected_seen;
  return true;
}

// Guard regions: this many bytes before and after every matrix, filled with kGuardByte.
constexpr uint64_t kGuardBytes = 256;
constexpr unsigned char kGuardByte = 0xA5;

}  // namespace

std::vector<std::byte> random_elements(DataType type, uint64_t count, std::mt19937_64& rng) {
  std::vector<std::byte> out(count * element_size(type));
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  // One case per element type, no default: a type added to the table without its inputs here is a -Wswitch
  // warning, and the reference suite's "every element type" case fails.
  switch (type) {
    case DataType::f16:
      for (uint64_t i = 0; i < count; ++i) reinterpret_cast<uint16_t*>(out.data())[i] = float_to_half(uniform(rng));
      break;
    case DataType::bf16:
      for (uint64_t i = 0; i < count; ++i) reinterpret_cast<uint16_t*>(out.data())[i] = float_to_bfloat16(uniform(rng));
      break;
    case DataType::i8: case DataType::u8: {  // the whole range: sign and zero extension show
      std::uniform_int_distribution<int> d(0, 255);
      for (uint64_t i = 0; i < count; ++i) out[i] = static_cast<std::byte>(d(rng));
      break;
    }
    case DataType::i32: {
      std::uniform_int_distribution<int32_t> d(-8, 8);
      for (uint64_t i = 0; i < count; ++i) reinterpret_cast<int32_t*>(out.data())[i] = d(rng);
      break;
    }
    case DataType::f32:
      for (uint64_t i = 0; i < count; ++i) reinterpret_cast<float*>(out.data())[i] = uniform(rng);
      break;
    case DataType::f64: {
      std::uniform_real_distribution<double> d(-1.0, 1.0);
      for (uint64_t i = 0; i < count; ++i) reinterpret_cast<double*>(out.data())[i] = d(rng);
      break;
    }
  }
  return out;
}

namespace {

// The poison an unwritten element of C keeps: NaN fails any float comparison, the sentinel any int one
// (random inputs in [-8, 8] cannot reach it for k below 2^24).
std::vector<std::byte> poison(DataType type, uint64_t count) {
  std::vector<std::byte> out(count * element_size(type));
  for (uint64_t i = 0; i < count; ++i) {
    if (type == DataType::f16) {
      reinterpret_cast<uint16_t*>(out.data())[i] = 0x7e00;  // a quiet NaN
    } else if (type == DataType::bf16) {
      reinterpret_cast<uint16_t*>(out.data())[i] = 0x7fc0;  // a quiet NaN
    } else if (type == DataType::i8 || type == DataType::u8) {
      out[i] = std::byte{0x81};  // inputs only (alpha = 0: never read); any value is a valid one
    } else if (type == DataType::i32) {
      reinterpret_cast<int32_t*>(out.data())[i] = std::numeric_limits<int32_t>::min() + 12345;
    } else if (type == DataType::f32) {
      reinterpret_cast<float*>(out.data())[i] = std::numeric_limits<float>::quiet_NaN();
    } else {
      reinterpret_cast<double*>(out.data())[i] = std::numeric_limits<double>::quiet_NaN();
    }
  }
  return out;
}

// A matrix inside a buffer with guards on both sides.
struct Guarded {
  Buffer buffer;
  MatrixRef ref;
  uint64_t data_offset = 0;
  uint64_t data_bytes = 0;
};

Guarded make_guarded(Engine& e, DataType type, uint32_t rows, uint32_t cols, const std::vector<std::byte>& contents,
                     uint32_t skew = 3) {
  Guarded g;
  const uint64_t es = element_size(type);
  g.data_offset = kGuardBytes + skew * es;
  g.data_bytes = contents.size();
  const uint64_t total = g.data_offset + g.data_bytes + kGuardBytes;
  std::vector<std::byte> init(total, std::byte{kGuardByte});
  if (g.data_bytes) std::memcpy(init.data() + g.data_offset, contents.data(), g.data_bytes);  // data() may be null
  g.buffer = e.create_buffer(total, "test matrix");
  e.write(g.buffer, 0, init.data(), total);
  g.ref = {&g.buffer, g.data_offset, rows, cols, type};
  return g;
}

// Which elements of an operand's span the call describes (the rest are ld and stride gaps).
std::vector<char> described(const GemmDesc& d, char which) {
  const OperandExtent e = operand_extent(d, which);
  std::vector<char> out(e.elements, 0);
  for (int64_t t = 0; t < d.batch; ++t)
    for (int64_t o = 0; o < e.outer; ++o)
      for (int64_t i = 0; i < e.inner; ++i) out[uint64_t(t * e.stride + o * e.ld + i)] = 1;
  return out;
}

// Random elements where the call describes them, poison in the gaps (or everywhere with all_poison).
std::vector<std::byte> operand_contents(const GemmDesc& d, char which, bool all_poison, std::mt19937_64& rng) {
  const auto mask = described(d, which);
  const DataType type = which == 'C' ? output_type(d) : d.type;
  const uint64_t es = element_size(type);
  auto out = random_elements(type, mask.size(), rng);
  const auto bad = poison(type, mask.size());
  for (uint64_t i = 0; i < mask.size(); ++i) {
    if (all_poison || !mask[i]) std::memcpy(&out[i * es], &bad[i * es], es);
  }
  return out;
}

// Reads the whole buffer back; returns the matrix and reports any guard byte that changed.
std::vector<std::byte> read_guarded(Engine& e, const Guarded& g, const char* name, std::string& problems) {
  const uint64_t total = g.buffer.size();
  std::vector<std::byte> all(total);
  e.read(g.buffer, 0, all.data(), total);
  uint64_t changed = 0;
  for (uint64_t i = 0; i < total; ++i) {
    const bool guard = i < g.data_offset || i >= g.data_offset + g.data_bytes;
    if (guard && all[i] != std::byte{kGuardByte}) ++changed;
  }
  if (changed) problems += fmt::format("{} guard bytes around {} were overwritten; ", changed, name);
  return {all.begin() + static_cast<std::ptrdiff_t>(g.data_offset),
          all.begin() + static_cast<std::ptrdiff_t>(g.data_offset + g.data_bytes)};
}

}  // namespace

std::string describe(const GemmDesc& d) {
  const auto stride = [](const std::optional<int64_t>& s) { return s ? fmt::format("{}", *s) : std::string("packed"); };
  const std::string types = d.c_type && *d.c_type != d.type
                                ? fmt::format("{} (C {})", to_string(d.type), to_string(*d.c_type))
                                : std::string(to_string(d.type));
  return fmt::format("{} {} op {}{} m={} n={} k={} ld {}/{}/{} batch {} strides {}/{}/{} alpha {} beta {}",
                     types, d.layout == Layout::row_major ? "row" : "col", d.op_a == Op::n ? 'N' : 'T',
                     d.op_b == Op::n ? 'N' : 'T', d.m, d.n, d.k, d.lda, d.ldb, d.ldc, d.batch, stride(d.stride_a),
                     stride(d.stride_b), stride(d.stride_c), d.alpha, d.beta) +
         (d.epilogue.active() ? fmt::format(" epilogue {} bias {} ({})", to_string(d.epilogue.activation),
                                            d.epilogue.bias == BiasAxis::none ? "none"
                                            : d.epilogue.bias == BiasAxis::per_column ? "per-column" : "per-row",
                                            to_string(d.epilogue.bias_type))
                              : std::string());
}

std::vector<std::byte> epilogue_vectors(const GemmDesc& desc, std::mt19937_64& rng) {
  std::vector<std::byte> out(bias_byte_offset(desc));
  std::uniform_real_distribution<float> scale(1.0f / 128, 1.0f / 8);  // positive, as quantization scales are
  for (int64_t j = 0; j < scale_length(desc); ++j) {
    const float s = scale(rng);
    std::memcpy(&out[uint64_t(j) * 4], &s, 4);
  }
  if (desc.epilogue.bias == BiasAxis::none) return out;
  const auto bias = random_elements(desc.epilogue.bias_type, uint64_t(bias_length(desc)), rng);
  out.insert(out.end(), bias.begin(), bias.end());
  if (scale_length(desc)) out.resize((out.size() + 3) / 4 * 4);  // whole f32 words, as the guards around them
  return out;
}

ProductCheck check_gemm_call(const GemmDesc& desc, const GemmOptions& options, std::mt19937_64& rng,
                             uint32_t skew) {
  return check_gemm_call(engine(), desc, options, rng, skew);
}

ProductCheck check_gemm_call(Engine& e, const GemmDesc& desc, const GemmOptions& options, std::mt19937_64& rng,
                             uint32_t skew) {
  const bool reads_ab = desc.alpha != 0.0 && desc.k != 0;
  const auto a = operand_contents(desc, 'A', !reads_ab, rng);
  const auto b = operand_contents(desc, 'B', !reads_ab, rng);
  const auto c0 = operand_contents(desc, 'C', desc.beta == 0.0, rng);
  // A zero-element operand still gets a buffer (of guards only) to point at.
  Guarded ga = make_guarded(e, desc.type, 0, 0, a, skew);
  Guarded gb = make_guarded(e, desc.type, 0, 0, b, skew);
  Guarded gc = make_guarded(e, output_type(desc), 0, 0, c0, skew);
  // The epilogue's vectors, where it has them (per_column dequantization scales, then the bias): random,
  // between guards as the operands are.
  const bool has_bias = desc.epilogue.bias != BiasAxis::none || desc.epilogue.scale == ScaleAxis::per_column;
  const auto bias = epilogue_vectors(desc, rng);
  Guarded gbias = make_guarded(e, scale_length(desc) ? DataType::f32 : desc.epilogue.bias_type, 0, 0, bias, skew);
  ProductCheck out;
  try {
    out.timing = e.gemm(desc, {&ga.buffer, ga.data_offset}, {&gb.buffer, gb.data_offset}, {&gc.buffer, gc.data_offset},
                        options, has_bias ? BufferOffset{&gbias.buffer, gbias.data_offset} : BufferOffset{});
  } catch (const Error& err) {
    out.detail = fmt::format("{} {} tile {}: threw {}", describe(desc), to_string(options.kernel), options.tile, err.what());
    return out;
  }
  std::string problems;
  read_guarded(e, ga, "A", problems);
  read_guarded(e, gb, "B", problems);
  const auto c = read_guarded(e, gc, "C", problems);
  if (has_bias) read_guarded(e, gbias, "bias", problems);
  // A watchdog's K chunks (a dequantized product counts their roundings).
  const uint64_t chunk = options.max_k_per_submission ? options.max_k_per_submission : uint64_t(std::max<int64_t>(desc.k, 1));
  const auto chunks = static_cast<uint32_t>((uint64_t(std::max<int64_t>(desc.k, 1)) + chunk - 1) / chunk);
  const Comparison cmp = compare_with_reference(desc, a.data(), b.data(), c0.data(), c.data(),
                                                {.f16_accumulate = options.f16_accumulate, .random_inputs = true,
                                                 .k_chunks = chunks},
                                                has_bias ? bias.data() : nullptr);
  if (!cmp.passed) problems += cmp.summary();
  out.passed = problems.empty();
  out.detail = fmt::format("{} {} tile {} ({} {}): {}", describe(desc), to_string(options.kernel), options.tile,
                           to_string(out.timing.kernel), out.timing.config, out.passed ? "ok" : problems);
  return out;
}

std::unique_ptr<Engine> make_engine(EngineOptions options) {
  // Always on in CI. VKGEMM_TEST_VALIDATION=0 turns it off for a machine without the layer (a lent GPU
  // that carries only the build): the numbers are still checked, and the runner says validation is off.
  const char* env = std::getenv("VKGEMM_TEST_VALIDATION");
  options.validation = !(env && std::string(env) == "0");
  static std::once_flag said;
  if (!options.validation) std::call_once(said, [] { fmt::print("vkgemm tests: validation is OFF (VKGEMM_TEST_VALIDATION=0)\n"); });
  options.on_validation_message = [](std::string_view message) {
    if (is_expected(message)) return;
    g_messages.fetch_add(1);
    if (doctest::is_running_in_test) {
      ADD_FAIL_CHECK_AT(__FILE__, __LINE__, std::string(message));
    } else {
      fmt::print(stderr, "{}\n", message);
    }
  };
  return std::make_unique<Engine>(options);
}

std::unique_ptr<Engine> engine_with_limits(uint32_t max_groups, uint64_t max_range, uint64_t max_allocation) {
  const auto set = [](const char* name, uint64_t v) {
    if (v) setenv(name, std::to_string(v).c_str(), 1);
  };
  set("VKGEMM_TEST_MAX_GROUP_COUNT", max_groups);
  set("VKGEMM_TEST_MAX_STORAGE_RANGE", max_range);
  set("VKGEMM_TEST_MAX_ALLOCATION", max_allocation);
  auto e = make_engine();
  unsetenv("VKGEMM_TEST_MAX_GROUP_COUNT");
  unsetenv("VKGEMM_TEST_MAX_STORAGE_RANGE");
  unsetenv("VKGEMM_TEST_MAX_ALLOCATION");
  return e;
}

namespace {
std::unique_ptr<Engine>& shared_engine() {
  static std::unique_ptr<Engine> e;
  return e;
}

std::mutex& shared_engine_lock() {
  static std::mutex m;
  return m;
}
}  // namespace

Engine& engine() {  // threads share it (the threads suite): made once, under a lock
  std::lock_guard lock(shared_engine_lock());
  std::unique_ptr<Engine>& e = shared_engine();
  if (!e) e = make_engine();
  return *e;
}

void release_engine() {
  std::lock_guard lock(shared_engine_lock());
  shared_engine().reset();
}

uint64_t validation_messages() { return g_messages.load(); }

bool expected_message(std::string_view message) { return is_expected(message); }

namespace {
std::atomic<uint64_t> g_skipped{0};
}

void skip(const std::string& why) {
  const std::string line = fmt::format("SKIPPED: {}: {}", current_case_name(), why);
  MESSAGE(line);
  fmt::print("{}\n", line);
  g_skipped.fetch_add(1);
  if (const char* log = std::getenv("VKGEMM_TEST_SKIP_LOG"); log && *log) {
    if (std::FILE* f = std::fopen(log, "a")) {
      fmt::print(f, "{}\n", line);
      std::fclose(f);
    }
  }
}

uint64_t skipped_cases() { return g_skipped.load(); }

ExpectedMessages::ExpectedMessages(std::string words) : ExpectedMessages(std::vector<std::string>{std::move(words)}) {}
ExpectedMessages::ExpectedMessages(std::vector<std::string> words) {
  std::lock_guard lock(g_expected_mutex);
  g_expected_words = std::move(words);
  g_expected_seen = 0;
}
ExpectedMessages::~ExpectedMessages() {
  std::lock_guard lock(g_expected_mutex);
  g_expected_words.clear();
}
uint64_t ExpectedMessages::seen() const {
  std::lock_guard lock(g_expected_mutex);
  return g_expected_seen;
}

ProgramOutcome run_program(const std::string& args) {
  const std::string command = "VKGEMM_VALIDATION=1 " VKGEMM_BINARY " " + args + " 2>&1";
  ProgramOutcome out;
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) out.output.append(buf, n);
  const int status = pclose(pipe);
  out.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

uint64_t run_seed() {
  static const uint64_t seed = [] {
    if (const char* env = std::getenv("VKGEMM_TEST_SEED")) return static_cast<uint64_t>(std::strtoull(env, nullptr, 10));
    std::random_device rd;
    return (uint64_t{rd()} << 32) ^ rd() ^
           static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  }();
  return seed;
}

std::mt19937_64 case_rng(const std::string& case_name) {
  return std::mt19937_64(run_seed() ^ std::hash<std::string>{}(case_name));
}

std::vector<Activation> every_activation() {
  std::vector<Activation> out;
  for (const char* name : enumeration_names("activation")) out.push_back(parse_activation(name).value());
  return out;
}

GridSample grid_sample(const std::string& case_name) {
  GridSample sample;
  if (const char* env = std::getenv("VKGEMM_TEST_GRID_SAMPLE")) {
    const uint64_t every = std::strtoull(env, nullptr, 10);
    if (every < 1) throw std::runtime_error(fmt::format("VKGEMM_TEST_GRID_SAMPLE={}: one product in N, N >= 1", env));
    sample.every = every;
    sample.offset = case_rng("grid sample " + case_name)() % every;
  }
  return sample;
}

bool QuickSample::takes(uint64_t index, uint64_t count) const {
  const uint64_t n = std::max<uint64_t>(1, std::min(every, count));
  return index % n == offset % n;
}

QuickSample quick_sample(const std::string& case_name) {
  QuickSample sample;
  if (const char* env = std::getenv("VKGEMM_TEST_QUICK_SAMPLE")) {
    const uint64_t every = std::strtoull(env, nullptr, 10);
    if (every < 1) throw std::runtime_error(fmt::format("VKGEMM_TEST_QUICK_SAMPLE={}: one item in N, N >= 1", env));
    sample.every = every;
    sample.offset = case_rng("quick sample " + case_name)() % every;
  }
  return sample;
}

ProductCheck check_product(DataType type, uint32_t m, uint32_t n, uint32_t k, const GemmOptions& options,
                           std::mt19937_64& rng, uint32_t skew) {
  return check_product(type, default_output_type(type), m, n, k, options, rng, skew);
}

ProductCheck check_product(DataType input, DataType output, uint32_t m, uint32_t n, uint32_t k,
                           const GemmOptions& options, std::mt19937_64& rng, uint32_t skew) {
  const auto a = random_elements(input, uint64_t{m} * k, rng);
  const auto b = random_elements(input, uint64_t{k} * n, rng);
  Engine& e = engine();
  Guarded ga = make_guarded(e, input, m, k, a, skew);
  Guarded gb = make_guarded(e, input, k, n, b, skew);
  Guarded gc = make_guarded(e, output, m, n, poison(output, uint64_t{m} * n), skew);
  const GemmTiming timing = e.gemm(ga.ref, gb.ref, gc.ref, options);

  ProductCheck out;
  out.timing = timing;
  std::string problems;
  read_guarded(e, ga, "A", problems);
  read_guarded(e, gb, "B", problems);
  const auto c = read_guarded(e, gc, "C", problems);
  const Comparison cmp =
      compare_with_reference(input, output, m, n, k, a.data(), b.data(), c.data(),
                             {.f16_accumulate = options.f16_accumulate, .random_inputs = true});
  if (!cmp.passed) problems += cmp.summary();
  out.passed = problems.empty();
  out.detail = fmt::format("{}{} {}x{}x{} skew {} {} {}{}: {}", to_string(input),
                           output != input ? fmt::format(" (C {})", to_string(output)) : std::string(), m, n, k, skew,
                           to_string(timing.kernel), timing.config, options.f16_accumulate ? " f16-accumulate" : "",
                           out.passed ? "ok" : problems);
  return out;
}

std::vector<float> random_floats(size_t n, std::mt19937_64& rng) {
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

}  // namespace vkgemm::test
