#include "bench_jobs.hpp"

#include <algorithm>

#include "bench_case.hpp"

namespace vkgemm::cli::bench {
namespace {

// Untimed calls run_latency makes before timing, for the progress estimate.
constexpr double kLatencyExtraCalls = 6;

bool applies(const std::vector<NotApplicable>& never, Kernel k, DataType t) {
  return std::none_of(never.begin(), never.end(), [&](const NotApplicable& n) { return n.kernel == k && n.type == t; });
}

// The host's multiply-adds for a case's check: the full reference's m*n*k; the sampled check's passes over
// A, B and C (each with its vectors) and its witnesses' sums (at most its budget).
double host_check_work(CheckHow how, const Shape& s) {
  if (how == CheckHow::none) return 0.0;
  if (how == CheckHow::full) return s.products();
  const double passes = 3.0 * (double(s.m) * s.k + double(s.k) * s.n + double(s.m) * s.n);
  return passes + std::min(s.products(), double(SampleOptions{}.budget));
}

double operand_elements(const Shape& s) { return double(s.m) * s.k + double(s.k) * s.n + double(s.m) * s.n; }

}  // namespace

std::string_view to_string(JobKind kind) noexcept {
  switch (kind) {
    case JobKind::throughput: return "throughput";
    case JobKind::latency: return "latency";
    case JobKind::host: return "host";
  }
  return "?";
}

Work case_work(const Shape& s, const Settings& settings, JobKind kind) {
  if (kind == JobKind::latency) {
    return {s.products() * (settings.latency_calls + kLatencyExtraCalls), s.products(), operand_elements(s)};
  }
  const double dispatches = settings.repeat + settings.warmup + 1;
  return {s.products() * dispatches, host_check_work(check_how(settings, s), s), operand_elements(s)};
}

SweepSpec make_sweep(const SweepRequest& r, const SweepDefaults& d) {
  SweepSpec p;
  const bool no_sizes = r.sizes == "none";  // latency only
  std::vector<Shape> squares;
  if (!r.sizes.empty() && !no_sizes) squares = parse_sizes(r.sizes);
  p.shapes = squares;
  if (!r.shapes.empty()) {
    const auto more = parse_shapes(r.shapes);
    p.shapes.insert(p.shapes.end(), more.begin(), more.end());
  }
  const bool told = !p.shapes.empty() || no_sizes;
  if (!told) p.shapes = parse_sizes(d.sizes), p.baseline_max = d.baseline_max;
  p.types = parse_types(r.types);
  p.kernels = parse_kernels(r.kernels.value_or("auto,all"));
  p.latency_kernels = r.kernels || d.latency_kernels.empty() ? p.kernels : parse_kernels(d.latency_kernels);
  // The device's own limits on a tile are a named skip, not a parse error.
  p.space.tiles = parse_uint_list(r.tiles.value_or(d.tiles), "--tiles", kMaxTile);
  if (r.latency_sizes) {
    if (*r.latency_sizes != "none") {
      for (const Shape& s : parse_sizes(*r.latency_sizes, "--latency-sizes")) p.latency_sizes.push_back(s.m);
    }
  } else if (told && !no_sizes) {
    p.latency_sizes = latency_sizes_following(squares);
  } else {
    for (const Shape& s : parse_sizes(d.latency_sizes, "--latency-sizes")) p.latency_sizes.push_back(s.m);
  }
  if (!r.host_sizes.empty() && r.host_sizes != "none") {
    for (const Shape& s : parse_sizes(r.host_sizes, "--host-sizes")) p.host_sizes.push_back(s.m);
  }
  return p;
}

std::vector<Job> make_jobs(const SweepSpec& spec, const Settings& settings, const std::vector<NotApplicable>& never) {
  std::vector<Job> jobs;
  for (const Shape& s : spec.shapes)
    for (DataType t : spec.types)
      for (Kernel k : spec.kernels)
        for (BenchConfig& c : configurations(k, spec.space)) {
          if (!applies(never, k, t)) continue;
          const bool baseline = k == Kernel::naive || k == Kernel::tiled;
          if (baseline && spec.baseline_max > 0.0 && s.products() > spec.baseline_max) continue;
          // The default sweep's squares are not what the skinny and thin kernels are for (gemv runs them in
          // blocks of 16 columns, slower than naive; thin holds at most a few hundred of K): they are timed
          // where asked for, on the shapes given.
          if ((k == Kernel::gemv || k == Kernel::thin) && spec.baseline_max > 0.0) continue;
          jobs.push_back({s, t, std::move(c), JobKind::throughput, case_work(s, settings, JobKind::throughput)});
        }
  for (const auto& [sizes, kind] : {std::pair{&spec.latency_sizes, JobKind::latency},
                                   std::pair{&spec.host_sizes, JobKind::host}})
    for (uint32_t n : *sizes)
      for (DataType t : spec.types)
        for (Kernel k : spec.latency_kernels) {
          if (!applies(never, k, t)) continue;
          const Shape s{n, n, n};
          jobs.push_back({s, t, configurations(k, spec.space).front(), kind, case_work(s, settings, kind)});
        }
  return jobs;
}

}  // namespace vkgemm::cli::bench
