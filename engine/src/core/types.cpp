// Names of element types, kernels, device types, wait modes and error codes.
#include <algorithm>
#include <charconv>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "vkgemm/blas.hpp"
#include "vkgemm/device_info.hpp"
#include "vkgemm/engine.hpp"
#include "vkgemm/error.hpp"
#include "vkgemm/kernel_list.hpp"
#include "vkgemm/names.hpp"
#include "vkgemm/types.hpp"

namespace vkgemm {
namespace {

// Each enumeration's spellings, in the order of its numbers (vkgemm/names.hpp).
#define VKGEMM_SPELLING(enumerator, spelling) spelling,
constexpr const char* kDataTypeNames[] = {VKGEMM_DATA_TYPES(VKGEMM_SPELLING)};
constexpr const char* kActivationNames[] = {VKGEMM_ACTIVATIONS(VKGEMM_SPELLING)};
constexpr const char* kBiasAxisNames[] = {VKGEMM_BIAS_AXES(VKGEMM_SPELLING)};
constexpr const char* kScaleAxisNames[] = {VKGEMM_SCALE_AXES(VKGEMM_SPELLING)};
constexpr const char* kPrecisionNames[] = {VKGEMM_PRECISIONS(VKGEMM_SPELLING)};
constexpr const char* kWaitModeNames[] = {VKGEMM_WAIT_MODES(VKGEMM_SPELLING)};
constexpr const char* kErrorCodeNames[] = {VKGEMM_ERROR_CODES(VKGEMM_SPELLING)};
#undef VKGEMM_SPELLING

template <typename E, size_t N>
std::string_view spelling(E value, const char* const (&names)[N], std::string_view otherwise) noexcept {
  const auto i = static_cast<size_t>(value);
  return i < N ? std::string_view(names[i]) : otherwise;
}

template <typename E, size_t N>
std::optional<E> parsed(std::string_view name, const char* const (&names)[N]) noexcept {
  for (size_t i = 0; i < N; ++i)
    if (name == names[i]) return static_cast<E>(i);
  return std::nullopt;
}

// A kernel's name as its kernel_list.hpp entry spells it; "auto" for automatic, null for no kernel.
const char* kernel_name(Kernel kernel) noexcept {
  switch (kernel) {
    case Kernel::automatic: return "auto";
#define VKGEMM_KERNEL_NAME(name, value) \
  case Kernel::name:                     \
    return #name;
    VKGEMM_KERNELS(VKGEMM_KERNEL_NAME)
#undef VKGEMM_KERNEL_NAME
  }
  return nullptr;
}

}  // namespace


std::size_t element_size(DataType type) noexcept {
  switch (type) {
    case DataType::f32: return 4;
    case DataType::i32: return 4;
    case DataType::f64: return 8;
    case DataType::f16: return 2;
    case DataType::bf16: return 2;
    case DataType::i8: return 1;
    case DataType::u8: return 1;
  }
  return 0;
}

DataType default_output_type(DataType input) noexcept {
  if (is_half_width_float(input)) return DataType::f32;
  if (input == DataType::i8 || input == DataType::u8) return DataType::i32;
  return input;
}

bool output_allowed(DataType input, DataType output) noexcept {
  // i8 and u8 into f32 or f16: the dequantizing product (GemmDesc::epilogue's scale).
  const bool int8 = input == DataType::i8 || input == DataType::u8;
  return output == default_output_type(input) || (is_half_width_float(input) && output == input) ||
         (int8 && (output == DataType::f32 || output == DataType::f16));
}

bool is_half_width_float(DataType type) noexcept { return type == DataType::f16 || type == DataType::bf16; }

bool is_integer(DataType type) noexcept {
  return type == DataType::i32 || type == DataType::i8 || type == DataType::u8;
}

std::string_view to_string(DataType type) noexcept { return spelling(type, kDataTypeNames, "?"); }

std::string_view to_string(Kernel kernel) noexcept {
  const char* name = kernel_name(kernel);
  return name ? name : "?";
}

std::span<const Kernel> all_kernels() noexcept {
  // The kernel list's kernels in the order of the enum (the list itself is in auto's order).
  static const std::vector<Kernel> kernels = [] {
#define VKGEMM_KERNEL_ENUMERATOR(name, value) Kernel::name,
    std::vector<Kernel> out{VKGEMM_KERNELS(VKGEMM_KERNEL_ENUMERATOR)};
#undef VKGEMM_KERNEL_ENUMERATOR
    std::sort(out.begin(), out.end());
    return out;
  }();
  return kernels;
}

std::optional<DataType> parse_data_type(std::string_view name) noexcept { return parsed<DataType>(name, kDataTypeNames); }

std::string_view to_string(Precision precision) noexcept { return spelling(precision, kPrecisionNames, "?"); }

std::optional<Precision> parse_precision(std::string_view name) noexcept {
  return parsed<Precision>(name, kPrecisionNames);
}

std::string_view to_string(Activation activation) noexcept { return spelling(activation, kActivationNames, "unknown"); }

std::optional<Activation> parse_activation(std::string_view name) noexcept {
  return parsed<Activation>(name, kActivationNames);
}

std::string_view to_string(BiasAxis axis) noexcept { return spelling(axis, kBiasAxisNames, "unknown"); }

std::string_view to_string(ScaleAxis axis) noexcept { return spelling(axis, kScaleAxisNames, "unknown"); }

std::optional<Kernel> parse_kernel(std::string_view name) noexcept {
  for (Kernel k : all_kernels())
    if (to_string(k) == name) return k;
  if (name == "auto") return Kernel::automatic;
  return std::nullopt;
}

std::string_view missing_feature(const DeviceInfo& device, DataType input) noexcept {
  switch (input) {
    case DataType::f64: return device.float64 ? "" : "shaderFloat64";
    case DataType::f16:
      if (!device.float16) return "shaderFloat16";
      return device.storage16 ? "" : "storageBuffer16BitAccess";
    case DataType::bf16: return device.storage16 ? "" : "storageBuffer16BitAccess";
    case DataType::i8: case DataType::u8: return device.storage8 ? "" : "storageBuffer8BitAccess";
    case DataType::f32: case DataType::i32: return "";
  }
  return "";
}

std::string_view to_string(DeviceType type) noexcept {
  switch (type) {
    case DeviceType::integrated_gpu: return "integrated GPU";
    case DeviceType::discrete_gpu: return "discrete GPU";
    case DeviceType::virtual_gpu: return "virtual GPU";
    case DeviceType::cpu: return "CPU";
    case DeviceType::other: return "other";
  }
  return "other";
}

std::string_view to_string(WaitMode mode) noexcept { return spelling(mode, kWaitModeNames, "unknown"); }

const char* to_string(ErrorCode code) noexcept {
  const auto i = static_cast<size_t>(code);
  return i < std::size(kErrorCodeNames) ? kErrorCodeNames[i] : "unknown";
}

std::span<const char* const> enumeration_names(std::string_view enumeration) noexcept {
  static const std::vector<const char*> kernels = [] {
    std::vector<const char*> out;
    for (const Kernel k : all_kernels()) {
      const auto at = static_cast<size_t>(k);
      if (out.size() <= at) out.resize(at + 1, nullptr);
      out[at] = kernel_name(k);
    }
    out.at(static_cast<size_t>(Kernel::automatic)) = "auto";
    return out;
  }();
  if (enumeration == "type") return kDataTypeNames;
  if (enumeration == "kernel") return kernels;
  if (enumeration == "activation") return kActivationNames;
  if (enumeration == "bias_axis") return kBiasAxisNames;
  if (enumeration == "scale_axis") return kScaleAxisNames;
  if (enumeration == "precision") return kPrecisionNames;
  if (enumeration == "wait_mode") return kWaitModeNames;
  if (enumeration == "error") return kErrorCodeNames;
  return {};
}

std::span<const char* const> enumerations() noexcept {
  static constexpr const char* kNames[] = {"type",      "kernel",    "activation", "bias_axis",
                                           "scale_axis", "precision", "wait_mode",  "error"};
  return kNames;
}

}  // namespace vkgemm

