// Shapes on the command line: "1024" (square) or "MxNxK".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace vkgemm::cli {

struct Shape {
  uint32_t m = 0, n = 0, k = 0;
};

// Throws vkgemm::Error(invalid_argument) naming the text when it is neither form or a size is 0 or too big.
Shape parse_shape(const std::string& text);
std::vector<Shape> parse_shapes(const std::vector<std::string>& texts);

}  // namespace vkgemm::cli
