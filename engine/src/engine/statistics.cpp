// Engine::pipeline_statistics: the pipelines a product would run, planned as gemm() plans them, and what
// the driver reports about each (kernels/pipeline_statistics.cpp reads them).
#include <algorithm>
#include <cctype>
#include <set>
#include <string>
#include <type_traits>

#include <fmt/format.h>

#include "engine/engine_impl.hpp"
#include "vkgemm/error.hpp"

namespace vkgemm {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace

std::string PipelineStatistic::value_string() const {
  return std::visit(
      [](auto v) -> std::string {
        if constexpr (std::is_same_v<decltype(v), bool>) {
          return v ? "true" : "false";
        } else {
          return fmt::format("{}", v);
        }
      },
      value);
}

double PipelineStatistic::number() const {
  return std::visit([](auto v) { return static_cast<double>(v); }, value);
}

const PipelineStatistic* PipelineReport::find(std::string_view words, std::string_view pass) const {
  const std::string needle = lower(words);
  for (const auto& s : statistics) {
    if (s.pass == pass && lower(s.name).find(needle) != std::string::npos) return &s;
  }
  return nullptr;
}

std::optional<uint64_t> PipelineReport::registers() const {
  for (const auto& s : statistics) {
    const std::string name = lower(s.name);
    if (s.pass != "main" || name.find("spill") != std::string::npos) continue;
    if (name.find("register") != std::string::npos || name.find("gpr") != std::string::npos) {
      return static_cast<uint64_t>(s.number());
    }
  }
  return std::nullopt;
}

namespace detail {

PipelineReport EngineImpl::pipeline_statistics(const GemmDesc& desc, const GemmOptions& options) {
  check_gemm(desc);
  const DeviceInfo& info = physical.info;
  if (!info.pipeline_statistics) {
    throw Error(ErrorCode::unsupported_feature,
                fmt::format("pipeline statistics need VK_KHR_pipeline_executable_properties (feature "
                            "pipelineExecutableInfo), which is not on for {} (driver {}): vkgemm turns it on where "
                            "the driver offers it, on the devices it creates (never on an adopted one); "
                            "DeviceInfo::pipeline_statistics says which have it",
                            info.name, info.driver_info.empty() ? info.driver_version : info.driver_info));
  }
  // The door of a call that runs nothing: the description (above) and the device's support, once each.
  kernels::check_supported(info, tuning, kernels::types_of(desc, options), options);
  // Planned as gemm plans it (operand placement changes only run-time flags, never the pipelines).
  const Schedule product = schedule_product(desc, options, info, tuning);
  PipelineReport report;
  if (product.pieces.empty()) return report;  // gemm dispatches nothing
  if (uint64_t(desc.batch) > info.max_workgroup_count[2]) {
    throw Error(ErrorCode::too_large, fmt::format("pipeline statistics: batch {} exceeds {}'s "
                                                  "maxComputeWorkGroupCount[2] = {}",
                                                  desc.batch, info.name, info.max_workgroup_count[2]));
  }
  report.kernel = product.kernel;
  report.config = product.config;
  const auto add = [&](const kernels::LaunchShape& shape, const std::string& pass) {
    auto more = pipelines->statistics(shape, pass);
    report.statistics.insert(report.statistics.end(), more.begin(), more.end());
  };
  if (!product.sequence.empty()) {
    // The emulated product: each pipeline of its sequence once, the pass named by its shader.
    std::set<VkPipeline> seen;
    for (const kernels::LaunchShape* shape : pipeline_shapes(product)) {
      if (seen.insert(pipelines->get(*shape)).second) add(*shape, shape->shader);
    }
    return report;
  }
  // The passes as recorded: the last piece ends K, so its passes carry the fused epilogue's pipeline (the
  // whole product's plan has no epilogue constant: its statistics would be the plain product's).
  const PiecePasses& last = product.pieces.back();
  add(last.main.shape, "main");
  if (last.reduce) add(last.reduce->shape, "reduce");
  if (last.turn_b) add(last.turn_b->shape, "turn B");
  return report;
}

}  // namespace detail

PipelineReport Engine::pipeline_statistics(const GemmDesc& desc, const GemmOptions& options) {
  std::lock_guard guard(impl_->lock);
  return impl_->pipeline_statistics(desc, options);
}

}  // namespace vkgemm
