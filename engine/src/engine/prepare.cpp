// Engine::prepare: the pipelines of products to come, planned as gemm plans them and built on several
// threads at once (kernels::Pipelines::prepare), so that no later call compiles one.
#include "engine/engine_impl.hpp"
#include "plan/schedule.hpp"

namespace vkgemm {
namespace detail {

size_t EngineImpl::prepare(const std::vector<std::pair<GemmDesc, GemmOptions>>& calls, unsigned threads) {
  device->check_alive("prepare");
  // Every call through the door before anything is built.
  for (const auto& [desc, options] : calls) {
    check_gemm(desc);
    admit_options(desc, options);
  }
  std::vector<kernels::LaunchShape> shapes;
  for (const auto& [desc, options] : calls) {
    // Operand placement changes only run-time flags, never the pipelines: desc alone says which.
    const Schedule product = schedule_product(desc, options, physical.info, tuning);
    for (const kernels::LaunchShape* shape : pipeline_shapes(product)) shapes.push_back(*shape);
  }
  return pipelines->prepare(shapes, threads);
}

}  // namespace detail

size_t Engine::prepare(const GemmDesc& desc, const std::vector<GemmOptions>& options, unsigned threads) {
  std::vector<std::pair<GemmDesc, GemmOptions>> calls;
  for (const GemmOptions& o : options) calls.emplace_back(desc, o);
  if (calls.empty()) check_gemm(desc);  // refused even with no options (else checked with each call)
  std::lock_guard guard(impl_->lock);
  return impl_->prepare(calls, threads);
}

size_t Engine::prepare(const std::vector<std::pair<GemmDesc, GemmOptions>>& calls, unsigned threads) {
  std::lock_guard guard(impl_->lock);
  return impl_->prepare(calls, threads);
}

}  // namespace vkgemm
