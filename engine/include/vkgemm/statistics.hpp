// What the driver says a product's compiled pipelines cost: registers, shared memory, spills, instruction
// counts, as VK_KHR_pipeline_executable_properties reports them (Engine::pipeline_statistics). The names
// and the set of statistics are the driver's own and differ between vendors; vkgemm passes them on as given.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "vkgemm/types.hpp"

namespace vkgemm {

// One statistic of one compiled executable (VkPipelineExecutableStatisticKHR).
struct PipelineStatistic {
  std::string pass;         // "main", "reduce" (split-K's second pass) or "turn B" (an 8-bit B's turn); an
                            // emulated product's passes are named by their shaders
  std::string shader;       // the shader variant, e.g. "blocked_f32"
  std::string executable;   // the driver's name for the compiled stage (a compute pipeline usually has one)
  uint32_t subgroup_size = 0;  // the executable's subgroup size, as the driver reports it
  std::string name;         // the driver's name, e.g. "Register Count", "VGPRs", "Spill count"
  std::string description;  // the driver's explanation
  std::variant<bool, int64_t, uint64_t, double> value;

  std::string value_string() const;  // "true", "128", "0.5"
  double number() const;             // the value as a double (true = 1)
};

// The statistics of the pipelines one product runs, and which kernel and configuration those are.
struct PipelineReport {
  Kernel kernel = Kernel::automatic;  // resolved, as GemmTiming::kernel
  std::string config;                 // as GemmTiming::config
  std::vector<PipelineStatistic> statistics;  // every pass, executable and statistic, in the driver's order

  // The first statistic of `pass` whose name contains `words` (ASCII case-insensitive), if any.
  const PipelineStatistic* find(std::string_view words, std::string_view pass = "main") const;
  // The main pass's register count per invocation, where the driver names one: the first statistic whose
  // name says "register" or "gpr" and not "spill" (NVIDIA and Intel say registers, AMD VGPRs and SGPRs:
  // VGPRs come first there). Empty when no statistic is named so.
  std::optional<uint64_t> registers() const;
};

}  // namespace vkgemm
