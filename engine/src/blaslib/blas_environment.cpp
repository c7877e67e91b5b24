#include "blaslib/blas_environment.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <utility>

namespace vkgemm::blaslib {
namespace {

// A variable's text through `lookup`; nullptr when unset or empty.
const char* variable(const char* (*lookup)(const char*), const char* name) {
  const char* value = lookup(name);
  return value && *value ? value : nullptr;
}

// A whole number of decimal digits (no sign, no space, no suffix) that fits 64 bits.
bool whole_number(const char* text, uint64_t& out) {
  if (*text < '0' || *text > '9') return false;
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(text, &end, 10);
  if (errno != 0 || *end != '\0') return false;
  out = v;
  return true;
}

std::string refusal(const char* name, const char* value, const char* accepted, const std::string& used) {
  return std::string(name) + "=" + value + " is not " + accepted + "; using " + used;
}

}  // namespace

void warn(const std::string& message) { std::fprintf(stderr, "vkgemm-blas: %s\n", message.c_str()); }

BlasEnvironment parse_blas_environment(const char* (*lookup)(const char* name)) {
  BlasEnvironment out;
  if (const char* v = variable(lookup, "VKGEMM_BLAS_THRESHOLD")) {
    uint64_t n = 0;
    if (std::string_view(v) == "never") {
      out.threshold = kNever;
    } else if (whole_number(v, n)) {
      out.threshold = n;
    } else {
      out.refused.push_back(refusal("VKGEMM_BLAS_THRESHOLD", v, "a count (m*n*k) or \"never\"",
                                    std::to_string(kDefaultThreshold)));
    }
  }
  if (const char* v = variable(lookup, "VKGEMM_BLAS_VERBOSE")) {
    // Above 2 is as 2: each level adds to the one below it.
    uint64_t n = 0;
    if (whole_number(v, n)) {
      out.verbose = n > 2 ? 2 : static_cast<int>(n);
    } else {
      out.refused.push_back(refusal("VKGEMM_BLAS_VERBOSE", v, "0, 1 or 2", "0"));
    }
  }
  for (const auto& [name, flag] : {std::pair{"VKGEMM_BLAS_VALIDATION", &out.validation},
                                   std::pair{"VKGEMM_BLAS_CHECK", &out.check}}) {
    if (const char* v = variable(lookup, name)) {
      const std::string_view text(v);
      if (text == "0" || text == "1") {
        *flag = text == "1";
      } else {
        out.refused.push_back(refusal(name, v, "0 or 1", "0"));
      }
    }
  }
  if (const char* v = variable(lookup, "VKGEMM_BLAS_PRECISION")) out.precision = v;
  if (const char* v = variable(lookup, "VKGEMM_BLAS_CPU")) out.cpu_library = v;
  return out;
}

const BlasEnvironment& blas_environment() {
  static const BlasEnvironment environment = [] {
    BlasEnvironment e = parse_blas_environment([](const char* name) -> const char* { return std::getenv(name); });
    for (const std::string& message : e.refused) warn(message);
    return e;
  }();
  return environment;
}

}  // namespace vkgemm::blaslib
