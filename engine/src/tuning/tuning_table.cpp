#include "tuning/tuning_table.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "vkgemm/error.hpp"

namespace vkgemm::tuning {
namespace {

using nlohmann::json;
constexpr const char* kFormat = "vkgemm-tuning-1";

json config_to_json(const BlockedConfig& c) {
  return {{"bm", c.bm}, {"bn", c.bn}, {"bk", c.bk}, {"tm", c.tm}, {"tn", c.tn}, {"lanes_n", c.lanes_n},
          {"split_k", c.split_k}, {"group_m", c.group_m}};
}

BlockedConfig config_from_json(const json& j) {
  BlockedConfig c;
  c.bm = j.at("bm").get<uint32_t>();
  c.bn = j.at("bn").get<uint32_t>();
  c.bk = j.at("bk").get<uint32_t>();
  c.tm = j.at("tm").get<uint32_t>();
  c.tn = j.at("tn").get<uint32_t>();
  c.lanes_n = j.at("lanes_n").get<uint32_t>();
  c.split_k = j.at("split_k").get<uint32_t>();
  c.group_m = j.value("group_m", 1u);
  return c;
}

double distance(const Entry& e, uint32_t m, uint32_t n, uint32_t k) {
  const auto d = [](uint32_t a, uint32_t b) {
    return std::log2(std::max(1.0, static_cast<double>(a))) - std::log2(std::max(1.0, static_cast<double>(b)));
  };
  return d(e.m, m) * d(e.m, m) + d(e.n, n) * d(e.n, n) + d(e.k, k) * d(e.k, k);
}

bool trans_from_json(const json& e, const char* key, const std::string& origin) {
  const std::string op = e.value(key, std::string("n"));
  if (op != "n" && op != "t") {
    throw Error(ErrorCode::file_format,
                fmt::format("{}: an entry's {} must be \"n\" or \"t\" (got \"{}\")", origin, key, op));
  }
  return op == "t";
}

Entry entry_from_json(const json& e, const std::string& origin) {
  Entry entry;
  const auto type = parse_data_type(e.at("type").get<std::string>());
  if (!type) throw Error(ErrorCode::file_format, fmt::format("{}: unknown type in an entry", origin));
  if (!tuned_type(*type)) {
    throw Error(ErrorCode::file_format, fmt::format("{}: an {} entry; {} is not tuned (auto ranks its kernels)",
                                                    origin, to_string(*type), to_string(*type)));
  }
  entry.type = *type;
  entry.m = e.at("m").get<uint32_t>();
  entry.n = e.at("n").get<uint32_t>();
  entry.k = e.at("k").get<uint32_t>();
  entry.trans_a = trans_from_json(e, "op_a", origin);
  entry.trans_b = trans_from_json(e, "op_b", origin);
  const auto kernel = parse_kernel(e.value("kernel", std::string("blocked")));
  if (!kernel || (*kernel != Kernel::blocked && *kernel != Kernel::tiled)) {
    throw Error(ErrorCode::file_format, fmt::format("{}: an entry's kernel must be blocked or tiled", origin));
  }
  entry.kernel = *kernel;
  entry.tile = e.value("tile", 0u);
  if (entry.kernel == Kernel::blocked) entry.config = config_from_json(e.at("config"));
  entry.gflops = e.value("gflops", 0.0);
  return entry;
}

bool same_ops(const Entry& e, bool trans_a, bool trans_b) { return e.trans_a == trans_a && e.trans_b == trans_b; }

// An entry's key: one winner per type, shape and ops.
bool same_key(const Entry& a, const Entry& b) {
  return a.type == b.type && a.m == b.m && a.n == b.n && a.k == b.k && same_ops(a, b.trans_a, b.trans_b);
}

EmulationCost emulation_from_json(const json& j) {
  EmulationCost c;
  c.int8_ops = j.at("int8_tops").get<double>() * 1e12;
  c.split_ns = j.at("split_ns").get<double>(), c.merge_ns = j.at("merge_ns").get<double>();
  c.fixed_us = j.at("fixed_us").get<double>();
  c.f64_gflops = j.at("f64_gflops").get<double>(), c.f32_gflops = j.at("f32_gflops").get<double>();
  c.measured = j.value("measured", "");
  if (!(c.int8_ops > 0.0) || !(c.f64_gflops > 0.0) || !(c.f32_gflops > 0.0) || c.split_ns < 0.0 || c.merge_ns < 0.0 ||
      c.fixed_us < 0.0) {
    throw json::other_error::create(501, "emulation: rates must be positive and costs not negative", &j);
  }
  return c;
}

json emulation_to_json(const EmulationCost& c) {
  return {{"int8_tops", c.int8_ops / 1e12}, {"split_ns", c.split_ns}, {"merge_ns", c.merge_ns},
          {"fixed_us", c.fixed_us}, {"f64_gflops", c.f64_gflops}, {"f32_gflops", c.f32_gflops},
          {"measured", c.measured}};
}

// `from`'s entries added to `into`, each replacing the entry of its key there.
void merge_entries(std::vector<Entry>& into, const std::vector<Entry>& from) {
  for (const Entry& e : from) {
    std::erase_if(into, [&](const Entry& old) { return same_key(old, e); });
    into.push_back(e);
  }
}

bool same_table(const DeviceTable& a, const DeviceTable& b) {
  return a.vendor_id == b.vendor_id && a.device == b.device && a.driver == b.driver;
}

}  // namespace

void Table::add_json(std::string_view text, const std::string& origin) {
  ++generation_;  // before any change: one that throws half way counts too
  try {
    const json root = json::parse(text);
    if (root.at("format").get<std::string>() != kFormat) {
      throw Error(ErrorCode::file_format, fmt::format("{}: not a {} file", origin, kFormat));
    }
    for (const auto& d : root.at("devices")) {
      DeviceTable table;
      table.vendor_id = d.at("vendor_id").get<uint32_t>();
      table.device = d.at("device").get<std::string>();
      table.driver = d.at("driver").get<std::string>();
      table.vendor_default = d.value("vendor_default", false);
      if (d.contains("emulation")) table.emulation = emulation_from_json(d.at("emulation"));
      for (const auto& e : d.at("entries")) table.entries.push_back(entry_from_json(e, origin));
      std::erase_if(devices_, [&](const DeviceTable& t) { return same_table(t, table); });
      devices_.push_back(std::move(table));
    }
  } catch (const json::exception& e) {
    throw Error(ErrorCode::file_format, fmt::format("{}: malformed tuning file: {}", origin, e.what()));
  }
}

void Table::add_layer_json(std::string_view text, const std::string& origin) {
  ++generation_;  // before any change: one that throws half way counts too
  Table layer;
  layer.add_json(text, origin);
  for (DeviceTable& t : layer.devices_) {
    // The base: this device's table with the same driver, else the last one with another driver.
    const DeviceTable* base = nullptr;
    for (const DeviceTable& d : devices_) {
      if (d.vendor_id != t.vendor_id || d.device != t.device) continue;
      if (!base || d.driver == t.driver || base->driver != t.driver) base = &d;
    }
    if (base) {
      DeviceTable merged = *base;
      merged.driver = t.driver;
      merged.vendor_default = base->vendor_default || t.vendor_default;
      if (t.emulation) merged.emulation = t.emulation;  // a layer's measurement replaces the built-in one
      merge_entries(merged.entries, t.entries);
      t = std::move(merged);
    }
    std::erase_if(devices_, [&](const DeviceTable& d) { return same_table(d, t); });
    devices_.push_back(std::move(t));
  }
}

bool tuned_type(DataType type) noexcept {
  return type == DataType::f32 || type == DataType::i32 || type == DataType::f64;
}

std::string_view to_string(Tier tier) noexcept {
  switch (tier) {
    case Tier::device: return "device";
    case Tier::vendor: return "vendor";
    case Tier::none: return "none";
  }
  return "none";
}

std::pair<const DeviceTable*, Tier> Table::find(const DeviceInfo& device) const {
  const DeviceTable* own = nullptr;
  const DeviceTable* vendor = nullptr;
  for (const auto& t : devices_) {  // later tables (the user's) win over earlier (built-in) ones
    if (t.vendor_id != device.vendor_id) continue;
    if (t.device == device.name &&
        (!own || t.driver == device.driver_version || own->driver != device.driver_version)) {
      own = &t;
    } else if (t.vendor_default) {
      vendor = &t;
    }
  }
  if (own) return {own, Tier::device};
  if (vendor) return {vendor, Tier::vendor};
  return {nullptr, Tier::none};
}

std::pair<const DeviceTable*, Tier> Table::find(const DeviceInfo& device, DataType type) const {
  const auto own = find(device);
  const auto holds_type = [type](const DeviceTable* t) {
    return t && std::any_of(t->entries.begin(), t->entries.end(), [type](const Entry& e) { return e.type == type; });
  };
  if (own.second == Tier::device && holds_type(own.first)) return own;
  // The vendor's table for this type: the last vendor default that holds it (one device's measurements can
  // be the vendor's for one type, another's for the others).
  const DeviceTable* vendor = nullptr;
  for (const auto& t : devices_) {
    if (t.vendor_id == device.vendor_id && t.vendor_default && t.device != device.name && holds_type(&t)) vendor = &t;
  }
  return vendor ? std::pair{vendor, Tier::vendor} : own;
}

std::optional<Entry> Table::lookup(const DeviceInfo& device, DataType type, uint32_t m, uint32_t n, uint32_t k,
                                   bool trans_a, bool trans_b, uint32_t batch) const {
  const DeviceTable* table = find(device, type).first;
  if (!table || batch != 1) return std::nullopt;
  const bool tuned_apart = std::any_of(table->entries.begin(), table->entries.end(), [&](const Entry& e) {
    return e.type == type && same_ops(e, trans_a, trans_b);
  });
  const Entry* best = nullptr;
  double best_distance = std::numeric_limits<double>::infinity();
  for (const auto& e : table->entries) {
    if (e.type != type || (tuned_apart && !same_ops(e, trans_a, trans_b))) continue;
    const double dist = distance(e, m, n, k);
    if (dist < best_distance) best_distance = dist, best = &e;
  }
  return best ? std::optional<Entry>(*best) : std::nullopt;
}

std::optional<Entry> Table::exact(const DeviceInfo& device, DataType type, Kernel kernel, uint32_t m, uint32_t n,
                                  uint32_t k, bool trans_a, bool trans_b, uint32_t batch) const {
  const DeviceTable* table = find(device, type).first;
  if (!table || batch != 1) return std::nullopt;
  const Entry* found = nullptr;
  for (const Entry& e : table->entries) {
    if (e.type != type || e.kernel != kernel || e.m != m || e.n != n || e.k != k) continue;
    if (same_ops(e, trans_a, trans_b)) return e;  // tuned for these ops
    if (same_ops(e, false, false)) found = &e;     // the untransposed shape's, unless these ops have their own
  }
  return found ? std::optional<Entry>(*found) : std::nullopt;
}

void Table::update(const DeviceInfo& device, const std::vector<Entry>& entries) {
  ++generation_;  // before any change: one that throws half way counts too
  DeviceTable* table = nullptr;
  for (auto& t : devices_) {
    if (t.vendor_id == device.vendor_id && t.device == device.name && t.driver == device.driver_version) table = &t;
  }
  if (!table) {
    devices_.push_back({device.vendor_id, device.name, device.driver_version, {}});
    table = &devices_.back();
  }
  merge_entries(table->entries, entries);
}

std::string Table::to_json() const {
  json root = {{"format", kFormat}, {"devices", json::array()}};
  for (const auto& t : devices_) {
    json d = {{"vendor_id", t.vendor_id}, {"device", t.device}, {"driver", t.driver}, {"entries", json::array()}};
    if (t.vendor_default) d["vendor_default"] = true;
    if (t.emulation) d["emulation"] = emulation_to_json(*t.emulation);
    for (const auto& e : t.entries) {
      json entry = {{"type", std::string(to_string(e.type))}, {"m", e.m}, {"n", e.n}, {"k", e.k},
                    {"kernel", std::string(to_string(e.kernel))}, {"gflops", std::round(e.gflops * 10) / 10}};
      if (e.trans_a) entry["op_a"] = "t";
      if (e.trans_b) entry["op_b"] = "t";
      if (e.kernel == Kernel::blocked) {
        entry["config"] = config_to_json(e.config);
      } else {
        entry["tile"] = e.tile;
      }
      d["entries"].push_back(entry);
    }
    root["devices"].push_back(d);
  }
  return root.dump(1) + "\n";
}

}  // namespace vkgemm::tuning
