// Reading a pipeline's statistics back (VK_KHR_pipeline_executable_properties): every executable the
// driver made of it, and every statistic of each, as the driver names them.
#include <fmt/format.h>

#include <cctype>

#include "kernels/experiments.hpp"
#include "kernels/pipelines.hpp"
#include "vk/check.hpp"
#include "vkgemm/error.hpp"
#include "vkgemm/files.hpp"

namespace vkgemm::kernels {
namespace {

// A name as a file name's part: letters, digits, '-' and '_'; anything else '_'.
std::string file_part(std::string_view name) {
  std::string out(name);
  for (char& c : out) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') c = '_';
  }
  return out;
}

// The experiment knob VKGEMM_EXPERIMENT_IR (experiments.hpp): executable `which`'s internal representations
// into `folder`, one file each.
void write_representations(const VolkDeviceTable& t, VkDevice dev, const VkPipelineExecutableInfoKHR& which,
                           const std::string& folder, const std::string& stem) {
  if (!t.vkGetPipelineExecutableInternalRepresentationsKHR) return;
  uint32_t n = 0;
  vk::check(t.vkGetPipelineExecutableInternalRepresentationsKHR(dev, &which, &n, nullptr),
            "vkGetPipelineExecutableInternalRepresentationsKHR");
  std::vector<VkPipelineExecutableInternalRepresentationKHR> reps(
      n, {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INTERNAL_REPRESENTATION_KHR});
  vk::check(t.vkGetPipelineExecutableInternalRepresentationsKHR(dev, &which, &n, reps.data()),
            "vkGetPipelineExecutableInternalRepresentationsKHR");  // the sizes
  std::vector<std::string> data(n);
  for (uint32_t i = 0; i < n; ++i) {
    data[i].resize(reps[i].dataSize);
    reps[i].pData = data[i].data();
  }
  vk::check(t.vkGetPipelineExecutableInternalRepresentationsKHR(dev, &which, &n, reps.data()),
            "vkGetPipelineExecutableInternalRepresentationsKHR");  // the contents
  for (uint32_t i = 0; i < n; ++i) {
    std::string& bytes = data[i];
    bytes.resize(reps[i].dataSize);  // what the driver wrote
    if (reps[i].isText && !bytes.empty() && bytes.back() == '\0') bytes.pop_back();
    files::write_atomically(
        fmt::format("{}/{}.{}.{}.{}", folder, stem, i, file_part(reps[i].name), reps[i].isText ? "txt" : "bin"), bytes);
  }
}

std::variant<bool, int64_t, uint64_t, double> value_of(const VkPipelineExecutableStatisticKHR& s) {
  switch (s.format) {
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR: return s.value.b32 == VK_TRUE;
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR: return s.value.i64;
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR: return s.value.u64;
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_FLOAT64_KHR: return s.value.f64;
    default: return s.value.u64;  // a format newer than these headers: its bits, unsigned
  }
}

}  // namespace

std::vector<PipelineStatistic> Pipelines::statistics(const LaunchShape& shape, const std::string& pass) {
  if (!capture_statistics_) {
    throw Error(ErrorCode::unsupported_feature,
                "pipeline statistics: the pipelines were not built to capture them (no "
                "VK_KHR_pipeline_executable_properties on this device)");
  }
  const VkPipeline pipeline = get(shape);
  const auto& t = device_.table();
  const VkDevice dev = device_.get();
  if (!t.vkGetPipelineExecutablePropertiesKHR || !t.vkGetPipelineExecutableStatisticsKHR) {
    throw Error(ErrorCode::unsupported_feature,
                "pipeline statistics: the driver returned no vkGetPipelineExecutable*KHR entry points");
  }
  VkPipelineInfoKHR pipeline_info{VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR};
  pipeline_info.pipeline = pipeline;
  uint32_t count = 0;
  vk::check(t.vkGetPipelineExecutablePropertiesKHR(dev, &pipeline_info, &count, nullptr),
            "vkGetPipelineExecutablePropertiesKHR");
  std::vector<VkPipelineExecutablePropertiesKHR> executables(count, {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_PROPERTIES_KHR});
  vk::check(t.vkGetPipelineExecutablePropertiesKHR(dev, &pipeline_info, &count, executables.data()),
            "vkGetPipelineExecutablePropertiesKHR");
  executables.resize(count);

  std::vector<PipelineStatistic> out;
  for (uint32_t i = 0; i < executables.size(); ++i) {
    VkPipelineExecutableInfoKHR which{VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR};
    which.pipeline = pipeline;
    which.executableIndex = i;
    uint32_t n = 0;
    vk::check(t.vkGetPipelineExecutableStatisticsKHR(dev, &which, &n, nullptr), "vkGetPipelineExecutableStatisticsKHR");
    std::vector<VkPipelineExecutableStatisticKHR> stats(n, {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR});
    vk::check(t.vkGetPipelineExecutableStatisticsKHR(dev, &which, &n, stats.data()),
              "vkGetPipelineExecutableStatisticsKHR");
    stats.resize(n);
    if (const char* folder = ir_experiment_folder()) {
      const std::string stem = fmt::format("{}.{}.{}", file_part(shape.shader), file_part(pass), i);
      write_representations(t, dev, which, folder, stem);
    }
    for (const auto& s : stats) {
      PipelineStatistic p;
      p.pass = pass;
      p.shader = shape.shader;
      p.executable = executables[i].name;
      p.subgroup_size = executables[i].subgroupSize;
      p.name = s.name;
      p.description = s.description;
      p.value = value_of(s);
      out.push_back(std::move(p));
    }
  }
  return out;
}

}  // namespace vkgemm::kernels
