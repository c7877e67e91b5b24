// The value a launch gives one of its shader's specialization constants (ids from shaders/gemm_abi.h): the
// tests' one way of reading what a kernel's planning chose. A launch without that constant fails the check.
#pragma once

#include <cstdint>

#include <doctest/doctest.h>

#include "kernels/registry.hpp"

namespace vkgemm::test {

inline uint32_t spec_constant(const kernels::LaunchShape& s, uint32_t id) {
  for (const auto& c : s.constants)
    if (c.id == id) return c.value;
  FAIL("no specialization constant ", id, " in the launch of ", s.shader);
  return 0;
}

}  // namespace vkgemm::test
