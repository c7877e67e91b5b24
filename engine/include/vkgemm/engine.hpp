// The vkgemm engine: one Vulkan device, its buffers, its pipelines, and C = A * B on them.
//
// Errors: every failure throws vkgemm::Error (see error.hpp); nothing is dispatched after a failed check.
// Threads: every Engine member function takes the engine's own lock, so one Engine (and its Buffers) may be
// shared by several threads; their calls run one at a time. Separate engines share nothing and run in
// parallel. A Buffer must not be moved or destroyed while another thread uses it.
// Adopting an application's device and recording into its command buffers: vkgemm/vulkan.hpp.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "vkgemm/blas.hpp"
#include "vkgemm/device_info.hpp"
#include "vkgemm/options.hpp"
#include "vkgemm/statistics.hpp"
#include "vkgemm/types.hpp"

namespace vkgemm {

namespace detail {
struct Access;
struct BufferImpl;
struct EngineImpl;
}  // namespace detail

struct VulkanDevice;
class GemmPlan;
class GemmChain;
struct ChainDesc;
struct ChainOptions;
class GemmSubmission;
struct GemmPlanOptions;

struct EngineOptions {
  // Which device: an index ("1") or a case-insensitive substring of its name ("llvmpipe").
  // Empty: the VKGEMM_DEVICE environment variable; without it, in a process an MPI launcher or Slurm started
  // as one of several ranks on its node, the device at (local rank mod their number) among the devices of
  // the best type, so that each rank of a multi-GPU node takes its own; else the best device (discrete
  // GPU, then integrated, then virtual, then CPU). Engine::choose_device says which and why.
  std::string device;
  // Turn on VK_LAYER_KHRONOS_validation; every message it sends goes to on_validation_message
  // (stderr when that is empty) and is counted in Engine::validation_message_count().
  bool validation = false;
  std::function<void(std::string_view message)> on_validation_message;
  // The tuning file to load after the built-in tables (written by `vkgemm tune`). Empty: the
  // VKGEMM_TUNING_FILE environment variable, else $XDG_CONFIG_HOME/vkgemm/tuning.json or
  // ~/.config/vkgemm/tuning.json. Its entries are layered over the built-in table of their device,
  // replacing only the shapes they name. A file that does not exist is skipped (nothing tuned yet); one
  // that cannot be read or parsed (or is not a regular file) is reported on stderr, once per process, and
  // left out. "none": built-in tables only.
  std::string tuning_file;
};

// The environment variables vkgemm reads, all of them, each when an Engine is created (or adopts a device):
//   VKGEMM_DEVICE, VKGEMM_TUNING_FILE (else XDG_CONFIG_HOME, else HOME): EngineOptions' defaults, as
//     with_environment below fills them in;
//   OMPI_COMM_WORLD_LOCAL_RANK and _SIZE (Open MPI), MPI_LOCALRANKID and MPI_LOCALNRANKS (MPICH's and Intel
//     MPI's Hydra), SLURM_LOCALID and SLURM_NTASKS_PER_NODE (Slurm): the local rank that picks the device
//     when neither EngineOptions::device nor VKGEMM_DEVICE does (EngineOptions::device above); a value that
//     is not a whole number, or a rank not below its size, is refused (Error invalid_argument);
//   VKGEMM_WAIT=auto|spin|sleep: the engine's default for GemmOptions::wait's automatic (options.hpp);
//   VKGEMM_TEST_MAX_GROUP_COUNT=N, VKGEMM_TEST_MAX_STORAGE_RANGE=BYTES: testing knobs that lower the
//     maxComputeWorkGroupCount (every axis) and maxStorageBufferRange the engine honours, so that small
//     products exercise the cutting of large ones into pieces (device() reports the lowered values). Never
//     raised past the device's own; unset in normal use;
//   VKGEMM_TEST_MAX_ALLOCATION=BYTES: a testing knob that lowers maxMemoryAllocationSize, so that small
//     host-memory products are cut into blocks as those past the device's allocation limit are;
//   VKGEMM_TEST_MAX_SHARED_MEMORY=BYTES: a testing knob that lowers maxComputeSharedMemorySize, so that the
//     coopmat kernel's tiles take one shared-memory buffer where two no longer fit;
//   VKGEMM_TEST_NO_PUSH_DESCRIPTOR=1: a testing knob that leaves VK_KHR_push_descriptor off, so that plans
//     record from their ring of descriptor sets on a device that has it (DeviceInfo::push_descriptor);
//   VKGEMM_TEST_NO_COPY_QUEUES=1: a testing knob that creates the engine's device without copy queues
//     (DeviceInfo::copy_queues 0), so that the copies beside the products go to the compute queue;
//   VKGEMM_TEST_HOST_COPIES=import|staging: a testing knob that sends every copy between host memory and the
//     engine's buffers one way (the caller's pages imported, or the staging ring), whatever its size and
//     whether the buffers are mapped (docs/design/host-copies.md);
//   VKGEMM_TEST_STAGING_CHUNK=BYTES: a testing knob that sets the staging ring's chunk, so that small copies
//     cross chunk boundaries;
//   VKGEMM_TEST_HOST_PANELS=LINES|none: a testing knob that cuts every host-memory product that may be cut
//     into panels of LINES rows (or columns), their copies beside the products, whatever its size and device;
//     none: cuts none (the whole copies, to compare);
//   VKGEMM_TEST_COPY_THREADS=N: a testing knob that spreads each staged copy's memcpy over N host threads
//     (1 to 64; the rule: one a core, at most 16; from 4 threads on, host memory is staged, not imported);
//   VKGEMM_EXPERIMENT_COOPMAT, VKGEMM_EXPERIMENT_COOPMAT2, VKGEMM_EXPERIMENT_SPIRV: experiment knobs for the performance work, read only
//     by a developer build (CMake option VKGEMM_EXPERIMENTS, off by default; docs/gpu.md), once per
//     process.
// `options` with the environment's defaults filled in where it leaves them empty: device from
// VKGEMM_DEVICE; tuning_file from VKGEMM_TUNING_FILE, else $XDG_CONFIG_HOME/vkgemm/tuning.json, else
// ~/.config/vkgemm/tuning.json. The Engine constructor applies it.
EngineOptions with_environment(EngineOptions options);

// The device an engine takes and why: "VKGEMM_DEVICE=1", "local rank 1 of 2 (Open MPI: ...) mod the 2
// discrete GPU devices [0] [1]", "the best device: ...".
struct DeviceChoice {
  uint32_t index = 0;  // DeviceInfo::index: the position in the loader's enumeration
  std::string reason;
};

// A storage buffer on the engine's device. Move-only; it must not outlive its Engine.
class Buffer {
 public:
  Buffer() noexcept;
  ~Buffer();
  Buffer(Buffer&&) noexcept;
  Buffer& operator=(Buffer&&) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  uint64_t size() const noexcept;  // bytes
  bool valid() const noexcept { return impl_ != nullptr; }

