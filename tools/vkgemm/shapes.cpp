#include "shapes.hpp"

#include <charconv>

#include <fmt/format.h>

#include "vkgemm/error.hpp"

namespace vkgemm::cli {

Shape parse_shape(const std::string& text) {
  std::vector<uint32_t> dims;
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t x = std::min(text.find('x', pos), text.size());
    uint32_t v = 0;
    const auto [end, ec] = std::from_chars(text.data() + pos, text.data() + x, v);
    if (ec != std::errc() || end != text.data() + x || v == 0) {
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("shape \"{}\": expected N or MxNxK with sizes from 1 to 2^32-1", text));
    }
    dims.push_back(v);
    pos = x + 1;
  }
  if (dims.size() == 1) return {dims[0], dims[0], dims[0]};
  if (dims.size() == 3) return {dims[0], dims[1], dims[2]};
  throw Error(ErrorCode::invalid_argument, fmt::format("shape \"{}\": expected N or MxNxK", text));
}

std::vector<Shape> parse_shapes(const std::vector<std::string>& texts) {
  std::vector<Shape> out;
  for (const auto& t : texts) out.push_back(parse_shape(t));
  return out;
}

}  // namespace vkgemm::cli