namespace vkgemm {

std::string to_string(const BlockedConfig& c) {
  return fmt::format("{}x{}x{} {}x{} lanes {} split {} group {}", c.bm, c.bn, c.bk, c.tm, c.tn, c.lanes_n, c.split_k,
                     c.group_m);
}

BlockedConfig parse_blocked_config(std::string_view text) {
  const auto fail = [&](const char* what) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("blocked configuration \"{}\": {} (expected e.g. \"128x128x8 8x8 lanes 8 split 1\")", text,
                            what));
  };
  const auto numbers = [&](std::string_view word, size_t count) {
    std::vector<uint32_t> out;
    size_t pos = 0;
    while (pos <= word.size()) {
      const size_t x = std::min(word.find('x', pos), word.size());
      uint32_t v = 0;
      const auto [end, ec] = std::from_chars(word.data() + pos, word.data() + x, v);
      if (ec != std::errc() || end != word.data() + x) fail("not a number");
      out.push_back(v);
      pos = x + 1;
    }
    if (out.size() != count) fail("wrong count of numbers");
    return out;
  };
  std::istringstream in{std::string(text)};
  std::string block, thread, word;
  if (!(in >> block >> thread)) fail("it needs the block and the thread tile");
  const auto b = numbers(block, 3), t = numbers(thread, 2);
  BlockedConfig c{.bm = b[0], .bn = b[1], .bk = b[2], .tm = t[0], .tn = t[1], .lanes_n = 8, .split_k = 0, .group_m = 1};
  while (in >> word) {
    std::string value;
    if (!(in >> value)) fail("a keyword without its value");
    if (word == "lanes") {
      c.lanes_n = numbers(value, 1)[0];
    } else if (word == "split") {
      c.split_k = numbers(value, 1)[0];
    } else if (word == "group") {
      c.group_m = numbers(value, 1)[0];
    } else {
      fail("unknown keyword (lanes, split, group)");
    }
  }
  if (c.bm == 0) fail("bm must be positive");
  return c;
}

}  // namespace vkgemm
