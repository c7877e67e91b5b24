// Random matrices for the program and the tests: reproducible from a printed seed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "vkgemm/types.hpp"

namespace vkgemm::cli {

// A seed from the clock and the random device, for runs that ask for none.
uint64_t fresh_seed();

// `count` elements of `type` drawn uniformly from [lo, hi) (integers: lo to hi - 1), as raw bytes.
std::vector<std::byte> random_matrix(DataType type, uint64_t count, double lo, double hi, std::mt19937_64& rng);

}  // namespace vkgemm::cli
