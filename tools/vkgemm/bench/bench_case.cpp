#include "bench_case.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <limits>
#include <new>
#include <random>

#include <fmt/format.h>

#include "bench_ceiling.hpp"
#include "parallel_compare.hpp"
#include "vkgemm/error.hpp"
#include "vkgemm/half.hpp"
#include "vkgemm/plan.hpp"

namespace vkgemm::cli::bench {
namespace {

// Untimed Engine::gemm calls before the latency is timed: the first builds the pipeline.
constexpr uint32_t kLatencyWarmupCalls = 5;
// Records timed for the cost of GemmPlan::record alone (cheap: no submission), at least.
constexpr uint32_t kRecordCalls = 1000;

// Buffers and inputs of one product, uploaded once.
struct Operands {
  std::vector<std::byte> a, b, c;
  Buffer A, B, C;
  MatrixRef ra, rb, rc;
};

// Adds its host time to `seconds` (for the progress estimate: making and writing the inputs is most of a
// large case's host time besides its check).
Operands upload(Engine& engine, const Shape& s, DataType type, const GemmOptions& options, uint64_t seed,
                double& seconds) {
  const auto start = std::chrono::steady_clock::now();
  GemmDesc desc;
  desc.type = type, desc.c_type = default_output_type(type);
  desc.m = s.m, desc.n = s.n, desc.k = s.k;
  engine.check_fits(desc, options);  // the device's memory, before host memory is spent on the inputs
  Operands o;
  std::mt19937_64 rng(seed);
  o.a = nonzero_random(type, uint64_t{s.m} * s.k, rng);
  o.b = nonzero_random(type, uint64_t{s.k} * s.n, rng);
  o.c.resize(uint64_t{s.m} * s.n * element_size(default_output_type(type)));
  o.A = engine.create_buffer(o.a.size(), "bench A");
  o.B = engine.create_buffer(o.b.size(), "bench B");
  o.C = engine.create_buffer(o.c.size(), "bench C");
  engine.write(o.A, 0, o.a.data(), o.a.size());
  engine.write(o.B, 0, o.b.data(), o.b.size());
  o.ra = {&o.A, 0, s.m, s.k, type};
  o.rb = {&o.B, 0, s.k, s.n, type};
  o.rc = {&o.C, 0, s.m, s.n, default_output_type(type)};  // f16 inputs: C f32
  seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return o;
}

// The sampled check of a bench product (reference.hpp, check_sampled): C of the inputs' default type,
// beta 0 (so C before the call is not read, and a tight C has no gaps), random inputs (the model's bounds
// apply), the witnesses' draw from the case's seed.
Comparison sampled_check(const Operands& o, const Shape& s, DataType type, const GemmOptions& config, uint64_t seed) {
  GemmDesc d;
  d.type = type, d.c_type = o.rc.type;
  d.m = s.m, d.n = s.n, d.k = s.k;
  SampleOptions sample;
  sample.seed = case_seed(seed, 1);
  const CompareOptions options{.f16_accumulate = config.f16_accumulate && o.rc.type == DataType::f16,
                               .random_inputs = true};
  return check_sampled(d, o.a.data(), o.b.data(), o.c.data(), o.c.data(), options, sample);
}

// One product on poisoned C, read back and checked as `how` says. Returns the comparison, if made, adds
// the host time the check took to `seconds`, and says in `ran` which kernel and configuration ran.
std::optional<Comparison> check_once(Engine& engine, Operands& o, const Shape& s, DataType type,
                                     const GemmOptions& config, CheckHow how, uint64_t seed, const ResultHook& hook,
                                     double& seconds, std::string& ran) {
  const auto bad = poison(o.rc.type, uint64_t{s.m} * s.n);  // C's type: f32 for f16 inputs
  engine.write(o.C, 0, bad.data(), bad.size());
  GemmOptions once = config;
  once.repeat = 1;
  once.warmup = 0;
  const GemmTiming t = engine.gemm(o.ra, o.rb, o.rc, once);
  ran = fmt::format("{} {}", to_string(t.kernel), t.config);
  if (how == CheckHow::none) return std::nullopt;
  engine.read(o.C, 0, o.c.data(), o.c.size());
  if (hook) hook(o.rc.type, o.c.data(), uint64_t{s.m} * s.n);
  const auto start = std::chrono::steady_clock::now();
  Comparison c = how == CheckHow::full ? parallel_compare(type, s.m, s.n, s.k, o.a.data(), o.b.data(), o.c.data())
                                       : sampled_check(o, s, type, config, seed);
  seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return c;
}

// The shared warm-up (steady.hpp) of one case's product, in batches of `options` with timestamps.
WarmUp warm_up_case(Engine& engine, Operands& o, GemmOptions options, double warmup_ms) {
  return warm_up(warmup_ms, [&](uint32_t n) {
    options.repeat = n, options.warmup = 0;
    const GemmTiming w = engine.gemm(o.ra, o.rb, o.rc, options);
    double ms = 0.0;
    for (const double x : w.gpu_ms) ms += x;
    return w.gpu_timestamps ? ms : -1.0;
  });
}

}  // namespace

// Elements bounded away from zero (floats: magnitude in [0.5, 1), integers: 1 to 8, either sign; u8 positive), so no
// product is flattered by zeros and every element of C depends on every term.
std::vector<std::byte> nonzero_random(DataType type, uint64_t count, std::mt19937_64& rng) {
  std::vector<std::byte> out(count * element_size(type));
  std::uniform_real_distribution<double> magnitude(0.5, 1.0);
  std::uniform_int_distribution<int32_t> integer(1, 8);
  std::bernoulli_distribution negative(0.5);
  for (uint64_t i = 0; i < count; ++i) {
    const double sign = negative(rng) ? -1.0 : 1.0;
    switch (type) {
      case DataType::f32: reinterpret_cast<float*>(out.data())[i] = static_cast<float>(sign * magnitude(rng)); break;
      case DataType::f64: reinterpret_cast<double*>(out.data())[i] = sign * magnitude(rng); break;
      case DataType::i32: reinterpret_cast<int32_t*>(out.data())[i] = static_cast<int32_t>(sign) * integer(rng); break;
      case DataType::f16:
        reinterpret_cast<uint16_t*>(out.data())[i] = float_to_half(static_cast<float>(sign * magnitude(rng)));
        break;
      case DataType::bf16:
        reinterpret_cast<uint16_t*>(out.data())[i] = float_to_bfloat16(static_cast<float>(sign * magnitude(rng)));
        break;
      case DataType::i8: reinterpret_cast<int8_t*>(out.data())[i] = static_cast<int8_t>(sign * integer(rng)); break;
      case DataType::u8: reinterpret_cast<uint8_t*>(out.data())[i] = static_cast<uint8_t>(integer(rng)); break;
    }
  }
  return out;
}

// A value no correct product holds, so an element the kernel never wrote fails the check.
std::vector<std::byte> poison(DataType type, uint64_t count) {
  std::vector<std::byte> out(count * element_size(type));
  for (uint64_t i = 0; i < count; ++i) {
    switch (type) {
      case DataType::f32: reinterpret_cast<float*>(out.data())[i] = std::numeric_limits<float>::quiet_NaN(); break;
      case DataType::f64: reinterpret_cast<double*>(out.data())[i] = std::numeric_limits<double>::quiet_NaN(); break;
      case DataType::i32: reinterpret_cast<int32_t*>(out.data())[i] = std::numeric_limits<int32_t>::min(); break;
      case DataType::f16: reinterpret_cast<uint16_t*>(out.data())[i] = 0x7e00; break;  // a quiet NaN
      case DataType::bf16: reinterpret_cast<uint16_t*>(out.data())[i] = 0x7fc0; break;  // a quiet NaN
      case DataType::i8: case DataType::u8: break;  // never C's type
    }
  }
  return out;
}

CheckHow check_how(const Settings& settings, const Shape& shape) {
  if (!settings.check) return CheckHow::none;
  return shape.products() <= settings.verify_max ? CheckHow::full : CheckHow::sampled;
}

uint64_t case_seed(uint64_t run_seed, uint64_t index) {
  uint64_t z = run_seed + (index + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

CaseResult run_case(Engine& engine, const Shape& shape, DataType type, const BenchConfig& config,
                    const Settings& settings, uint64_t seed, const ResultHook& hook) {
  CaseResult r;
  r.shape = shape;
  r.type = type;
  r.config = config;
  r.seed = seed;
  skipping_refusals(r, shape, [&] {
    engine.check_supported(type, config.options);
    Operands o = upload(engine, shape, type, config.options, seed, r.data_seconds);
    r.check = check_once(engine, o, shape, type, config.options, check_how(settings, shape), seed, hook,
                         r.check_seconds, r.ran);
    if (r.check && !r.check->passed) {
      r.status = Status::failed;
      r.reason = r.check->summary();
      return;  // never timed
    }
    // The shared warm-up (steady.hpp): after the CPU check the device sat idle; then as many products again
    // as the warm-up's last batch inside the timed submission, so no idle gap comes before the timed ones.
    GemmOptions timed = config.options;
    r.warmup = warm_up_case(engine, o, timed, settings.warmup_ms);
    timed.repeat = settings.repeat;
    timed.warmup = settings.warmup + r.warmup.last_batch;
    const GemmTiming t = engine.gemm(o.ra, o.rb, o.rc, timed);
    if (t.gpu_ms.empty()) {
      throw Error(ErrorCode::vulkan_error,
                  fmt::format("{} returned no timestamps for a timed dispatch", engine.device().name));
    }
    r.gpu_ms = t.gpu_ms;
    r.stats = summarize(r.gpu_ms);
    const double ops = 2.0 * shape.products();
    r.gflops = r.stats->median > 0.0 ? ops / r.stats->median * 1e-6 : 0.0;
    r.gflops_best = r.stats->min > 0.0 ? ops / r.stats->min * 1e-6 : 0.0;
    const auto ceiling =
        ceiling_for(settings, type, t.kernel, config.options.f16_accumulate, config.options.emulation_moduli);
    if (ceiling) {
      r.efficiency = r.gflops / ceiling->gflops;
      r.efficiency_ceiling = ceiling->name;
    }
    GemmDesc moved;  // the case's product as bytes_moved counts it: beta 0, C of the type's default
    moved.type = type, moved.m = shape.m, moved.n = shape.n, moved.k = shape.k;
    r.roofline = roofline_for(ceiling, settings.copy_gbps, ops, bytes_moved(moved));
    if (r.roofline) r.roofline_fraction = r.gflops / r.roofline->gflops;
    r.status = r.check ? Status::passed : Status::unverified;
  });
  return r;
}

// The plan's own submissions: one at a time (Engine::submit's host time, then its wait's), and `calls` of
// them back to back with only the last waited for.
static void time_plan_submissions(Engine& engine, GemmPlan& plan, const std::array<BufferOffset, 3>& ops,
                                  LatencyResult& r) {
  using clock = std::chrono::steady_clock;
  const auto us = [](clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); };
  engine.submit(plan, ops[0], ops[1], ops[2]).wait();
  std::vector<double> submit_us, wait_us, sync_us;
  for (uint32_t i = 0; i < r.calls; ++i) {
    const auto start = clock::now();
    GemmSubmission s = engine.submit(plan, ops[0], ops[1], ops[2]);
    const auto submitted = clock::now();
    s.wait();
    const auto done = clock::now();
    submit_us.push_back(us(submitted - start));
    wait_us.push_back(us(done - submitted));
    sync_us.push_back(us(done - start));
  }
  r.plan_submit_us = summarize(submit_us).median;
  r.plan_wait_us = summarize(wait_us).median;
  r.plan_sync_us = summarize(sync_us).median;
  const auto start = clock::now();
  GemmSubmission last;
  for (uint32_t i = 0; i < r.calls; ++i) last = engine.submit(plan, ops[0], ops[1], ops[2]);
  last.wait();
  r.inflight_us = us(clock::now() - start) / r.calls;
}

// The host time in microseconds of each of `calls` calls of `call`.
template <typename Call>
static std::vector<double> host_us(uint32_t calls, Call&& call) {
  std::vector<double> us;
  us.reserve(calls);
  for (uint32_t i = 0; i < calls; ++i) {
    const auto start = std::chrono::steady_clock::now();
    call();
    us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
  }
  return us;
}

// Engine::gemm `calls` times with timestamps (its GPU time, submit-to-completion window and wall time), then
// `calls` times without (the product alone: wall_us), then `calls` times without with C alternating between
// its buffer and another (rerecord_us: each call records its command buffer, which a call on the buffers of
// the one before submits again unrecorded).
static void time_gemm_calls(Engine& engine, Operands& o, GemmOptions once, uint32_t calls, LatencyResult& r) {
  std::vector<double> gpu_us, wait_us;
  once.timestamps = true;
  r.timed_sync_us = summarize(host_us(calls, [&] {
                      const GemmTiming t = engine.gemm(o.ra, o.rb, o.rc, once);
                      if (!t.gpu_ms.empty()) gpu_us.push_back(t.gpu_ms.front() * 1e3);
                      wait_us.push_back(t.submit_wait_ms * 1e3);
                    })).median;
  if (!gpu_us.empty()) r.gpu_us = summarize(gpu_us).median;
  r.submit_wait_us = summarize(wait_us).median;
  once.timestamps = false;
  engine.gemm(o.ra, o.rb, o.rc, once);  // its plan made before the series
  r.wall_us = host_us(calls, [&] { engine.gemm(o.ra, o.rb, o.rc, once); });
  Buffer other = engine.create_buffer(o.c.size(), "bench C (another)");
  MatrixRef rc[2] = {o.rc, o.rc};
  rc[1].buffer = &other;
  uint32_t i = 0;
  r.rerecord_us = summarize(host_us(calls, [&] { engine.gemm(o.ra, o.rb, rc[++i % 2], once); })).median;
}

// Engine::run of the latency plan's twin with timestamps, one at a time: their cost beside the plan without.
static void time_timed_plan(Engine& engine, const GemmDesc& desc, const GemmPlanOptions& untimed,
                            const std::array<BufferOffset, 3>& ops, LatencyResult& r) {
  GemmPlanOptions options = untimed;
  options.timestamps = true;
  GemmPlan plan = engine.plan(desc, options);
  engine.run(plan, ops[0], ops[1], ops[2]);
  r.timed_plan_us = summarize(host_us(r.calls, [&] { engine.run(plan, ops[0], ops[1], ops[2]); })).median;
}

LatencyResult run_latency(Engine& engine, uint32_t n, DataType type, const BenchConfig& config,
                          const Settings& settings, uint64_t seed, const ResultHook& hook) {
  LatencyResult r;
  r.size = n;
  r.type = type;
  r.config = config;
  r.seed = seed;
  const Shape shape{n, n, n};
  skipping_refusals(r, shape, [&] {
    engine.check_supported(type, config.options);
    Operands o = upload(engine, shape, type, config.options, seed, r.data_seconds);
    // Small: always checked.
    r.check = check_once(engine, o, shape, type, config.options, CheckHow::full, seed, hook, r.check_seconds, r.ran);
    if (!r.check->passed) {
      r.status = Status::failed;
      r.reason = r.check->summary();
      return;
    }
    GemmOptions once = config.options;
    once.repeat = 1;
    once.warmup = 0;
    // The device sat idle through the CPU check: warmed by time as a throughput case is, else the first
    // timed calls run at a clock still rising (docs/bench.md).
    r.warmup = warm_up_case(engine, o, once, settings.warmup_ms);
    for (uint32_t i = 0; i < kLatencyWarmupCalls; ++i) engine.gemm(o.ra, o.rb, o.rc, once);
    time_gemm_calls(engine, o, once, settings.latency_calls, r);
    // The same product as a plan: recorded alone, and many in flight.
    GemmDesc desc;
    desc.type = type;
    desc.c_type = o.rc.type;
    desc.m = desc.n = desc.k = n;
    GemmPlanOptions plan_options;
    plan_options.gemm = once;
    plan_options.max_pending = 16;
    GemmPlan plan = engine.plan(desc, plan_options);
    const BufferOffset a{&o.A, 0}, b{&o.B, 0}, c{&o.C, 0};
    r.record_calls = std::max<uint32_t>(kRecordCalls, settings.latency_calls);
    r.record_us = summarize(engine.time_record(plan, a, b, c, r.record_calls)).median;
    r.calls = settings.latency_calls;
    time_plan_submissions(engine, plan, {a, b, c}, r);
    time_timed_plan(engine, desc, plan_options, {a, b, c}, r);
    r.stats = summarize(r.wall_us);
    r.status = Status::passed;
  });
  return r;
}

bool is_refusal(const Error& e) {
  switch (e.code()) {
    case ErrorCode::unsupported_type:
    case ErrorCode::unsupported_config:
    case ErrorCode::too_large:
    case ErrorCode::out_of_memory: return true;
    default: return false;
  }
}

}  // namespace vkgemm::cli::bench
