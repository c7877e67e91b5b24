// vkgemm bench: what to sweep. Sizes, shapes, types and kernels as the command line spells them, and the
// configurations of each kernel (the one place that knows which kernels are tunable, and how).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "vkgemm/engine.hpp"
#include "vkgemm/types.hpp"

namespace vkgemm::cli::bench {

struct Shape {
  uint32_t m = 0, n = 0, k = 0;
  double products() const { return double(m) * double(n) * double(k); }  // multiply-adds; flops are twice this
  bool operator==(const Shape&) const = default;
};

// "--sizes": comma-separated items, each N (an N x N x N product), A:B:S (A to B inclusive, step S) or A:B:xF
// (A, A*F, A*F^2, ... up to B; x2 doubles). Every size is 1 to 2^31; at most 10000 sizes in all.
// Throws vkgemm::Error(invalid_argument) naming the option and the item.
std::vector<Shape> parse_sizes(std::string_view text, std::string_view option = "--sizes");

// "--shapes": comma-separated MxNxK items (rows of A and C, columns of B and C, the shared dimension).
std::vector<Shape> parse_shapes(std::string_view text, std::string_view option = "--shapes");

// "--types": comma-separated names, or "all". "--kernels": comma-separated names (auto among them), "all"
// standing for every kernel the library has (all_kernels), each kernel once.
std::vector<DataType> parse_types(std::string_view text, std::string_view option = "--types");
std::vector<Kernel> parse_kernels(std::string_view text, std::string_view option = "--kernels");

// Every kernel's or type's name, comma-separated, for help and error messages.
std::string kernel_names();
std::string type_names();

// "--tiles": comma-separated whole numbers from 1 to `most`.
std::vector<uint32_t> parse_uint_list(std::string_view text, std::string_view option, uint32_t most);

// One configuration of a kernel: the options it runs with and the label results carry.
struct BenchConfig {
  GemmOptions options;  // kernel and its tuning; repeat and warmup are set per case by the bench
  std::string label;    // "tile 16", or "default" for a kernel that takes no tuning from the bench
};

// What the command line says about tuning. A new tunable kernel adds its knobs here and a branch in
// configurations(); every other kernel runs once with its defaults and needs no change in the bench.
struct ConfigSpace {
  std::vector<uint32_t> tiles = {8, 16, 32};  // naive: workgroup side; tiled: shared-memory tile side
};

std::vector<BenchConfig> configurations(Kernel kernel, const ConfigSpace& space);

}  // namespace vkgemm::cli::bench
