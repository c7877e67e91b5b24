// Random matrices for the program and the tests: reproducible from a printed seed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "vkgemm/types.hpp"

namespace vkgemm::cli {

// The range random inputs of `type` are drawn from, [lo, hi): [-1, 1) for floats, [-8, 9) for i32, the whole
// range for i8 and u8 (sign and zero extension both show).
std::pair<double, double> random_range(DataType type);
// A seed from the clock and the random device, for runs that ask for none.
uint64_t fresh_seed();

// `count` elements of `type` drawn uniformly from [lo, hi) (integers: lo to hi - 1), as raw bytes.
std::vector<std::byte> random_matrix(DataType type, uint64_t count, double lo, double hi, std::mt19937_64& rng);

}  // namespace vkgemm::cli
