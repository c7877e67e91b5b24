// Engine::pipeline_statistics: the pipelines a product would run, planned as gemm() plans them, and what
// the driver reports about each (kernels/pipeline_statistics.cpp reads them).
#include <algorithm>
#include <cctype>
#include <type_traits>

#include <fmt/format.h>

#include "engine/engine_impl.hpp"
#include "kernels/registry.hpp"
#include "vkgemm/error.hpp"

namespace vkgemm {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// The product as the planner sees it. Only what chooses the pipelines matters here (type, sizes after the
// column-major turn, ops, batch); leading dimensions and offsets only set run-time flags, so tight ones do.
kernels::Problem problem_of(const GemmDesc& desc, const GemmOptions& options) {
  kernels::Problem p;
  p.types = kernels::types_of(desc, options);
  p.m = static_cast<uint32_t>(desc.m), p.n = static_cast<uint32_t>(desc.n);
  p.trans_a = desc.op_a == Op::t, p.trans_b = desc.op_b == Op::t;
  if (desc.layout == Layout::col_major) {  // C^T = op(B)^T op(A)^T, as record() turns it
    std::swap(p.m, p.n);
    std::swap(p.trans_a, p.trans_b);
  }
  const bool reads_ab = desc.alpha != 0.0 && desc.k != 0;
  p.k = reads_ab ? static_cast<uint32_t>(desc.k) : 0;
  p.lda = p.trans_a ? p.m : p.k, p.ldb = p.trans_b ? p.k : p.n, p.ldc = p.n;
  p.batch = static_cast<uint32_t>(desc.batch);
  return p;
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
                            "the driver offers it, on the devices it creates (never on an adopted one); `vkgemm "
                            "devices` says which have it",
                            info.name, info.driver_info.empty() ? info.driver_version : info.driver_info));
  }
  kernels::check_supported(info, tuning, kernels::types_of(desc, options), options);
  PipelineReport report;
  if (desc.m == 0 || desc.n == 0 || desc.batch == 0) return report;  // gemm dispatches nothing
  if (uint64_t(desc.batch) > info.max_workgroup_count[2]) {
    throw Error(ErrorCode::too_large, fmt::format("pipeline statistics: batch {} exceeds {}'s "
                                                  "maxComputeWorkGroupCount[2] = {}",
                                                  desc.batch, info.name, info.max_workgroup_count[2]));
  }
  const kernels::Plan plan = kernels::plan(info, tuning, options, problem_of(desc, options));
  report.kernel = plan.kernel;
  report.config = plan.description;
  report.statistics = pipelines->statistics(plan.main, "main");
  if (plan.splits > 1) {
    auto reduce = pipelines->statistics(plan.reduce, "reduce");
    report.statistics.insert(report.statistics.end(), reduce.begin(), reduce.end());
  }
  return report;
}

}  // namespace detail

PipelineReport Engine::pipeline_statistics(const GemmDesc& desc, const GemmOptions& options) {
  std::lock_guard guard(impl_->lock);
  return impl_->pipeline_statistics(desc, options);
}

}  // namespace vkgemm
