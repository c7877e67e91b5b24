// Chains (vkgemm/chain.hpp): one plan per layer, the intermediates the chain's or the application's, recorded
// with a compute-to-compute barrier between layers.
#include "vkgemm/chain.hpp"

#include <fmt/format.h>

#include <string>
#include <utility>

#include "engine/engine_impl.hpp"
#include "vkgemm/error.hpp"
#include "vkgemm/vulkan.hpp"

namespace vkgemm {
namespace detail {

struct ChainState {
  ChainDesc desc;
  std::vector<GemmPlan> plans;
  std::vector<Buffer> intermediates;  // layer i's output for i < layers - 1, where the chain owns them
  bool owned = true;                   // ChainOptions::own_intermediates
  EngineImpl* engine = nullptr;
};

namespace {

// Layer i of `d` as one product: rows x width_{i-1} times width_{i-1} x width_i, C of the chain's type.
GemmDesc layer_desc(const ChainDesc& d, size_t i) {
  GemmDesc g;
  g.type = d.type, g.c_type = d.type;
  g.m = d.rows, g.n = d.layers[i].width, g.k = i == 0 ? d.input_width : d.layers[i - 1].width;
  g.epilogue = d.layers[i].epilogue;
  return g;
}

void check_chain(const ChainDesc& d, const ChainOptions& options) {
  if (d.layers.empty()) throw Error(ErrorCode::invalid_argument, "chain: ChainDesc::layers is empty");
  if (!output_allowed(d.type, d.type) || is_integer(d.type)) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("chain: ChainDesc::type {} cannot feed a layer's output to the next (f32, f64, f16 or "
                            "bf16, whose products can give C of their own type)", to_string(d.type)));
  }
  for (size_t i = 0; i < d.layers.size(); ++i) {
    if (d.layers[i].epilogue.bias == BiasAxis::per_row) {
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("chain: layer {}'s bias is per_row; a layer's bias is per_column (one value per output "
                              "feature)", i));
    }
    if (d.layers[i].width <= 0) {
      throw Error(ErrorCode::invalid_argument, fmt::format("chain: layer {}'s width is {}; it must be at least 1", i,
                                                           d.layers[i].width));
    }
  }
  if (options.gemm.repeat != 1 || options.gemm.warmup != 0) {
    throw Error(ErrorCode::invalid_argument, "chain: ChainOptions::gemm must have repeat 1 and warmup 0");
  }
}

// The bytes layer i reads and writes: its input, weights, output and bias (0 where it has none).
struct LayerBytes {
  uint64_t input, weights, output, bias;
};
LayerBytes layer_bytes(const ChainDesc& d, size_t i) {
  const GemmDesc g = layer_desc(d, i);
  const uint64_t es = element_size(d.type), m = uint64_t(g.m), n = uint64_t(g.n), k = uint64_t(g.k);
  const uint64_t bias = g.epilogue.bias == BiasAxis::none ? 0 : n * element_size(g.epilogue.bias_type);
  return {m * k * es, k * n * es, m * n * es, bias};
}

bool overlap(const VulkanBufferRange& a, uint64_t a_bytes, const VulkanBufferRange& b, uint64_t b_bytes) {
  return a.buffer != VK_NULL_HANDLE && a.buffer == b.buffer && a_bytes && b_bytes && a.offset < b.offset + b_bytes &&
         b.offset < a.offset + a_bytes;
}

// A layer writes nothing it reads: its output overlapping its input, weights or bias would race with its own
// reads. Other layers' ranges may be shared (the barrier between layers orders them).
void check_no_overlap(const ChainDesc& d, size_t i, const VulkanBufferRange& in, const VulkanBufferRange& w,
                      const VulkanBufferRange& out, const VulkanBufferRange& bias) {
  const LayerBytes b = layer_bytes(d, i);
  const std::string written = i + 1 == d.layers.size() ? "y" : fmt::format("intermediate {}", i);
  const std::pair<const char*, bool> reads[] = {{"input", overlap(out, b.output, in, b.input)},
                                                {"weights", overlap(out, b.output, w, b.weights)},
                                                {"bias", overlap(out, b.output, bias, b.bias)}};
  for (const auto& [name, overlaps] : reads) {
    if (overlaps) {
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("GemmChain::record: layer {}'s output ({}, {} bytes at offset {}) overlaps its {}: a layer "
                              "cannot write what it reads; give the output its own range", i, written, b.output,
                              out.offset, name));
    }
  }
}