 private:
  friend struct detail::EngineImpl;
  friend struct detail::Access;
  explicit Buffer(std::unique_ptr<detail::BufferImpl> impl) noexcept;
  std::unique_ptr<detail::BufferImpl> impl_;
};

// Where an operand of the BLAS gemm starts: a Buffer of this engine and a byte offset (a multiple of the
// element size). Its extent follows from the GemmDesc (blas.hpp) and must fit in the buffer.
struct BufferOffset {
  Buffer* buffer = nullptr;
  uint64_t offset = 0;
};

// A row-major matrix inside a Buffer: rows x cols elements of `type`, starting `offset` bytes in,
// consecutive rows `cols` elements apart.
struct MatrixRef {
  Buffer* buffer = nullptr;
  uint64_t offset = 0;
  uint32_t rows = 0;
  uint32_t cols = 0;
  DataType type = DataType::f32;
};

struct GemmTiming {
  std::vector<double> gpu_ms;    // one per timed dispatch, from timestamps; empty if the device has none
  bool gpu_timestamps = false;   // false: the device's compute queue cannot write timestamps
  double submit_wait_ms = 0.0;   // host wall time from submission until the fence signalled
  double upload_ms = 0.0;        // host-memory gemm only: copying A and B to the device
  double download_ms = 0.0;      // host-memory gemm only: copying C back
  Kernel kernel = Kernel::automatic;  // the kernel that ran (auto resolved)
  std::string config;            // its configuration, e.g. "tile 16" or "128x128x8 8x8 lanes 8 split 1"

  // Median of gpu_ms; throws vkgemm::Error when the device has no timestamps.
  double median_gpu_ms() const;
};

class Engine {
 public:
  explicit Engine(const EngineOptions& options = {});
  ~Engine();
  Engine(Engine&&) noexcept;
  Engine& operator=(Engine&&) noexcept;
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Every device the Vulkan loader reports, with its properties.
  static std::vector<DeviceInfo> devices();
  // The device an Engine made with `options` takes, and why (EngineOptions::device states the rule), with no
  // device created. Throws what the constructor throws for the choice (no device; a selector that names
  // none; a local-rank variable that is not a whole number, or a rank not below its size).
  static DeviceChoice choose_device(const EngineOptions& options = {});

