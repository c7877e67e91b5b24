#include "option_checks.hpp"

#include <charconv>
#include <cmath>
#include <cstdint>

#include <fmt/format.h>

namespace vkgemm::cli {

CLI::Validator number_between(double lo, double hi) {
  const std::string range = fmt::format("between {} and {}", lo, hi);
  return CLI::Validator(
      [lo, hi, range](std::string& text) -> std::string {
        double v = 0.0;
        if (!CLI::detail::lexical_cast(text, v) || std::isnan(v) || v < lo || v > hi) {
          return fmt::format("must be {} (got {})", range, text);
        }
        return {};
      },
      fmt::format("NUMBER {}", range));
}

CLI::Validator uint64_number() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        uint64_t v = 0;
        const char* end = text.data() + text.size();
        const auto [at, ec] = std::from_chars(text.data(), end, v);
        if (text.empty() || ec != std::errc() || at != end) {
          return fmt::format("must be a whole number from 0 to 2^64-1, a uint64 (got {})", text);
        }
        return {};
      },
      "UINT64");
}

CLI::Validator non_empty_list() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        return text.empty() ? "is empty: give at least one item (comma-separated)" : std::string{};
      },
      "");
}

}  // namespace vkgemm::cli