// The intermediates passed to record: none for a chain that owns them, one a layer but the last otherwise.
void check_intermediate_count(const ChainState& c, size_t passed) {
  const size_t n = c.plans.size();
  if (c.owned && passed != 0) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("GemmChain::record: {} intermediates passed to a chain that owns its own "
                            "(ChainOptions::own_intermediates); pass none, or make the chain with it false", passed));
  }
  if (!c.owned && passed != n - 1) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("GemmChain::record: {} intermediates for {} layers; a chain made with "
                            "ChainOptions::own_intermediates false takes one for each layer but the last ({})",
                            passed, n, n - 1));
  }
}

}  // namespace
}  // namespace detail

GemmChain::GemmChain() noexcept = default;
GemmChain::~GemmChain() = default;
GemmChain::GemmChain(GemmChain&&) noexcept = default;
GemmChain& GemmChain::operator=(GemmChain&&) noexcept = default;

static detail::ChainState& checked_chain(const std::shared_ptr<detail::ChainState>& impl, const char* what) {
  if (!impl) throw Error(ErrorCode::invalid_argument, fmt::format("{}: this GemmChain is empty", what));
  return *impl;
}

size_t GemmChain::layers() const { return checked_chain(impl_, "GemmChain::layers").plans.size(); }

const GemmPlan& GemmChain::layer(size_t i) const {
  const detail::ChainState& c = checked_chain(impl_, "GemmChain::layer");
  if (i >= c.plans.size()) {
    throw Error(ErrorCode::invalid_argument, fmt::format("GemmChain::layer: {} is past the last layer ({})", i,
                                                         c.plans.size() - 1));
  }
  return c.plans[i];
}

const Buffer& GemmChain::intermediate(size_t i) const {
  const detail::ChainState& c = checked_chain(impl_, "GemmChain::intermediate");
  if (!c.owned) {
    throw Error(ErrorCode::invalid_argument, "GemmChain::intermediate: this chain's intermediates are the "
                                             "application's (ChainOptions::own_intermediates false)");
  }
  if (i >= c.intermediates.size()) {
    throw Error(ErrorCode::invalid_argument, fmt::format("GemmChain::intermediate: {} is not a layer before the last "
                                                         "(the chain has {} layers)", i, c.plans.size()));
  }
  return c.intermediates[i];
}

void GemmChain::record(VkCommandBuffer cmd, const VulkanBufferRange& x, std::span<const VulkanBufferRange> weights,
                       std::span<const VulkanBufferRange> biases, const VulkanBufferRange& y) {
  record(cmd, x, weights, biases, {}, y);
}

void GemmChain::record(VkCommandBuffer cmd, const VulkanBufferRange& x, std::span<const VulkanBufferRange> weights,
                       std::span<const VulkanBufferRange> biases, std::span<const VulkanBufferRange> intermediates,
                       const VulkanBufferRange& y) {
  detail::ChainState& c = checked_chain(impl_, "GemmChain::record");
  const size_t n = c.plans.size();
  if (weights.size() != n || biases.size() != n) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("GemmChain::record: {} weights and {} biases for {} layers", weights.size(), biases.size(), n));
  }
  detail::check_intermediate_count(c, intermediates.size());
  if (!cmd) throw Error(ErrorCode::invalid_argument, "GemmChain::record: the command buffer is VK_NULL_HANDLE");
  const auto middle = [&](size_t i) { return c.owned ? vulkan_range(c.intermediates[i], 0) : intermediates[i]; };
  const auto input = [&](size_t i) { return i == 0 ? x : middle(i - 1); };
  const auto output = [&](size_t i) { return i + 1 == n ? y : middle(i); };
  // Every range first, so that a bad one leaves nothing recorded: each plan's own checks, without recording.
  for (size_t i = 0; i < n; ++i) {
    const VulkanBufferRange ops[detail::kOperands] = {input(i), weights[i], output(i), biases[i]};
    try {
      detail::Access::impl(c.plans[i])->check_operands(ops);
    } catch (const Error& e) {
      throw Error(e.code(), fmt::format("GemmChain::record: layer {}: {}", i, e.what()));
    }
    detail::check_no_overlap(c.desc, i, input(i), weights[i], output(i), biases[i]);
  }
  const auto& t = c.engine->device->table();
  for (size_t i = 0; i < n; ++i) {
    // The previous layer's output is this one's input: its writes before these reads.
    if (i > 0) {
      detail::memory_barrier(t, cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                             VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
    }
    c.plans[i].record(cmd, input(i), weights[i], output(i), biases[i]);
  }
}

