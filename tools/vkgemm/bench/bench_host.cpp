#include "bench_host.hpp"

#include <algorithm>
#include <chrono>
#include <cstddef>

#include <fmt/format.h>

#include "parallel_compare.hpp"
#include "vkgemm/error.hpp"

namespace vkgemm::cli::bench {
namespace {

// One product's operands in host memory: A and B the case's inputs, C of the type's default output.
struct HostInputs {
  GemmDesc desc;
  DataType c_type = DataType::f32;
  std::vector<std::byte> a, b, c;
};

HostInputs make_operands(Engine& engine, uint32_t n, DataType type, const GemmOptions& options, uint64_t seed,
                           double& seconds) {
  const auto start = std::chrono::steady_clock::now();
  HostInputs o;
  o.c_type = default_output_type(type);
  o.desc.type = type, o.desc.c_type = o.c_type;
  o.desc.m = o.desc.n = o.desc.k = n;
  engine.check_fits_host(o.desc, options);  // the device's memory, before host memory is spent on the inputs
  std::mt19937_64 rng(seed);
  o.a = nonzero_random(type, uint64_t{n} * n, rng);
  o.b = nonzero_random(type, uint64_t{n} * n, rng);
  o.c.resize(uint64_t{n} * n * element_size(o.c_type));
  seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return o;
}

// One call on poisoned C, checked as `how` says; `ran`: the kernel, its configuration and the panels.
std::optional<Comparison> check_host_once(Engine& engine, HostInputs& o, const GemmOptions& options, CheckHow how,
                                          uint64_t seed, const ResultHook& hook, double& seconds, std::string& ran) {
  const uint64_t elements = uint64_t(o.desc.m) * uint64_t(o.desc.n);
  o.c = poison(o.c_type, elements);
  const GemmTiming t = engine.gemm(o.desc, o.a.data(), o.b.data(), o.c.data(), options);
  ran = fmt::format("{} {}", to_string(t.kernel), t.config);
  if (how == CheckHow::none) return std::nullopt;
  if (hook) hook(o.c_type, o.c.data(), elements);
  const auto start = std::chrono::steady_clock::now();
  const uint32_t n = static_cast<uint32_t>(o.desc.m);
  Comparison c;
  if (how == CheckHow::full) {
    c = parallel_compare(o.desc.type, n, n, n, o.a.data(), o.b.data(), o.c.data());
  } else {
    SampleOptions sample;
    sample.seed = case_seed(seed, 1);
    const CompareOptions compare{.f16_accumulate = options.f16_accumulate && o.c_type == DataType::f16,
                                 .random_inputs = true};
    c = check_sampled(o.desc, o.a.data(), o.b.data(), o.c.data(), o.c.data(), compare, sample);
  }
  seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return c;
}

// `repeat` calls timed by the host's clock; the median call's GemmTiming says where its time went.
void time_host_calls(Engine& engine, HostInputs& o, const GemmOptions& options, uint32_t repeat, HostResult& r) {
  std::vector<std::pair<double, GemmTiming>> calls;
  for (uint32_t i = 0; i < repeat; ++i) {
    const auto start = std::chrono::steady_clock::now();
    GemmTiming t = engine.gemm(o.desc, o.a.data(), o.b.data(), o.c.data(), options);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    r.wall_ms.push_back(ms);
    calls.emplace_back(ms, std::move(t));
  }
  r.stats = summarize(r.wall_ms);
  std::nth_element(calls.begin(), calls.begin() + static_cast<std::ptrdiff_t>(calls.size() / 2), calls.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  const GemmTiming& median = calls[calls.size() / 2].second;
  for (const double ms : median.gpu_ms) r.gpu_ms += ms;
  r.upload_ms = median.upload_ms, r.download_ms = median.download_ms;
}

}  // namespace

HostResult run_host(Engine& engine, uint32_t n, DataType type, const BenchConfig& config, const Settings& settings,
                    uint64_t seed, const ResultHook& hook) {
  HostResult r;
  r.size = n, r.type = type, r.config = config, r.seed = seed;
  skipping_refusals(r, Shape{n, n, n}, [&] {
    engine.check_supported(type, config.options);
    HostInputs o = make_operands(engine, n, type, config.options, seed, r.data_seconds);
    GemmOptions once = config.options;
    once.repeat = 1, once.warmup = 0;
    r.check = check_host_once(engine, o, once, check_how(settings, {n, n, n}), seed, hook, r.check_seconds, r.ran);
    if (r.check && !r.check->passed) {
      r.status = Status::failed;
      r.reason = r.check->summary();
      return;  // never timed
    }
    // Warmed by time as every case is (the device sat idle through the check), with the case's own calls.
    r.warmup = warm_up(settings.warmup_ms, [&](uint32_t calls) {
      double ms = 0.0;
      for (uint32_t i = 0; i < calls; ++i) {
        for (const double x : engine.gemm(o.desc, o.a.data(), o.b.data(), o.c.data(), once).gpu_ms) ms += x;
      }
      return engine.device().timestamps ? ms : -1.0;
    });
    for (uint32_t i = 0; i < settings.warmup; ++i) engine.gemm(o.desc, o.a.data(), o.b.data(), o.c.data(), once);
    time_host_calls(engine, o, once, settings.repeat, r);
    r.bytes = double(o.a.size() + o.b.size() + o.c.size());
    const double median = r.stats->median;
    r.gflops = median > 0.0 ? 2.0 * double(n) * n * n / median * 1e-6 : 0.0;
    r.copy_gbps = median > r.gpu_ms ? r.bytes / (median - r.gpu_ms) * 1e-6 : 0.0;
    r.status = r.check ? Status::passed : Status::unverified;
  });
  return r;
}

}  // namespace vkgemm::cli::bench
