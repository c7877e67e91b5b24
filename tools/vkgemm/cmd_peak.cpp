// vkgemm peak: the device's measured ceilings (vkgemm/peak.hpp) as a table, and with --json as records that
// carry the device, the driver and the commit the binary was built from.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "build_commit.hpp"
#include "commands.hpp"
#include "option_checks.hpp"
#include "steady.hpp"
#include "vkgemm/files.hpp"
#include "vkgemm/vkgemm.hpp"

namespace vkgemm::cli {
namespace {

struct PeakArgs {
  uint32_t repeat = 7;
  double target_ms = 0.0;
  double warmup_ms = -1.0;  // < 0: the device's default (steady.hpp)
  std::string json_path;
};

void print_table(const DeviceInfo& dev, const std::vector<PeakMeasurement>& rows) {
  fmt::print("device:   {} ({}, driver {} {})\n", dev.name, to_string(dev.type), dev.driver_name, dev.driver_version);
  size_t width = 32;  // the name column: as wide as the longest name, so that the values line up
  for (const PeakMeasurement& m : rows) width = std::max(width, m.name.size());
  fmt::print("{:<{}} {:>12} {:>10}  {}\n", "measurement", width, "value", "ms", "how");
  for (const PeakMeasurement& m : rows) {
    if (!m.measured && m.derived_from.empty()) {
      fmt::print("{:<{}} {:>12} {:>10}  {}\n", m.name, width, "-", "-", m.reason);
      continue;
    }
    const std::string value = fmt::format("{:.{}f} {}", m.value, m.unit == "GB/s" ? 1 : 3, m.unit);
    const std::string ms = m.measured ? fmt::format("{:.3f}", m.median_ms) : "-";  // a derived row is not timed
    fmt::print("{:<{}} {:>12} {:>10}  {}\n", m.name, width, value, ms, m.detail);
  }
}

nlohmann::json peak_records(const DeviceInfo& dev, const std::vector<PeakMeasurement>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const PeakMeasurement& m : rows) {
    nlohmann::json r = {{"vkgemm_version", version}, {"build_commit", build_commit}, {"device", dev.name},
                        {"driver", dev.driver_version}, {"driver_name", dev.driver_name}, {"measurement", m.name},
                        {"unit", m.unit}, {"measured", m.measured}, {"derived", !m.derived_from.empty()}};
    if (!m.derived_from.empty()) {  // not timed: the value follows from another row of the same run
      r["value"] = m.value;
      r["derived_from"] = m.derived_from;
      r["int8_products"] = m.products;
      r["detail"] = m.detail;
    } else if (m.measured) {
      r["value"] = m.value;
      r["median_ms"] = m.median_ms;
      r["gpu_ms"] = m.gpu_ms;
      r["work_per_dispatch"] = m.work;
      r["iterations"] = m.iterations;
      r["detail"] = m.detail;
    } else {
      r["reason"] = m.reason;
    }
    out.push_back(std::move(r));
  }
  return out;
}

int run_peak(const PeakArgs& args, const CommonOptions& common) {
  if (!args.json_path.empty()) files::check_destination(args.json_path, "--json");  // before the measurements
  Engine engine = open_engine(common);
  PeakOptions options;
  options.repeat = args.repeat;
  options.target_ms = args.target_ms;
  options.warm_ms = default_warmup_ms(engine.device(), args.warmup_ms);  // the shared warm-up rule
  // The shared steadiness rule: the calibration product before the measurements and after them (a device
  // without timestamps measures nothing, and its rows say so).
  std::optional<SteadyCheck> steady;
  if (engine.device().timestamps) {
    steady.emplace(engine, options.warm_ms, kSteadyTolerancePct);
    steady->check();
  }
  const auto rows = measure_peaks(engine, options);
  if (steady) steady->check();
  print_table(engine.device(), rows);
  if (steady) fmt::print("steadiness: {}", steady->summary([](size_t) { return std::string("the measurements"); }));
  if (!args.json_path.empty()) {
    files::write_atomically(args.json_path, peak_records(engine.device(), rows).dump(1) + "\n");
    fmt::print("wrote:    {}\n", args.json_path);
  }
  return finish(engine, 0);
}

}  // namespace

Command add_peak_command(CLI::App& cmd, CommonOptions& common) {
  auto args = std::make_shared<PeakArgs>();
  cmd.add_option("--repeat", args->repeat, "Timed dispatches per measurement; the median is reported")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd.add_option("--target-ms", args->target_ms,
                 "Grow each kernel's work until one dispatch lasts this long (default 0: 10 ms on a GPU, 20 on a CPU)")
      ->check(number_between(0.0, 1000.0));
  cmd.add_option("--warmup-ms", args->warmup_ms,
                 fmt::format("Before each measurement, run its kernel until the device has been busy this long (an "
                             "idle GPU clocks down); 0: none [default: {:g} on a GPU, 0 on a CPU device]",
                             kGpuWarmupMs))
      ->check(number_between(0.0, 10000.0));
  cmd.add_option("--json", args->json_path,
                 "Write the measurements (device, driver, value, times, build_commit) as a JSON array");
  return {.run = [args, &common] { return run_peak(*args, common); }};
}

}  // namespace vkgemm::cli