  const DeviceInfo& device() const noexcept;
  // Why the engine took its device (as choose_device says it); for an adopted device, that it was adopted.
  const std::string& device_reason() const noexcept;
  uint64_t validation_message_count() const noexcept;

  Buffer create_buffer(uint64_t bytes, std::string_view debug_name = {});
  void write(Buffer& buffer, uint64_t offset, const void* data, uint64_t bytes);
  void read(const Buffer& buffer, uint64_t offset, void* data, uint64_t bytes);
  // Sets `bytes` bytes from `offset` (both multiples of 4) to repetitions of `word` on the device.
  // 0xFFFFFFFF is a NaN as f32 and as f64: the poison to put in C before a product that must write it all.
  void fill(Buffer& buffer, uint64_t offset, uint64_t bytes, uint32_t word);

  // Throws vkgemm::Error when this kernel, tile and type cannot run on this device, saying why.
  // The first form assumes C of default_output_type(type).
  void check_supported(DataType type, const GemmOptions& options) const;
  void check_supported(DataType input, DataType output, const GemmOptions& options) const;
  // Throws vkgemm::Error(too_large), naming the sizes and the device, when the memory of the product desc
  // describes cannot be on this device: A, B and C as desc spans them (batch, leading dimensions and
  // strides included) and the workspace its plan needs (split-K sums, a turned 8-bit B), each against maxMemoryAllocationSize and all
  // together against the device-local memory. gemm on host memory checks the operands so before it
  // allocates; a caller about to allocate the operands (or their host copies) checks it first. Also throws
  // what gemm would throw for desc and options' arguments.
  void check_fits(const GemmDesc& desc, const GemmOptions& options = {}) const;
  // check_fits for gemm on host memory, which cuts a product past maxMemoryAllocationSize into blocks that
  // fit where it can (batch 1, no epilogue vector; K cut only for one run): passes what that gemm runs.
  void check_fits_host(const GemmDesc& desc, const GemmOptions& options = {}) const;

  // C = A * B on device buffers. A is m x k, B is k x n, C is m x n; all of one type, except that f16
  // inputs take C of f32 (fp32 accumulation) or f16.
  // m or n = 0 returns at once; k = 0 makes C the zero matrix (an empty sum) without a dispatch.
  GemmTiming gemm(const MatrixRef& a, const MatrixRef& b, const MatrixRef& c, const GemmOptions& options = {});

  // C = A * B on host memory, row-major, through device buffers the engine keeps and reuses.
  // C has default_output_type(type): f32 for f16 inputs (uint16_t bit patterns, see half.hpp).
  GemmTiming gemm(DataType type, uint32_t m, uint32_t n, uint32_t k, const void* a, const void* b, void* c,
                  const GemmOptions& options = {});
  // The same with C of `output` type (f16 inputs: f32 or f16).
  GemmTiming gemm(DataType input, DataType output, uint32_t m, uint32_t n, uint32_t k, const void* a, const void* b,
                  void* c, const GemmOptions& options = {});

  // The full BLAS gemm (blas.hpp) on device buffers, submitted and waited for. The two calls above are
  // its special case: row-major, op N, tight leading dimensions, alpha 1, beta 0, batch 1.
  GemmTiming gemm(const GemmDesc& desc, const BufferOffset& a, const BufferOffset& b, const BufferOffset& c,
                  const GemmOptions& options = {});
  // The same on host memory: a, b and c hold the matrices exactly as desc describes them (leading
  // dimensions, strides, batch). The span of c is copied to the device and back, so elements in the
  // gaps of ldc or stride_c come back unchanged; the kernel reads C only when beta != 0. A call that throws
  // leaves c untouched where it reads c (beta != 0, or gaps); with beta = 0 it may have written part of it
  // (a large product's panels come back as they complete: docs/design/host-copies.md).
  GemmTiming gemm(const GemmDesc& desc, const void* a, const void* b, void* c, const GemmOptions& options = {});
  // The same two with the epilogue's bias (GemmDesc::epilogue, blas.hpp): bias_length(desc) elements of
  // epilogue.bias_type, on the device or on the host. A desc whose epilogue has a bias needs these.
  GemmTiming gemm(const GemmDesc& desc, const BufferOffset& a, const BufferOffset& b, const BufferOffset& c,
                  const GemmOptions& options, const BufferOffset& bias);
  GemmTiming gemm(const GemmDesc& desc, const void* a, const void* b, void* c, const GemmOptions& options,
                  const void* bias);

