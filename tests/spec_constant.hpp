// The value a launch gives one of its shader's specialization constants, by the name the shader declares: the
// tests' one way of reading what a kernel's planning chose. A launch without that constant fails the check.
#pragma once

#include <cstdint>
#include <string_view>

#include <doctest/doctest.h>

#include "kernels/registry.hpp"

namespace vkgemm::test {

inline uint32_t spec_constant(const kernels::LaunchShape& s, std::string_view name) {
  for (const auto& c : s.constants)
    if (c.name == name) return c.value;
  FAIL("no specialization constant ", name, " in the launch of ", s.shader);
  return 0;
}

}  // namespace vkgemm::test
