// compare_with_reference on every core: the bench verifies products up to 2048^3 and more, and the
// reference is single-threaded. Rows of C are independent, so blocks of rows are compared in parallel
// and the results combined into what compare_with_reference would say for the whole product.
#pragma once

#include <cstdint>

#include "vkgemm/reference.hpp"

namespace vkgemm::cli {

// Same contract as vkgemm::compare_with_reference. `threads` 0 means std::thread::hardware_concurrency().
Comparison parallel_compare(DataType type, uint32_t m, uint32_t n, uint32_t k, const void* a, const void* b,
                            const void* c_gpu, unsigned threads = 0);

}  // namespace vkgemm::cli
