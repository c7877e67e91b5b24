// Chains: products whose outputs feed the next products' inputs (a small network's layers,
// Y = f_L(... f_2(f_1(X W_1 + b_1) W_2 + b_2) ... W_L + b_L)), planned once and recorded into the
// application's command buffer with the barriers between layers, as one GemmPlan per layer (vkgemm/plan.hpp)
// and the intermediate activations in buffers the chain owns.
//
//   vkgemm::ChainDesc net{.type = vkgemm::DataType::f16, .rows = pixels, .input_width = 64,
//                         .layers = {{64, relu_bias}, {64, relu_bias}, {4, sigmoid_bias}}};
//   vkgemm::GemmChain chain = engine.chain(net);
//   chain.record(cmd, x, weights, biases, y);   // every frame: no allocation, no Vulkan object created
//
// Every layer is row-major, one row per sample: layer i multiplies its input (rows x width_{i-1}) by W_i
// (width_{i-1} x width_i, row-major, of `type`), adds its bias (GemmDesc::epilogue, per_column: width_i
// values) and applies its activation in the sums' precision, and writes rows x width_i of `type` (the
// intermediates are f16 for an f16 chain, with fp32 sums: the next layer's input as it will read it).
// The intermediates are the chain's own buffers, or the application's (ChainOptions::own_intermediates false:
// passed to every record, so that they can live in its own memory, two alternating regions for any depth).
// A chain must not outlive its engine (as a Buffer); recorded commands use its plans and intermediates:
// destroy it only after the submissions they were recorded into have completed.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "vkgemm/plan.hpp"

namespace vkgemm {

struct ChainLayer {
  int64_t width = 0;  // this layer's output features: n of its product (k of the next)
  Epilogue epilogue;  // its bias (none or per_column) and activation
};

struct ChainDesc {
  DataType type = DataType::f16;  // X, every W and every layer's output: f32, f64, f16 or bf16
  int64_t rows = 0;               // samples: m of every layer
  int64_t input_width = 0;        // X's columns: k of the first layer
  std::vector<ChainLayer> layers;
};

struct ChainOptions {
  GemmOptions gemm;         // every layer's kernel and options (repeat 1 and warmup 0: a chain runs once)
  bool timestamps = false;  // timestamps around each layer (GemmChain::timing)
  // true: the chain allocates the intermediates (GemmChain::intermediate). false: it allocates none and the
  // application passes them to record (and Engine::run), each rows x width_i elements of the chain's type.
  bool own_intermediates = true;
};

namespace detail {
struct ChainState;
}

class GemmChain {
 public:
  GemmChain() noexcept;
  ~GemmChain();
  GemmChain(GemmChain&&) noexcept;
  GemmChain& operator=(GemmChain&&) noexcept;

  bool valid() const noexcept { return impl_ != nullptr; }
  size_t layers() const;
  const GemmPlan& layer(size_t i) const;  // layer i's plan (its kernel, configuration)
  // Layer i's output for i < layers() - 1 (rows x width_i of the chain's type, tightly packed): the next
  // layer's input, which Engine::read may read back after a run (to inspect or check a layer on its own).
  // Only where the chain owns its intermediates.
  const Buffer& intermediate(size_t i) const;

  // Records the chain into `cmd`: layer 0 reads x, layer i reads layer i-1's intermediate, the last writes y;
  // weights[i] and biases[i] are layer i's (a bias range is ignored where the layer has none). A compute-to-
  // compute barrier between consecutive layers; as GemmPlan::record, nothing before the first dispatch
  // (but a plan's workspace barrier) and nothing after the last. Checks every range (sizes, offsets) before
  // recording anything; allocates nothing.
  void record(VkCommandBuffer cmd, const VulkanBufferRange& x, std::span<const VulkanBufferRange> weights,
              std::span<const VulkanBufferRange> biases, const VulkanBufferRange& y);
  // The same with the application's intermediates (a chain made with own_intermediates false; one that owns
  // them takes an empty span): layer i < layers() - 1 writes intermediates[i], rows x width_i elements, at an
  // offset that is a multiple of GemmPlan::offset_granularity() (each layer's plan is made for offset 0); it
  // must not overlap the input, weights or bias of the layer that writes it (refused), and may share memory
  // with any other layer's (layer i + 2 may write where layer i did: the barrier between layers orders it).
  void record(VkCommandBuffer cmd, const VulkanBufferRange& x, std::span<const VulkanBufferRange> weights,
              std::span<const VulkanBufferRange> biases, std::span<const VulkanBufferRange> intermediates,
              const VulkanBufferRange& y);

  // Each layer's GPU time of the last recording (timestamps on), once its submission completed.
  std::vector<GemmTiming> timing() const;

 private:
  friend class Engine;
  std::shared_ptr<detail::ChainState> impl_;
};

}  // namespace vkgemm