std::vector<GemmTiming> GemmChain::timing() const {
  const detail::ChainState& c = checked_chain(impl_, "GemmChain::timing");
  std::vector<GemmTiming> out;
  for (const GemmPlan& p : c.plans) out.push_back(p.timing());
  return out;
}

GemmChain Engine::chain(const ChainDesc& desc) { return chain(desc, ChainOptions{}); }

GemmChain Engine::chain(const ChainDesc& desc, const ChainOptions& options) {
  detail::check_chain(desc, options);
  auto state = std::make_shared<detail::ChainState>();
  state->desc = desc;
  state->owned = options.own_intermediates;
  state->engine = impl_.get();
  GemmPlanOptions po;
  po.gemm = options.gemm;
  po.timestamps = options.timestamps;
  po.max_pending = 4;
  for (size_t i = 0; i < desc.layers.size(); ++i) {
    try {
      state->plans.push_back(plan(detail::layer_desc(desc, i), po));
    } catch (const Error& e) {
      throw Error(e.code(), fmt::format("chain: layer {}: {}", i, e.what()));
    }
    if (options.own_intermediates && i + 1 < desc.layers.size()) {
      const uint64_t bytes = uint64_t(desc.rows) * uint64_t(desc.layers[i].width) * element_size(desc.type);
      state->intermediates.push_back(create_buffer(std::max<uint64_t>(bytes, 16), "vkgemm chain intermediate"));
    }
  }
  GemmChain out;
  out.impl_ = std::move(state);
  return out;
}

std::vector<GemmTiming> Engine::run(GemmChain& chain, const BufferOffset& x, std::span<const BufferOffset> weights,
                                    std::span<const BufferOffset> biases, const BufferOffset& y) {
  return run(chain, x, weights, biases, {}, y);
}

std::vector<GemmTiming> Engine::run(GemmChain& chain, const BufferOffset& x, std::span<const BufferOffset> weights,
                                    std::span<const BufferOffset> biases, std::span<const BufferOffset> intermediates,
                                    const BufferOffset& y) {
  std::lock_guard guard(impl_->lock);
  detail::ChainState& c = checked_chain(chain.impl_, "Engine::run");
  if (c.engine != impl_.get()) throw Error(ErrorCode::invalid_argument, "Engine::run: the chain belongs to another engine");
  // An engine buffer from its offset (vulkan_range checks it); none (a layer without a bias) stays empty.
  const auto range = [&](const BufferOffset& o) { return o.buffer ? vulkan_range(*o.buffer, o.offset) : VulkanBufferRange{}; };
  std::vector<VulkanBufferRange> w, b, mid;
  for (const BufferOffset& o : weights) w.push_back(range(o));
  for (const BufferOffset& o : biases) b.push_back(range(o));
  for (const BufferOffset& o : intermediates) mid.push_back(range(o));
  const VulkanBufferRange xr = range(x), yr = range(y);
  const auto& t = impl_->device->table();
  const uint64_t serial = impl_->submitter->submit([&](VkCommandBuffer cmd) {
    // Host writes and earlier work before the chain; its result ready for copies and the host after.
    detail::memory_barrier(t, cmd, VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_HOST_BIT,
                           VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_HOST_WRITE_BIT,
                           VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
    chain.record(cmd, xr, w, b, mid, yr);
    detail::memory_barrier(t, cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                           VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_HOST_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                           VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_HOST_READ_BIT | VK_ACCESS_SHADER_READ_BIT);
  });
  impl_->submitter->wait(serial);
  return chain.timing();
}

}  // namespace vkgemm
