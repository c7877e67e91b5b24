// The door: every call into the engine is checked here, once, before any work (its description, its
// options, the device's support for them, its operands' buffers); the layers inside (the plan cache,
// planning, the kernels' launches, the pieces of a partitioned product) trust what passed and check
// nothing again. Each public entry calls admit() (and check_buffers where the caller brings buffers)
// exactly once; kernels/check_count.hpp counts the checks so that a test holds the rule. A call with the
// key of one that passed (its description and options byte for byte, the same tuning table) finds the
// plan cache's entry instead (plan_cache.hpp, EngineImpl::find_plan): the checks admit() makes read nothing
// else, so they would pass again, and the call counts admitted_before; its buffers are still checked.
#include <string>

#include <fmt/format.h>

#include "engine/engine_impl.hpp"
#include "engine/epilogue_check.hpp"
#include "kernels/check_count.hpp"
#include "vkgemm/error.hpp"

namespace vkgemm::detail {
namespace {

constexpr uint32_t kMaxRepeat = 100000;

}  // namespace

void EngineImpl::admit(const GemmDesc& desc, const GemmOptions& options) const {
  check_gemm(desc);
  admit_options(desc, options);
}

void EngineImpl::admit_options(const GemmDesc& desc, const GemmOptions& options) const {
  check_run(desc, options);
  if (desc.epilogue.active() && options.kernel == Kernel::ozaki) {
    throw Error(ErrorCode::unsupported_config,
                "gemm: the emulated product (kernel ozaki) takes no epilogue (bias or activation); ask for a native "
                "kernel or auto");
  }
  kernels::check_supported(physical.info, tuning, kernels::types_of(desc, options), options);
}

void EngineImpl::check_run(const GemmDesc& desc, const GemmOptions& options) const {
  count_check(Checked::run);
  if (options.repeat == 0 || options.repeat > kMaxRepeat || options.warmup > kMaxRepeat) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("gemm: repeat must be 1 to {} and warmup 0 to {} (got {} and {})", kMaxRepeat, kMaxRepeat,
                            options.repeat, options.warmup));
  }
  if (to_string(options.wait) == "unknown") {  // an integer cast to the enum
    throw Error(ErrorCode::invalid_argument,
                fmt::format("gemm: GemmOptions::wait {} is not one vkgemm knows (auto, spin, sleep)",
                            static_cast<int>(options.wait)));
  }
  if (desc.beta != 0.0 && options.repeat + options.warmup > 1) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("gemm: with beta = {} every dispatch updates C in place, so warmup + repeat must be 1 "
                            "(got {} + {})", desc.beta, options.warmup, options.repeat));
  }
}

uint64_t operand_element_size(const GemmDesc& desc, const kernels::Types& types, int operand) noexcept {
  // The fourth: the bias's element, or with per_column scales their f32 (the bias, f32 or f16, follows them).
  if (operand == 3) return scale_length(desc) ? 4 : element_size(desc.epilogue.bias_type);
  return element_size(operand == 2 ? types.output : types.input);
}

uint64_t operand_bytes(const GemmDesc& desc, const kernels::Types& types, int operand, uint64_t offset) {
  const uint64_t es = operand_element_size(desc, types, operand);
  if (operand == 3) {  // through the end of the last word it touches
    const uint64_t lead = offset % 4;
    const uint64_t bias = uint64_t(bias_length(desc)) * element_size(desc.epilogue.bias_type);
    return (lead + bias_byte_offset(desc) + bias + 3) / 4 * 4 - lead;
  }
  return uint64_t(operand_extent(desc, "ABC"[operand]).elements) * es;
}

namespace {

// What the fourth operand holds, for messages: "the bias (per_column: n = 8 f32 values)", or with per_column
// scales "the scales (per_column: n = 8 f32 values) then the bias (...)".
std::string describe_vectors(const GemmDesc& desc) {
  const Epilogue& e = desc.epilogue;
  const std::string bias =
      e.bias == BiasAxis::none ? ""
                               : fmt::format("the bias ({} = {} {} values{})",
                                             e.bias == BiasAxis::per_column ? "per_column: n" : "per_row: m",
                                             bias_length(desc), to_string(e.bias_type),
                                             element_size(e.bias_type) == 2 ? ", read as whole 32-bit words" : "");
  if (!scale_length(desc)) return bias;
  const std::string scales = fmt::format("the dequantization scales (per_column: n = {} f32 values)", desc.n);
  return bias.empty() ? scales : scales + " then " + bias;
}

// The epilogue's vectors (the fourth operand: a bias, per_column scales), where desc has them: present,
// aligned, long enough.
void check_bias_buffer(const GemmDesc& desc, const VulkanBufferRange& range, uint64_t es, uint64_t bytes) {
  if (range.buffer == VK_NULL_HANDLE) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("gemm: the epilogue reads {} but the call gave no bias buffer (the fourth operand)",
                            describe_vectors(desc)));
  }
  if (range.offset % es) {
    throw Error(ErrorCode::invalid_argument, fmt::format("gemm: the bias's offset {} is not a multiple of the {}-byte "
                                                         "element", range.offset, es));
  }
  if (range.offset > ~uint64_t{0} - bytes || bytes > range.size) {
    throw Error(ErrorCode::buffer_too_small,
                fmt::format("gemm: {} needs {} bytes from offset {}; its buffer has {}", describe_vectors(desc), bytes,
                            range.offset, range.size));
  }
}

}  // namespace

void EngineImpl::check_buffers(const GemmDesc& desc, const VulkanBufferRange (&ops)[kOperands],
                               const kernels::Types& types) const {
  count_check(Checked::buffers);
  const char names[3] = {'A', 'B', 'C'};
  if (has_vector_operand(desc)) {
    check_bias_buffer(desc, ops[3], operand_element_size(desc, types, 3), operand_bytes(desc, types, 3, ops[3].offset));
  }
  for (int i = 0; i < 3; ++i) {
    const uint64_t es = element_size(i == 2 ? types.output : types.input);
    const VulkanBufferRange& range = ops[i];
    const OperandExtent extent = operand_extent(desc, names[i]);
    const uint64_t bytes = extent.elements * es;
    if (range.buffer == VK_NULL_HANDLE) {
      throw Error(ErrorCode::invalid_argument, fmt::format("gemm: {} has no buffer", names[i]));
    }
    if (range.offset % es) {
      throw Error(ErrorCode::invalid_argument, fmt::format("gemm: {}'s offset {} is not a multiple of the {}-byte "
                                                           "element", names[i], range.offset, es));
    }
    if (range.offset > ~uint64_t{0} - bytes) {  // its end past 2^64: the sum would wrap to a small number
      throw Error(ErrorCode::buffer_too_small,
                  fmt::format("gemm: {}'s offset {} plus the {} bytes it spans overflows 64 bits; its buffer has {} "
                              "bytes from that offset", names[i], range.offset, bytes, range.size));
    }
    if (bytes > range.size) {
      throw Error(ErrorCode::buffer_too_small,
                  fmt::format("gemm: {} ({} {}x{}, ld {}, batch {} with stride {}) needs bytes up to {}; its "
                              "buffer has {} bytes", names[i], desc.layout == Layout::row_major ? "row-major" : "column-major",
                              extent.outer, extent.inner, extent.ld, desc.batch, extent.stride,
                              range.offset + bytes, range.offset + range.size));
    }
  }
}

}  // namespace vkgemm::detail
