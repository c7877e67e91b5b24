// Engine::prepare: the pipelines of products to come, planned as gemm plans them and built on several
// threads at once (kernels::Pipelines::prepare), so that no later call compiles one.
#include "engine/engine_impl.hpp"
#include "plan/schedule.hpp"

namespace vkgemm {
namespace detail {

size_t EngineImpl::prepare(const GemmDesc& desc, const std::vector<GemmOptions>& options, unsigned threads) {
  check_gemm(desc);
  std::vector<kernels::LaunchShape> shapes;
  for (const GemmOptions& o : options) {
    admit_options(desc, o);  // the door: the description above once, each options here once
    // Operand placement changes only run-time flags, never the pipelines: desc alone says which.
    const Schedule product = schedule_product(desc, o, physical.info, tuning);
    for (const PiecePasses& piece : product.pieces) {
      shapes.push_back(piece.main.shape);
      if (piece.reduce) shapes.push_back(piece.reduce->shape);
      if (piece.turn_b) shapes.push_back(piece.turn_b->shape);
    }
  }
  return pipelines->prepare(shapes, threads);
}

}  // namespace detail

size_t Engine::prepare(const GemmDesc& desc, const std::vector<GemmOptions>& options, unsigned threads) {
  std::lock_guard guard(impl_->lock);
  return impl_->prepare(desc, options, threads);
}

}  // namespace vkgemm
