// The checks on numbers and lists that every command's options share, as CLI11 validators, so that a value
// is refused as the command line is parsed (before a device opens or a file is touched) and each refusal
// reads the same: the option, the value, and the range in words. CLI::Range is not used: it lets NaN through
// (every comparison with NaN is false) and prints its bounds with std::to_string (310 digits for a double's
// largest value).
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace vkgemm::cli {

// A number from lo to hi inclusive; NaN and text that is not a number are refused. The error reads
// "must be between LO and HI (got nan)"; CLI11 puts the option's name before it.
CLI::Validator number_between(double lo, double hi);

// A whole number that fits a uint64 (0 to 2^64-1), written in decimal; CLI11 would read "-1" as 2^64-1.
CLI::Validator uint64_number();

// A comma-separated list with at least one item: an empty value is an error, never "the default".
CLI::Validator non_empty_list();

}  // namespace vkgemm::cli
