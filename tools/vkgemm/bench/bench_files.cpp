#include "bench_files.hpp"

#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench_steady.hpp"
#include "device_json.hpp"
#include "vkgemm/error.hpp"
#include "vkgemm/files.hpp"

namespace vkgemm::cli::bench {
namespace {

using json = nlohmann::ordered_json;  // keys in the order written, as docs/bench.md lists them

// JSON has no infinity or NaN: such a value (a NaN in a failed result) is written as null.
json number(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

json options_json(const GemmOptions& o) { return {{"kernel", std::string(to_string(o.kernel))}, {"tile", o.tile}}; }

json sampled_json(const Comparison::Sampled& s) {
  return {{"seed", s.seed},
          {"witnesses", s.witnesses},
          {"elements", s.elements},
          {"tile", {s.tile_m, s.tile_n}},
          {"vectors", s.vectors},
          {"row_sum_ratio", number(s.row_sum_ratio)},
          {"row_sum_catch", s.row_sum_catch},
          {"bad_rows", s.bad_rows},
          {"rows_unjudged", s.rows_unjudged}};
}

json check_json(const std::optional<Comparison>& c, double seconds) {
  if (!c) return nullptr;
  json out = {{"passed", c->passed},
              {"method", c->sampled ? "sampled" : "full"},
              {"seconds", seconds},
              {"normwise_error", number(c->normwise_error)},
              {"bound", c->bound},
              {"worst_element_ratio", number(c->worst_element_ratio)},
              {"bad_elements", c->bad_elements}};
  if (c->sampled) out["sampled"] = sampled_json(*c->sampled);
  return out;
}

json stats_json(const std::optional<Stats>& s, const std::vector<double>& samples, const char* unit) {
  if (!s) return nullptr;
  return {{"unit", unit},         {"count", s->count},   {"median", s->median},         {"min", s->min},
          {"max", s->max},        {"mean", s->mean},     {"stddev", s->stddev},         {"spread_pct", s->spread_pct},
          {"samples", samples}};
}

json optional_number(bool present, double v) { return present ? number(v) : json(nullptr); }

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (const char ch : s) {
    if (ch == '"') out += '"';
    out += ch;
  }
  return out + "\"";
}

std::string csv_number(bool present, double v) { return present && std::isfinite(v) ? fmt::format("{:.9g}", v) : ""; }

// The warm-up a timed case had, throughput or latency (nothing when it was not timed).
json warmup_json(bool timed, const WarmUp& w) {
  if (!timed) return nullptr;
  return {{"busy_ms", w.busy_ms}, {"dispatches", w.dispatches}, {"settled", w.settled}};
}

// The calibration product, each check's reading, and the run's verdict.
json steadiness_json(const Run& run) {
  json checks = json::array();
  for (const Checkpoint& c : run.steadiness.checks) {
    checks.push_back({{"at_s", c.at_s}, {"median_ms", c.median_ms}, {"warmup_ms", c.warmup_ms}});
  }
  json segments = json::array();
  for (const Verdict& v : judge_segments(run.steadiness.checks, run.settings.steady_tolerance_pct)) {
    segments.push_back({{"steady", v.steady}, {"slowdown", number(v.slowdown)}});
  }
  const size_t unsteady = unsteady_count(run);
  return {{"product", run.steadiness.product},
          {"checks", checks},
          {"segments", segments},
          {"unsteady_cases", unsteady},
          {"verdict", unsteady ? "unsteady" : "steady"}};
}

json not_applicable_json(const std::vector<NotApplicable>& never) {
  json out = json::array();
  for (const NotApplicable& n : never) {
    out.push_back({{"kernel", std::string(to_string(n.kernel))}, {"type", std::string(to_string(n.type))},
                   {"reason", n.reason}});
  }
  return out;
}

}  // namespace

// The measured ceilings, name -> GFLOP/s (empty when --peak-gflops was given).
// A case's roofline (bench_result.hpp): its ceiling, the bound that sets it, the bytes and the fraction reached;
// null where the copy rate was not measured or the case was not timed.
json roofline_json(const std::optional<Roofline>& r, const std::optional<double>& fraction) {
  if (!r || !fraction) return nullptr;
  return {{"gflops", number(r->gflops)}, {"bound", std::string(r->bound())}, {"bytes", number(r->bytes)},
          {"memory_gflops", number(r->memory_gflops)}, {"fraction", number(*fraction)}};
}

json ceilings_json(const std::vector<Ceiling>& ceilings) {
  json out = json::object();
  for (const Ceiling& c : ceilings) out[c.name] = number(c.gflops);
  return out;
}

namespace {

// What a case's row holds whatever its kind (the schema's common part): what it is, how it ran, its check,
// its warm-up and where its time went.
template <typename Result>
json common_json(const Result& r) {
  return {{"type", std::string(to_string(r.type))},
          {"kernel", std::string(to_string(r.config.options.kernel))},
          {"config", r.config.label},
          {"ran", r.ran},
          {"options", options_json(r.config.options)},
          {"seed", std::to_string(r.seed)},
          {"status", std::string(to_string(r.status))},
          {"reason", r.reason},
          {"verification", check_json(r.check, r.check_seconds)},
          {"segment", r.segment},
          {"wall_seconds", r.wall_seconds},
          {"data_seconds", r.data_seconds},
          {"warmup", warmup_json(r.timed(), r.warmup)}};
}

// One throughput case's row of the JSON's "cases".
json case_json(const CaseResult& c) {
  json out = {{"m", c.shape.m}, {"n", c.shape.n}, {"k", c.shape.k}};
  out.update(common_json(c));
  out.update({{"gpu_time", stats_json(c.stats, c.gpu_ms, "ms")},
              {"gflops", optional_number(c.timed(), c.gflops)},
              {"gflops_best", optional_number(c.timed(), c.gflops_best)},
              {"efficiency", c.efficiency ? number(*c.efficiency) : json(nullptr)},
              {"efficiency_ceiling", c.efficiency ? json(c.efficiency_ceiling) : json(nullptr)},
              {"roofline", roofline_json(c.roofline, c.roofline_fraction)}});
  return out;
}

// One latency case's row of the JSON's "latency".
json latency_json(const LatencyResult& l) {
  json out = {{"n", l.size}};
  out.update(common_json(l));
  out.update({{"wall_time", stats_json(l.stats, l.wall_us, "us")},
              {"record_us", optional_number(l.timed(), l.record_us)},
              {"record_calls", l.record_calls},
              {"sync_us", optional_number(l.timed(), l.timed() ? l.stats->median : 0.0)},
              {"timed_sync_us", optional_number(l.timed(), l.timed_sync_us)},
              {"gpu_us", optional_number(l.timed() && l.gpu_us >= 0, l.gpu_us)},
              {"submit_wait_us", optional_number(l.timed(), l.submit_wait_us)},
              {"inflight_us", optional_number(l.timed(), l.inflight_us)},
              {"plan_submit_us", optional_number(l.timed(), l.plan_submit_us)},
              {"plan_wait_us", optional_number(l.timed(), l.plan_wait_us)},
              {"plan_sync_us", optional_number(l.timed(), l.plan_sync_us)},
              {"timed_plan_us", optional_number(l.timed(), l.timed_plan_us)},
              {"rerecord_us", optional_number(l.timed(), l.rerecord_us)},
              {"calls", l.calls}});
  return out;
}

// One host-memory case's row of the JSON's "host_products".
json host_json(const HostResult& h) {
  const bool t = h.timed();
  json out = {{"n", h.size}};
  out.update(common_json(h));
  out.update({{"wall_time", stats_json(h.stats, h.wall_ms, "ms")},
              {"gpu_ms", optional_number(t, h.gpu_ms)},
              {"before_first_product_ms", optional_number(t, h.upload_ms)},
              {"after_last_product_ms", optional_number(t, h.download_ms)},
              {"bytes", optional_number(t, h.bytes)},
              {"copy_gbps", optional_number(t, h.copy_gbps)},
              {"gflops", optional_number(t, h.gflops)}});
  return out;
}

}  // namespace

std::string to_json(const Run& run) {
  json cases = json::array();
  for (const CaseResult& c : run.cases) cases.push_back(case_json(c));
  json latency = json::array();
  for (const LatencyResult& l : run.latency) latency.push_back(latency_json(l));
  json host = json::array();
  for (const HostResult& h : run.host_products) host.push_back(host_json(h));
  const Settings& s = run.settings;
  const json doc = {
      {"format", "vkgemm-bench"},
      {"format_version", kJsonFormatVersion},
      {"complete", run.complete},
      {"vkgemm", {{"version", run.vkgemm_version}, {"commit", run.vkgemm_commit}}},
      {"date", run.date},
      {"device", device_summary_json(run.device)},
      {"host", {{"os", run.host.os}, {"cpu", run.host.cpu}, {"threads", run.host.threads}}},
      {"settings",
       {{"repeat", s.repeat},
        {"warmup", s.warmup},
        {"warmup_ms", s.warmup_ms},
        {"steady_tolerance_pct", s.steady_tolerance_pct},
        {"verify_max", s.verify_max},
        {"check", s.check},
        {"baseline_max", s.baseline_max},
        {"peak_gflops", s.peak_gflops ? json(*s.peak_gflops) : json(nullptr)},
        {"ceilings", ceilings_json(s.ceilings)},
        {"copy_gbps", s.copy_gbps ? number(*s.copy_gbps) : json(nullptr)},
        {"latency_calls", s.latency_calls},
        {"seed", std::to_string(s.seed)}}},
      {"steadiness", steadiness_json(run)},
      {"not_applicable", not_applicable_json(run.not_applicable)},
      {"cases", cases},
      {"latency", latency},
      {"host_products", host}};
  return doc.dump(1) + "\n";
}

std::string to_csv(const Run& run) {
  std::string out =
      "kind,device,driver_version,vkgemm_commit,m,n,k,type,kernel,config,status,unit,count,median,min,max,mean,"
      "stddev,spread_pct,gflops,gflops_best,efficiency,normwise_error,worst_element_ratio,bad_elements,seed,ran\n";
  const std::string device = csv_field(run.device.name) + "," + csv_field(run.device.driver_version) + "," +
                             csv_field(run.vkgemm_commit);
  const auto row = [&](const char* kind, const Shape& sh, DataType type, const BenchConfig& config, Status status,
                       const char* unit, const std::optional<Stats>& st, bool rate, double gflops, double best,
                       const std::optional<double>& eff, const std::optional<Comparison>& check, uint64_t seed,
                       const std::string& ran) {
    const bool t = st.has_value();
    const Stats s = st.value_or(Stats{});
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", kind, device, sh.m,
                       sh.n, sh.k, to_string(type), to_string(config.options.kernel), csv_field(config.label),
                       to_string(status), t ? unit : "", t ? std::to_string(s.count) : "", csv_number(t, s.median),
                       csv_number(t, s.min), csv_number(t, s.max), csv_number(t, s.mean), csv_number(t, s.stddev),
                       csv_number(t, s.spread_pct), csv_number(t && rate, gflops), csv_number(t && rate, best),
                       csv_number(eff.has_value(), eff.value_or(0.0)),
                       csv_number(check && !is_integer(type), check ? check->normwise_error : 0.0),
                       csv_number(check.has_value(), check ? check->worst_element_ratio : 0.0),
                       check ? std::to_string(check->bad_elements) : "", seed, csv_field(ran));
  };
  for (const CaseResult& c : run.cases) {
    row("throughput", c.shape, c.type, c.config, c.status, "ms", c.stats, true, c.gflops, c.gflops_best, c.efficiency,
        c.check, c.seed, c.ran);
  }
  for (const LatencyResult& l : run.latency) {
    row("latency", {l.size, l.size, l.size}, l.type, l.config, l.status, "us", l.stats, false, 0, 0, std::nullopt,
        l.check, l.seed, l.ran);
  }
  for (const HostResult& h : run.host_products) {
    row("host", {h.size, h.size, h.size}, h.type, h.config, h.status, "ms", h.stats, true, h.gflops, h.gflops,
        std::nullopt, h.check, h.seed, h.ran);
  }
  return out;
}

void write_file(const std::string& path, const std::string& text) { files::write_atomically(path, text); }

void check_outputs(const std::string& json_path, const std::string& csv_path) {
  files::check_distinct({{"--json", json_path}, {"--csv", csv_path}});
  if (!json_path.empty()) files::check_destination(json_path, "--json");
  if (!csv_path.empty()) files::check_destination(csv_path, "--csv");
}

}  // namespace vkgemm::cli::bench
