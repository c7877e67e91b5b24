// Shader variants by name: the SPIR-V embedded at build time, and the performance work's override of it.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <cstring>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "kernels/experiments.hpp"
#include "kernels/registry.hpp"
#include "kernels/spirv_table.hpp"
#include "vkgemm/error.hpp"

namespace vkgemm::kernels {
namespace {

std::span<const uint32_t> embedded(const std::string& shader) {
  for (const auto& blob : spirv_table()) {
    if (shader == blob.name) return {blob.words, blob.bytes / sizeof(uint32_t)};
  }
  const std::string_view kernel = std::string_view(shader).substr(0, shader.find('_'));
  for (const auto& missing : spirv_missing()) {
    if (kernel == missing.kernel) {
      throw Error(ErrorCode::unsupported_config,
                  fmt::format("this build of vkgemm has no {} kernel: {}", kernel, missing.reason));
    }
  }
  throw Error(ErrorCode::unsupported_type, fmt::format("this build of vkgemm has no shader {}", shader));
}

// The experiment knob VKGEMM_EXPERIMENT_SPIRV (kernels/experiments.hpp): <folder>/<shader>.spv, where there is
// one, replaces the embedded variant of that name, so that shader variants compiled by hand can be timed without a rebuild. Each file
// taken is said once on stderr. Nothing checks that the file keeps the variant's interface.
std::span<const uint32_t> override_of(const std::string& shader) {
  const char* folder = spirv_experiment_folder();
  if (!folder) return {};
  if (std::error_code ec; !std::filesystem::is_directory(folder, ec)) {  // a mistyped folder would time the embedded one
    throw Error(ErrorCode::invalid_argument, fmt::format("VKGEMM_EXPERIMENT_SPIRV: {} is not a folder", folder));
  }
  static std::mutex mutex;
  static std::map<std::string, std::vector<uint32_t>> loaded;  // kept: pipelines are built from it later
  const std::lock_guard lock(mutex);
  if (const auto it = loaded.find(shader); it != loaded.end()) return it->second;
  const std::string path = fmt::format("{}/{}.spv", folder, shader);
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  std::vector<uint32_t> words;
  if (in) {
    const auto bytes = static_cast<size_t>(in.tellg());
    if (bytes == 0 || bytes % 4) {
      throw Error(ErrorCode::invalid_argument, fmt::format("VKGEMM_EXPERIMENT_SPIRV: {} is not SPIR-V", path));
    }
    words.resize(bytes / 4);
    in.seekg(0);
    in.read(reinterpret_cast<char*>(words.data()), static_cast<std::streamsize>(bytes));
    std::fprintf(stderr, "vkgemm: experiment: %s from %s\n", shader.c_str(), path.c_str());
  }
  return loaded.emplace(shader, std::move(words)).first->second;
}

}  // namespace

std::string shader_name(Kernel kernel, const Types& types) {
  // 16-bit float inputs name C's type too (bf16_f32, f16_f16); the others have one C type each.
  // A dequantizing int8 product names C's type too (i8_f32, u8_f16).
  const bool dequantized = is_integer(types.input) && !is_integer(types.output);
  if (!is_half_width_float(types.input) && !dequantized) return fmt::format("{}_{}", to_string(kernel), to_string(types.input));
  if (!types.f16_accumulate) {
    return fmt::format("{}_{}_{}", to_string(kernel), to_string(types.input), to_string(types.output));
  }
  return fmt::format("{}_f16_acc16{}", to_string(kernel), types.output == DataType::f32 ? "_f32" : "");
}

std::span<const uint32_t> spirv(const std::string& shader) {
  if (const auto words = override_of(shader); !words.empty()) return words;
  return embedded(shader);
}

uint32_t specialization_id(const std::string& shader, std::string_view name) {
  // SPIR-V: a five-word header, then instructions whose first word is (word count << 16) | opcode.
  // OpName (5): target id, a nul-terminated string; OpDecorate (71): target id, decoration, operands, where
  // decoration SpecId (1) carries the constant's id.
  constexpr uint32_t kOpName = 5, kOpDecorate = 71, kSpecId = 1;
  const std::span<const uint32_t> words = spirv(shader);
  std::vector<uint32_t> named;                 // ids called `name`
  std::vector<std::pair<uint32_t, uint32_t>> spec_ids;  // id -> SpecId
  for (size_t at = 5; at < words.size();) {
    const uint32_t count = words[at] >> 16, opcode = words[at] & 0xffffu;
    if (count == 0 || count > words.size() - at) break;
    if (opcode == kOpName && count >= 3) {
      const auto* text = reinterpret_cast<const char*>(&words[at + 2]);
      if (std::string_view(text, strnlen(text, (count - 2) * sizeof(uint32_t))) == name) named.push_back(words[at + 1]);
    } else if (opcode == kOpDecorate && count >= 4 && words[at + 2] == kSpecId) {
      spec_ids.emplace_back(words[at + 1], words[at + 3]);
    }
    at += count;
  }
  for (const auto& [target, id] : spec_ids) {
    if (std::find(named.begin(), named.end(), target) != named.end()) return id;
  }
  throw Error(ErrorCode::unsupported_config,
              fmt::format("shader {} declares no specialization constant {} (layout(constant_id = N) const uint {})",
                          shader, name, name));
}

}  // namespace vkgemm::kernels
