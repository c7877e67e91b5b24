#include "bench_sweep.hpp"

#include <algorithm>
#include <charconv>
#include <limits>

#include <fmt/format.h>

#include "vkgemm/error.hpp"

namespace vkgemm::cli::bench {
namespace {

constexpr uint64_t kMaxSize = uint64_t{1} << 31;
constexpr size_t kMaxItems = 10000;

[[noreturn]] void bad(std::string_view option, std::string_view item, std::string_view why) {
  throw Error(ErrorCode::invalid_argument, fmt::format("{}: '{}' {}", option, item, why));
}

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    const size_t end = text.find(sep, start);
    out.push_back(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) return out;
    start = end + 1;
  }
}

// A whole decimal number from lo to hi, or an error naming the option and the item it came from.
uint64_t number(std::string_view option, std::string_view item, std::string_view digits, uint64_t lo, uint64_t hi) {
  uint64_t v = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size()) {
    bad(option, item, fmt::format("is not a list of whole numbers ('{}' is not one)", digits));
  }
  if (v < lo || v > hi) bad(option, item, fmt::format("has {}, outside {} to {}", v, lo, hi));
  return v;
}

void add(std::vector<Shape>& out, Shape s, std::string_view option) {
  if (out.size() >= kMaxItems) {
    throw Error(ErrorCode::invalid_argument, fmt::format("{} asks for more than {} sizes", option, kMaxItems));
  }
  out.push_back(s);
}

}  // namespace

std::vector<Shape> parse_sizes(std::string_view text, std::string_view option) {
  std::vector<Shape> out;
  for (const std::string_view item : split(text, ',')) {
    const auto parts = split(item, ':');
    if (parts.size() == 1) {
      const auto n = static_cast<uint32_t>(number(option, item, item, 1, kMaxSize));
      add(out, {n, n, n}, option);
      continue;
    }
    if (parts.size() != 3) bad(option, item, "is neither N nor a range A:B:STEP or A:B:xFACTOR");
    const uint64_t first = number(option, item, parts[0], 1, kMaxSize);
    const uint64_t last = number(option, item, parts[1], 1, kMaxSize);
    if (last < first) bad(option, item, "ends before it starts");
    const bool geometric = !parts[2].empty() && (parts[2][0] == 'x' || parts[2][0] == '*');
    const uint64_t step = geometric ? number(option, item, parts[2].substr(1), 2, kMaxSize)
                                    : number(option, item, parts[2], 1, kMaxSize);
    for (uint64_t v = first; v <= last; v = geometric ? v * step : v + step) {
      const auto n = static_cast<uint32_t>(v);
      add(out, {n, n, n}, option);
    }
  }
  return out;
}

std::vector<Shape> parse_shapes(std::string_view text, std::string_view option) {
  std::vector<Shape> out;
  for (const std::string_view item : split(text, ',')) {
    const auto dims = split(item, 'x');
    if (dims.size() != 3) bad(option, item, "is not MxNxK (three sizes joined by x)");
    add(out,
        {static_cast<uint32_t>(number(option, item, dims[0], 1, kMaxSize)),
         static_cast<uint32_t>(number(option, item, dims[1], 1, kMaxSize)),
         static_cast<uint32_t>(number(option, item, dims[2], 1, kMaxSize))},
        option);
  }
  return out;
}

std::vector<DataType> parse_types(std::string_view text, std::string_view option) {
  if (text == "all") return {std::begin(all_data_types), std::end(all_data_types)};
  std::vector<DataType> out;
  for (const std::string_view item : split(text, ',')) {
    const auto t = parse_data_type(item);
    if (!t) bad(option, item, fmt::format("is not a type ({}, or all)", type_names()));
    out.push_back(*t);
  }
  return out;
}

std::vector<Kernel> parse_kernels(std::string_view text, std::string_view option) {
  std::vector<Kernel> out;
  const auto add_once = [&](Kernel k) {
    if (std::find(out.begin(), out.end(), k) == out.end()) out.push_back(k);
  };
  for (const std::string_view item : split(text, ',')) {
    if (item == "all") {
      for (Kernel k : all_kernels()) add_once(k);
      continue;
    }
    const auto k = parse_kernel(item);
    if (!k) bad(option, item, fmt::format("is not a kernel (auto, {}, or all)", kernel_names()));
    add_once(*k);
  }
  return out;
}

std::string kernel_names() {
  std::string out;
  for (Kernel k : all_kernels()) out += fmt::format("{}{}", out.empty() ? "" : ", ", to_string(k));
  return out;
}

std::string type_names() {
  std::string out;
  for (DataType t : all_data_types) out += fmt::format("{}{}", out.empty() ? "" : ", ", to_string(t));
  return out;
}

std::vector<uint32_t> parse_uint_list(std::string_view text, std::string_view option, uint32_t most) {
  std::vector<uint32_t> out;
  for (const std::string_view item : split(text, ','))
    out.push_back(static_cast<uint32_t>(number(option, item, item, 1, most)));
  return out;
}

std::vector<BenchConfig> configurations(Kernel kernel, const ConfigSpace& space) {
  std::vector<BenchConfig> out;
  if (kernel == Kernel::naive || kernel == Kernel::tiled) {
    for (const uint32_t tile : space.tiles) {
      BenchConfig c;
      c.options.kernel = kernel;
      c.options.tile = tile;
      c.label = fmt::format("tile {}", tile);
      out.push_back(std::move(c));
    }
    return out;
  }
  BenchConfig c;  // a kernel the bench does not tune: its defaults
  c.options.kernel = kernel;
  c.label = "default";
  out.push_back(std::move(c));
  return out;
}

}  // namespace vkgemm::cli::bench
