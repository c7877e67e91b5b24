#include "kernels/experiments.hpp"

#include <cctype>
#include <cstdlib>
#include <initializer_list>
#include <string_view>

#include <fmt/format.h>

#include "vkgemm/error.hpp"

namespace vkgemm::kernels {
namespace {

// The one place a knob is read: in a release build there are none.
const char* knob(const char* name) {
#ifdef VKGEMM_EXPERIMENTS
  return std::getenv(name);  // set but empty counts as set: each reader then overrides nothing
#else
  (void)name;
  return nullptr;
#endif
}

// "key=value" pairs separated by commas: the value of `key` in knob `name`'s text, when it is there. A value
// that is not a number (digits, up to 10^9, then the pair's end; with `rest`, what follows the digits is the
// caller's to read) is refused.
std::optional<uint32_t> value_of(const char* name, const char* text, std::string_view key,
                                 const char** rest = nullptr) {
  const std::string_view view(text);
  const size_t at = view.find(key);
  if (at == std::string_view::npos || (at > 0 && view[at - 1] != ',')) return std::nullopt;
  const char* start = text + at + key.size();
  char* end = nullptr;
  const unsigned long v = std::strtoul(start, &end, 10);
  const bool digits = end != start && std::isdigit(static_cast<unsigned char>(*start)) != 0;
  if (!digits || v > 1000000000ul || (!rest && *end != ',' && *end != '\0')) {
    const std::string_view value(start);
    throw Error(ErrorCode::invalid_argument,
                fmt::format("{}: {} takes a number, not \"{}\"", name, key, value.substr(0, value.find(','))));
  }
  if (rest) *rest = end;
  return static_cast<uint32_t>(v);
}

// Every "key=value" pair of knob `name`'s text names one of `keys` (each given with its '='): a key the
// knob does not know is refused, not ignored, so that a misspelt override cannot pass for a measurement.
void check_keys(const char* name, std::string_view text, std::initializer_list<std::string_view> keys) {
  while (!text.empty()) {
    const size_t comma = text.find(',');
    const std::string_view pair = text.substr(0, comma);
    const size_t eq = pair.find('=');
    bool known = false;
    for (const std::string_view key : keys) known = known || (eq != pair.npos && pair.substr(0, eq + 1) == key);
    if (!pair.empty() && !known) {
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("{}: \"{}\" is not one of its keys ({}value, comma-separated)", name, pair,
                              fmt::join(keys, "value, ")));
    }
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
  }
}

KhrExperiment read_khr_experiment() {
  KhrExperiment e;
  constexpr const char* kName = "VKGEMM_EXPERIMENT_COOPMAT";
  const char* env = knob(kName);
  if (!env) return e;
  check_keys(kName, env,
             {"bm=", "bn=", "bk=", "wm=", "wn=", "unroll=", "buffers=", "sg=", "group=", "whole=", "shape="});
  const auto value = [&](std::string_view key) { return value_of(kName, env, key).value_or(0); };
  e.bm = value("bm="), e.bn = value("bn="), e.bk = value("bk="), e.wm = value("wm="), e.wn = value("wn=");
  e.unroll = value("unroll="), e.buffers = value("buffers="), e.sg = value("sg="), e.group = value("group=");
  e.whole = value_of(kName, env, "whole=");
  const char* rest = nullptr;
  if (const auto m = value_of(kName, env, "shape=", &rest)) {  // MxNxK
    const Error malformed(ErrorCode::invalid_argument, fmt::format("{}: shape= takes MxNxK", kName));
    uint32_t side[2] = {0, 0};
    for (uint32_t& v : side) {
      char* end = nullptr;
      const bool digit = *rest == 'x' && std::isdigit(static_cast<unsigned char>(rest[1])) != 0;
      v = digit ? static_cast<uint32_t>(std::strtoul(rest + 1, &end, 10)) : 0;
      if (!digit || v > 1024) throw malformed;
      rest = end;
    }
    if (*rest != ',' && *rest != '\0') throw malformed;
    e.tm = *m, e.tn = side[0], e.tk = side[1];
  }
  return e;
}

Coopmat2Experiment read_coopmat2_experiment() {
  Coopmat2Experiment e;
  constexpr const char* kName = "VKGEMM_EXPERIMENT_COOPMAT2";
  const char* env = knob(kName);
  if (!env) return e;
  check_keys(kName, env, {"bm=", "bn=", "bk=", "inv=", "prefetch=", "unroll=", "splits=", "group="});
  // A value outside what the key takes is refused with the range, never ignored; an absent key is nullopt.
  const auto take = [&](std::string_view key, bool (*ok)(uint32_t), const char* accepted) {
    const auto v = value_of(kName, env, key);
    if (v && !ok(*v)) {
      throw Error(ErrorCode::invalid_argument, fmt::format("{}: {}{} is not {}", kName, key, *v, accepted));
    }
    return v;
  };
  const auto tile_side = [](uint32_t v) { return v >= 16 && v <= 512 && v % 16 == 0; };
  e.bm = take("bm=", tile_side, "a multiple of 16 from 16 to 512").value_or(0);
  e.bn = take("bn=", tile_side, "a multiple of 16 from 16 to 512").value_or(0);
  e.bk = take("bk=", [](uint32_t v) { return v == 16 || v == 32 || v == 64 || v == 128; }, "16, 32, 64 or 128")
             .value_or(0);
  // The device lists its workgroup-scope shapes for given workgroup sizes: on NVIDIA's driver 32 to 256.
  e.invocations = take("inv=", [](uint32_t v) { return v == 32 || v == 64 || v == 128 || v == 256; },
                       "32, 64, 128 or 256 (the workgroup sizes coopmat2's shapes are listed for)")
                      .value_or(0);
  if (const auto on = take("prefetch=", [](uint32_t v) { return v <= 1; }, "0 or 1")) e.prefetch = *on != 0;
  e.unroll = take("unroll=", [](uint32_t v) { return v >= 1 && v <= 16; }, "from 1 to 16").value_or(0);
  e.splits = take("splits=", [](uint32_t v) { return v >= 1 && v <= 8; }, "from 1 to 8").value_or(0);
  e.group = take("group=", [](uint32_t v) { return v >= 1 && v <= 64; }, "from 1 to 64").value_or(0);
  return e;
}

}  // namespace

const KhrExperiment& khr_experiment() {
  static const KhrExperiment e = read_khr_experiment();
  return e;
}

const Coopmat2Experiment& coopmat2_experiment() {
  static const Coopmat2Experiment e = read_coopmat2_experiment();
  return e;
}

bool ozaki_drop_experiment(const std::string& shader) {
  static const char* drop = knob("VKGEMM_EXPERIMENT_OZAKI_DROP");
  for (std::string_view rest = drop ? drop : ""; !rest.empty();) {
    const size_t comma = rest.find(',');
    const std::string_view prefix = rest.substr(0, comma);
    if (!prefix.empty() && shader.compare(0, prefix.size(), prefix) == 0) return true;
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
  }
  return false;
}

const char* spirv_experiment_folder() {
  static const char* folder = knob("VKGEMM_EXPERIMENT_SPIRV");
  return folder;
}

const char* ir_experiment_folder() {
  static const char* folder = knob("VKGEMM_EXPERIMENT_IR");
  return folder;
}

}  // namespace vkgemm::kernels