  // What the pipelines that gemm(desc, ..., options) runs on this engine cost, as the driver reports them
  // (statistics.hpp): the same planning as gemm (kernel, configuration from the tuning table, split-K), the
  // pipelines built if they are not yet, nothing dispatched. Operand placement does not change the pipeline,
  // so desc alone says which. An empty product (m, n or batch 0) runs none: no statistics.
  // Throws Error(unsupported_feature) when the device has no VK_KHR_pipeline_executable_properties
  // (DeviceInfo::pipeline_statistics), and what gemm would throw for desc and options.
  PipelineReport pipeline_statistics(const GemmDesc& desc, const GemmOptions& options = {});

  // Builds the pipelines that gemm(desc, ..., o) would run for each o of `options`, `threads` at a time (0:
  // one per hardware thread, at most 16; drivers compile side by side), so that no later call with them
  // compiles one (gemm, plans, record_gemm): for a search or benchmark timing many configurations of one
  // product (vkgemm tune). (plan() builds a plan's pipelines on the calling thread.) Planned as gemm plans
  // them, the emulated product's passes and fallback included; operand placement does not change the
  // pipelines. Returns how many it built (0: all were built already). Holds the engine's lock throughout.
  // Throws what gemm would throw for desc and an options, before building any.
  size_t prepare(const GemmDesc& desc, const std::vector<GemmOptions>& options, unsigned threads = 0);
  // The same for several products at once, each (desc, options) of `calls`, all their pipelines built side
  // by side (vkgemm bench: every case of a sweep before the first runs). Throws before building any.
  size_t prepare(const std::vector<std::pair<GemmDesc, GemmOptions>>& calls, unsigned threads = 0);

  // A plan of `desc` on this engine (vkgemm/plan.hpp): checked, planned and its pipelines built once, then
  // recorded or run many times. Throws what gemm would throw for desc and options.
  GemmPlan plan(const GemmDesc& desc);
  GemmPlan plan(const GemmDesc& desc, const GemmPlanOptions& options);
  // Runs `plan` on this engine's buffers: recorded between full barriers into the engine's own command
  // buffer, submitted and waited for. Timing as gemm's (GPU times when the plan has timestamps).
  GemmTiming run(GemmPlan& plan, const BufferOffset& a, const BufferOffset& b, const BufferOffset& c);
  // The same with the epilogue's bias (a plan whose desc has one needs it).
  GemmTiming run(GemmPlan& plan, const BufferOffset& a, const BufferOffset& b, const BufferOffset& c,
                 const BufferOffset& bias);
  // The same without waiting: recorded and submitted, and a handle to wait on (vkgemm/plan.hpp). Several
  // may be in flight; the engine's synchronous calls are this and a wait.
  GemmSubmission submit(GemmPlan& plan, const BufferOffset& a, const BufferOffset& b, const BufferOffset& c);
  // A chain of products (vkgemm/chain.hpp): each layer checked and planned as plan() does, its intermediate
  // buffers made. Throws what plan would throw for a layer, and invalid_argument (naming the layer) for a
  // chain whose widths do not meet or whose layer has a per_row bias.
  GemmChain chain(const ChainDesc& desc, const ChainOptions& options);
  GemmChain chain(const ChainDesc& desc);
  // Runs `chain` on this engine's buffers (recorded between full barriers, submitted, waited for); each
  // layer's timing (GPU times where the chain has timestamps).
  std::vector<GemmTiming> run(GemmChain& chain, const BufferOffset& x, std::span<const BufferOffset> weights,
                              std::span<const BufferOffset> biases, const BufferOffset& y);
  // The same with the application's intermediates (GemmChain::record's rules).
  std::vector<GemmTiming> run(GemmChain& chain, const BufferOffset& x, std::span<const BufferOffset> weights,
                              std::span<const BufferOffset> biases, std::span<const BufferOffset> intermediates,
                              const BufferOffset& y);
  // For benchmarks: the host time in microseconds of each of `times` records of `plan` (what GemmPlan::record
  // does: the operand checks, the descriptor writes, the commands) into the engine's own command buffer,
  // reset after each and never run.
  std::vector<double> time_record(GemmPlan& plan, const BufferOffset& a, const BufferOffset& b, const BufferOffset& c,
                                  uint32_t times);

 private:
  friend struct detail::Access;
  friend Engine adopt_device(const VulkanDevice& device);
  explicit Engine(std::unique_ptr<detail::EngineImpl> impl) noexcept;
  std::unique_ptr<detail::EngineImpl> impl_;
};

}  // namespace vkgemm
