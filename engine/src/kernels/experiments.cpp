#include "kernels/experiments.hpp"

#include <cstdlib>
#include <string_view>

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

// "key=value" pairs separated by commas: the value of `key`, when it is there.
std::optional<uint32_t> value_of(const char* text, std::string_view key, const char** rest = nullptr) {
  const std::string_view view(text);
  const size_t at = view.find(key);
  if (at == std::string_view::npos || (at > 0 && view[at - 1] != ',')) return std::nullopt;
  char* end = nullptr;
  const auto v = static_cast<uint32_t>(std::strtoul(text + at + key.size(), &end, 10));
  if (rest) *rest = end;
  return v;
}

KhrExperiment read_khr_experiment() {
  KhrExperiment e;
  const char* env = knob("VKGEMM_EXPERIMENT_COOPMAT");
  if (!env) return e;
  const auto value = [&](std::string_view key) { return value_of(env, key).value_or(0); };
  e.bm = value("bm="), e.bn = value("bn="), e.bk = value("bk="), e.wm = value("wm="), e.wn = value("wn=");
  e.unroll = value("unroll="), e.buffers = value("buffers="), e.sg = value("sg="), e.group = value("group=");
  e.whole = value_of(env, "whole=");
  const char* rest = nullptr;
  if (const auto m = value_of(env, "shape=", &rest)) {
    e.tm = *m;
    char* end = nullptr;
    if (*rest == 'x') e.tn = static_cast<uint32_t>(std::strtoul(rest + 1, &end, 10)), rest = end;
    if (*rest == 'x') e.tk = static_cast<uint32_t>(std::strtoul(rest + 1, &end, 10));
  }
  return e;
}

Coopmat2Experiment read_coopmat2_experiment() {
  Coopmat2Experiment e;
  const char* env = knob("VKGEMM_EXPERIMENT_COOPMAT2");
  if (!env) return e;
  const auto value = [&](std::string_view key) { return value_of(env, key); };
  const auto multiple_of_16 = [](uint32_t v) { return v >= 16 && v <= 512 && v % 16 == 0; };
  if (const auto v = value("bm="); v && multiple_of_16(*v)) e.bm = *v;
  if (const auto v = value("bn="); v && multiple_of_16(*v)) e.bn = *v;
  if (const auto v = value("bk="); v && (*v == 16 || *v == 32 || *v == 64 || *v == 128)) e.bk = *v;
  if (const auto v = value("inv="); v && (*v == 32 || *v == 64 || *v == 128 || *v == 256)) e.invocations = *v;
  if (const auto v = value("prefetch=")) e.prefetch = *v != 0;
  if (const auto v = value("unroll="); v && *v >= 1 && *v <= 16) e.unroll = *v;
  if (const auto v = value("splits="); v && *v >= 1 && *v <= 8) e.splits = *v;
  if (const auto v = value("group="); v && *v >= 1 && *v <= 64) e.group = *v;
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
