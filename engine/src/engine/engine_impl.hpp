// The engine's private state, shared by engine.cpp (set-up, buffers, transfers), adopt.cpp (the
// application's device), record.cpp (recording a GEMM) and gemm.cpp (the submit-and-wait conveniences).
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "device/device_query.hpp"
#include "vk/host_copies.hpp"
#include "engine/buffer_pool.hpp"
#include "engine/host_panels.hpp"
#include "engine/plan_cache.hpp"
#include "kernels/registry.hpp"
#include "kernels/pipelines.hpp"
#include "peak/peak_context.hpp"
#include "plan/schedule.hpp"
#include "tuning/tuning_table.hpp"
#include "vk/commands.hpp"
#include "vk/device.hpp"
#include "vk/handle.hpp"
#include "vk/instance.hpp"
#include "vk/memory.hpp"
#include "vk/submitter.hpp"
#include "vkgemm/engine.hpp"
#include "vkgemm/plan.hpp"
#include "vkgemm/vulkan.hpp"

namespace vkgemm::detail {

struct BufferImpl {
  // Its allocation goes back to the engine's pool (buffer_pool.hpp), for the next buffer of its size.
  ~BufferImpl() {
    if (pool && alloc.buffer.get() != VK_NULL_HANDLE) pool->keep(std::move(alloc));
  }
  vk::AllocatedBuffer alloc;
  const EngineImpl* owner = nullptr;
  BufferPool* pool = nullptr;
  // Unique among the engine's buffers and never reused, unlike a VkBuffer handle, which a driver may hand
  // out again once the buffer is destroyed: what a replayed recording (Replay) knows its operands by.
  uint64_t id = 0;
};

// The engine buffers a call's operands are in (BufferImpl::id, A B C), where the call has them: a call on
// the application's VkBuffers (submit_gemm) has none, and its plan's recording is never replayed.
using OperandIds = std::array<uint64_t, kOperands>;

// The command buffer of an engine plan (GemmPlanState::engine_only), recorded for one set of operands and
// submitted again, as it is, while the calls repeat them (replay.cpp): a repeated call skips its recording.
// Valid only while nothing it binds changed: its operands are known by their buffers' ids (an id is never
// reused), the workspace and pipelines are the plan's, and its descriptor sets (without push descriptors,
// the plan's one slot) are written only when it is recorded.
struct Replay {
  vk::DeviceHandle<VkCommandPool> pool;  // its own, made at the plan's first submission; frees `cmd`
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  bool recorded = false;  // holds the commands for `ops` in the buffers `ids`
  VulkanBufferRange ops[kOperands] = {};
  OperandIds ids{};
  uint64_t serial = 0;  // its latest submission (0: none)
};

// How the engine plans' submissions went since the engine was made (the tests' and the bench's view).
struct ReplayStats {
  uint64_t replayed = 0;  // submitted as recorded by an earlier call on the same operands
  uint64_t recorded = 0;  // recorded first (a plan's first call, other operands, or none known)
};

struct GemmPlanState;

// The plans alive on one engine, so that the engine can release their Vulkan objects when it is destroyed
// (plan.hpp's lifetime rule). Shared by the engine and its plans; `engine_alive` turns false at its end.
struct PlanRegistry {
  std::mutex lock;
  std::vector<GemmPlanState*> live;
  bool engine_alive = true;
};

// One dispatch of a recorded product: its pipeline, its pass (grid, push constants) and its descriptor set
// (an index into a slot of GemmPlanState::sets_per_record sets; with push descriptors, which 3 of the writes it pushes).
struct Dispatch {
  VkPipeline pipeline = VK_NULL_HANDLE;
  const Pass* pass = nullptr;
  uint32_t set = 0;
  std::optional<uint64_t> indirect;  // the grid is in the workspace, this many bytes in (SequencePass)
};

// Where one descriptor of a recording points: a caller's operand (0 A, 1 B, 2 C) moved by its offset's
// shift from the planned one, the workspace (3), the epilogue's bias (4: the caller's fourth operand,
// ops[3], moved likewise), or the second workspace (5: Schedule::sums_bytes).
inline constexpr uint32_t kSourceWorkspace = 3;
static_assert(kSourceWorkspace == kSequenceWorkspace, "a sequence names the workspace as the plan binds it");
inline constexpr uint32_t kSourceBias = 4;
inline constexpr uint32_t kSourceSums = 5;
static_assert(kSourceSums == kSequenceSums, "a sequence names the second workspace as the plan binds it");
struct BindingSource {
  uint32_t source = 0;
  uint64_t offset = 0, size = 0;
};

// Operand i's element size (0 A, 1 B, 2 C, 3 the epilogue's vectors: per_column scales, then the bias) and
// the bytes it spans from its byte offset. The shader reads the fourth operand as 32-bit words, so it spans
// every word it touches: a 2-byte bias at an offset of 2 modulo 4 reaches 2 bytes further than its length.
uint64_t operand_element_size(const GemmDesc& desc, const kernels::Types& types, int operand) noexcept;
uint64_t operand_bytes(const GemmDesc& desc, const kernels::Types& types, int operand, uint64_t offset = 0);

// Where a recording's timestamp queries are reset: by a command recorded before them, or already on the host
// (vkResetQueryPool, DeviceInfo::host_query_reset), which only the one who knows the queries are idle may do.
enum class QueryReset { in_commands, on_host };

// A GemmPlan's state (plan.hpp): the product planned once, and everything a recording uses, made once.
struct GemmPlanState {
  ~GemmPlanState();
  GemmPlanState() = default;
  GemmPlanState(const GemmPlanState&) = delete;
  GemmPlanState& operator=(const GemmPlanState&) = delete;

  // Throws unless the plan's engine is alive; `what` names the call.
  EngineImpl& live_engine(const char* what) const;
  // The operands against the plan: buffer, element alignment, size, and the offset class. Throws Error.
  void check_operands(const VulkanBufferRange (&ops)[kOperands]) const;
  // Records the product (warmup + repeat) for `ops` into `cmd`, with timestamps in `queries` when it is not
  // null (reset as `reset` says): writes `slot_sets` and binds them, or, where slot_sets is null (push
  // descriptors), pushes each dispatch's bindings. Checks nothing, allocates nothing.
  void record(VkCommandBuffer cmd, const VulkanBufferRange (&ops)[kOperands], const VkDescriptorSet* slot_sets,
              VkQueryPool queries, QueryReset reset = QueryReset::in_commands);
  // The next slot of the ring of descriptor sets, and its sets (the ring only: not with push descriptors).
  uint32_t take_slot();
  const VkDescriptorSet* slot_sets(uint32_t slot) const { return sets.data() + size_t{slot} * sets_per_record; }
  // What the next recording records with: the ring's next slot's sets, or null where the plan pushes.
  const VkDescriptorSet* next_sets() { return push ? nullptr : slot_sets(take_slot()); }
  // The GPU times from `queries` (2 per timed product) once the submission completed.
  GemmTiming timing(VkQueryPool queries) const;
  // Destroys the Vulkan objects (the engine is going); record, run and timing throw afterwards.
  void release() noexcept;

  EngineImpl* engine = nullptr;  // null once released
  std::shared_ptr<PlanRegistry> registry;
  GemmDesc desc;
  GemmPlanOptions options;
  Schedule product;
  uint64_t planned[kOperands] = {};  // the operands' byte offsets planned for, A B C and the bias
  uint64_t needed[kOperands] = {};   // bytes each operand spans from its offset
  uint64_t element[kOperands] = {4, 4, 4, 4};  // element sizes
  bool bias = false;           // the epilogue has a bias: the fourth operand is bound (binding 3)
  uint64_t bias_binding = 0;   // its binding's planned start: planned[3] rounded down (schedule.hpp)
  uint64_t bias_shift = 0;     // planned[3] - bias_binding
  uint64_t granularity = 64;        // offsets congruent modulo this record as planned
  std::vector<Dispatch> dispatches;  // one product, in order; a barrier between consecutive ones
  std::vector<BindingSource> bindings;     // 3 per set of a slot
  std::vector<VkDescriptorBufferInfo> infos;  // the writes' targets, rewritten by each record
  std::vector<VkWriteDescriptorSet> writes;   // 3 per set of a slot (per dispatch); dstSet set by each record
  uint32_t sets_per_record = 0;
  // Push descriptors (the engine's Pipelines have a push layout): no pool, no sets, no slots; every field
  // of the ring below stays empty.
  bool push = false;
  // The latest submission's time from submission to completion as the waiting host saw it (negative: none
  // yet): how long the next one will take, for the automatic wait (GemmOptions::wait).
  std::chrono::microseconds last_completion{-1};
  // Made by EngineImpl::cached_plan for the engine's own calls: only those that wait for their submission
  // submit it (record_gemm brings its own queries), so its queries are idle between them and may be reset on
  // the host. A GemmPlan never is: the application may have recordings of it pending.
  bool engine_only = false;
  Replay replay;  // engine_only plans: their own command buffer
  uint32_t next_slot = 0;
  Buffer workspace;  // split-K partial sums (the pieces share it, one after another)
  Buffer sums;       // the second workspace (Schedule::sums_bytes), where the product has one
  vk::DeviceHandle<VkDescriptorPool> pool;
  std::vector<VkDescriptorSet> sets;  // options.max_pending slots of sets_per_record; freed with the pool
  std::vector<uint64_t> slot_serial;  // per slot, the engine submission that used it last (0: none)
  vk::DeviceHandle<VkQueryPool> queries;  // 2 per timed product, with options.timestamps
};

// What a GemmRecording keeps alive until the application's submission completes: the plan it recorded
// (its pipelines and workspace), and its own descriptor sets (none with push descriptors) and queries (so
// that recordings of one description, cached as one plan, never share them).
struct RecordingImpl {
  std::shared_ptr<GemmPlanState> plan;
  vk::DeviceHandle<VkDescriptorPool> descriptors;
  vk::DeviceHandle<VkQueryPool> queries;
  // Set by the recording's last command: until then its queries may not even be reset, and reading them
  // is invalid (VUID-vkGetQueryPoolResults-None-09401), so timing() asks the event first.
  vk::DeviceHandle<VkEvent> done;
  bool recorded = false;
  GemmTiming timing() const;
};

// A host-memory call's operands (Engine::gemm on host pointers).
struct HostOperands {
  const void* a = nullptr;
  const void* b = nullptr;
  void* c = nullptr;
  const void* bias = nullptr;
};

struct EngineImpl {
  explicit EngineImpl(const EngineOptions& options);
  explicit EngineImpl(const VulkanDevice& adopted);

  Buffer create_buffer(uint64_t bytes, std::string_view name);
  void write(Buffer& buffer, uint64_t offset, const void* data, uint64_t bytes);
  void read(const Buffer& buffer, uint64_t offset, void* data, uint64_t bytes);
  // An emulated product that completed: where its coverage flag was set, timing names the native kernel
  // that computed it and why (the flag's bits).
  void report_emulation(const GemmPlanState& plan, GemmTiming& timing);
  void fill(Buffer& buffer, uint64_t offset, uint64_t bytes, uint32_t word);

  ~EngineImpl();
  EngineImpl(const EngineImpl&) = delete;
  EngineImpl& operator=(const EngineImpl&) = delete;

  // The door (door.cpp): each public entry checks its call here, once, before any work, and nothing
  // inside checks it again. admit: the description (check_gemm), then admit_options: the run options
  // (check_run: repeat, warmup) and the device's support for the kernel, configuration and types
  // (kernels::check_supported). check_buffers: the operands' buffers (present, aligned, large enough).
  // Throw vkgemm::Error.
  void admit(const GemmDesc& desc, const GemmOptions& options) const;
  void admit_options(const GemmDesc& desc, const GemmOptions& options) const;
  void check_run(const GemmDesc& desc, const GemmOptions& options) const;
  void check_buffers(const GemmDesc& desc, const VulkanBufferRange (&ops)[kOperands], const kernels::Types& types) const;
  // Engine::plan: the call admitted, its plan-only options checked, then build_plan (gemm_plan.cpp).
  std::shared_ptr<GemmPlanState> make_plan(const GemmDesc& desc, const GemmPlanOptions& options);
  // An admitted call's Schedule and what its recordings use; checks nothing.
  std::shared_ptr<GemmPlanState> build_plan(const GemmDesc& desc, const GemmPlanOptions& options);
  // The plan cache (plan_cache.hpp) and the door's memo. plan_key: the call's key (the door it came through,
  // its operands' offsets modulo the binding granularity). find_plan: the cache's entry for it, counted once per call as a hit or a
  // miss; where the entry's call passed the door (Found::admitted) the door counts admitted_before and runs
  // none of admit()'s checks. keep_plan: `found`'s plan, else one built and cached under `key`; `admitted`:
  // this call passed the door itself (the K chunks of a call that did are not admitted on their own).
  CallKey plan_key(Door door, const GemmDesc& desc, const GemmOptions& options,
                   const VulkanBufferRange (&ops)[kOperands]) const;
  PlanCache::Found find_plan(const CallKey& key);
  std::shared_ptr<GemmPlanState> keep_plan(const CallKey& key, const PlanCache::Found& found, const GemmDesc& desc,
                                           const GemmOptions& options, const VulkanBufferRange (&ops)[kOperands],
                                           bool admitted);
  // find_plan (uncounted by the door) then keep_plan: the K chunks' plans (admitted false).
  std::shared_ptr<GemmPlanState> cached_plan(const GemmDesc& desc, const GemmOptions& options,
                                             const VulkanBufferRange (&ops)[kOperands], bool admitted);
  // Engine::prepare (prepare.cpp): the pipelines of each call, built `threads` at a time.
  size_t prepare(const std::vector<std::pair<GemmDesc, GemmOptions>>& calls, unsigned threads);
  // record_gemm (vulkan.hpp): the cached plan, checked against the operands, recorded with the recording's
  // own descriptor sets and queries.
  std::unique_ptr<RecordingImpl> record(VkCommandBuffer cmd, const GemmDesc& desc, const VulkanBufferRange (&ops)[kOperands],
                                        const GemmOptions& options);
  // submit_gemm (vulkan.hpp): the cached plan, then submit_plan.
  GemmTiming submit(const GemmDesc& desc, const VulkanBufferRange (&ops)[kOperands], const GemmOptions& options,
                    const SubmitSync* sync);
  // The plan recorded between full barriers and submitted with `sync`; returns its serial. The call and its
  // operands were checked at the door. A GemmPlan records into the engine's next command buffer; an engine
  // plan (engine_only) submits its own (submit_replayed), recorded again only where `ids` (the operands'
  // engine buffers; null: not engine buffers) and `ops` differ from its last recording's.
  uint64_t submit_plan_async(GemmPlanState& plan, const VulkanBufferRange (&ops)[kOperands], const SubmitSync* sync,
                             const OperandIds* ids = nullptr);
  // The same, waited for, with its timing.
  GemmTiming submit_plan(GemmPlanState& plan, const VulkanBufferRange (&ops)[kOperands], const SubmitSync* sync,
                         const OperandIds* ids = nullptr);
  // A submission of `plan` (its serial, and the host's time just before it) waited for, with its timing.
  GemmTiming await_plan(GemmPlanState& plan, uint64_t serial, std::chrono::steady_clock::time_point submitted);
  // An engine plan's submission through its Replay (replay.cpp).
  uint64_t submit_replayed(GemmPlanState& plan, const VulkanBufferRange (&ops)[kOperands], const SubmitSync* sync,
                           const OperandIds* ids);
  // What one submission of the plan holds: a barrier after earlier work, the product (with `sets`, `queries`
  // reset as `reset` says), a barrier before later work.
  void record_call(GemmPlanState& plan, VkCommandBuffer cmd, const VulkanBufferRange (&ops)[kOperands],
                   const VkDescriptorSet* sets, VkQueryPool queries, QueryReset reset);
  // Engine buffers at offsets as ranges (each to its buffer's end); throws naming a missing or foreign one.
  // With `ids`, the buffers' ids too (0 for a missing bias), for the replay (replay.cpp).
  void ranges_of(const BufferOffset (&ops)[kOperands], VulkanBufferRange (&ranges)[kOperands], const char* what,
                 OperandIds* ids = nullptr) const;
  // Whether options.max_k_per_submission cuts this call into K chunks submitted one by one.
  static bool chunked(const GemmDesc& desc, const GemmOptions& options);
  // One submission per K chunk, each planned and waited for; the whole call was admitted, its chunks are not
  // checked again.
  GemmTiming submit_k_chunks(const GemmDesc& desc, const VulkanBufferRange (&ops)[kOperands], const GemmOptions& options,
                             const OperandIds* ids);
  // A call on engine buffers through the door: its ranges and buffer ids, and its plan, kept in the cache;
  // none for an empty product (m, n or batch 0) or one cut into K chunks (`chunked`).
  struct BufferCall {
    VulkanBufferRange ranges[kOperands] = {};
    OperandIds ids{};
    std::shared_ptr<GemmPlanState> plan;
    bool chunked = false;
  };
  BufferCall admit_buffers(const GemmDesc& desc, const BufferOffset (&ops)[kOperands], const GemmOptions& options,
                           const char* what);
  GemmTiming gemm(const GemmDesc& desc, const BufferOffset (&ops)[kOperands], const GemmOptions& options);
  // Products beside writes (beside.cpp, vkgemm/beside.hpp): a product on engine buffers submitted without
  // waiting (its serial; 0 for an empty product), a write on the upload copy queue beside the products in
  // flight, and the wait for a product (0: for everything in flight) within `timeout`.
  uint64_t submit_beside(const GemmDesc& desc, const BufferOffset (&ops)[kOperands], const GemmOptions& options);
  void write_beside(Buffer& buffer, uint64_t offset, const void* data, uint64_t bytes);
  bool wait_beside(uint64_t serial, std::chrono::nanoseconds timeout);
  // The copy queues' submitters (copy_up, copy_down), made at their first use.
  void make_copy_queues();
  GemmTiming gemm(const MatrixRef& a, const MatrixRef& b, const MatrixRef& c, const GemmOptions& options);
  GemmTiming gemm_host(const GemmDesc& desc, const void* a, const void* b, void* c, const void* bias,
                       const GemmOptions& options);
  // Whether a host-memory product sends C in: where it reads C (beta != 0) or leaves part of C's span as it
  // was (the gaps between rows and batch entries, which come back with it).
  static bool c_goes_in(const GemmDesc& desc);
  // The epilogue's vector operand (scales, bias), where it has one, into host_bias.
  void write_bias(const GemmDesc& desc, const void* bias);
  // The host-memory product cut into panels with their copies beside them (host_panels.cpp), where
  // panel_cut cuts it and the split operand's and C's pages import; else nothing done (empty). `ranges` and
  // `ids`: the host buffers (host_a, ...), sized for the call.
  std::optional<GemmTiming> gemm_host_panels(const GemmDesc& desc, const HostOperands& host,
                                             const uint64_t (&bytes)[kOperands], const GemmOptions& options,
                                             const VulkanBufferRange (&ranges)[kOperands], const OperandIds& ids);
  // A host-memory product whose operands pass what the device allocates at once, cut into blocks of C that
  // fit (host_blocks.hpp), each through gemm_host; empty where block_cut does not cut it.
  std::optional<GemmTiming> gemm_host_blocks(const GemmDesc& desc, const HostOperands& host,
                                             const GemmOptions& options);
  // The driver's statistics of the pipelines gemm(desc, ..., options) runs (statistics.cpp).
  PipelineReport pipeline_statistics(const GemmDesc& desc, const GemmOptions& options);

  // Throws unless `buffer` is a live buffer of this engine.
  const BufferImpl& owned(const Buffer& buffer, const char* what) const;

  // Every public call holds it: one engine may be shared by threads, its calls run one at a time.
  // Recursive because the conveniences call the other members.
  mutable std::recursive_mutex lock;

  // Declaration order is destruction order in reverse: everything below `device` dies before it.
  vk::ValidationSink sink;
  tuning::Table tuning;
  std::unique_ptr<vk::Instance> instance;
  PhysicalDevice physical;
  std::string device_reason;  // why this device (Engine::device_reason)
  std::unique_ptr<vk::Device> device;
  std::unique_ptr<vk::MemoryAllocator> memory;
  // The freed buffers kept for reuse: made after `memory`, destroyed after every Buffer the engine holds.
  std::unique_ptr<BufferPool> buffer_pool;
  std::unique_ptr<vk::Submitter> submitter;
  std::unique_ptr<kernels::Pipelines> pipelines;
  std::shared_ptr<PlanRegistry> plans = std::make_shared<PlanRegistry>();
  // The plans of the calls that take no GemmPlan (gemm, record_gemm, submit_gemm), and the door's memo.
  PlanCache plan_cache;
  // GemmOptions::wait's automatic: VKGEMM_WAIT, read when the engine is made.
  WaitMode default_wait = WaitMode::automatic;
  // BufferImpl::id's source.
  std::atomic<uint64_t> next_buffer_id{1};
  ReplayStats replay_stats;  // under the engine's lock
  // Testing only (a mutation): replay an engine plan's recording whatever the operands, as a replay that
  // checked nothing would. The tests show a product on other buffers then fails its check.
  bool test_replay_any_operands = false;
  // Engine::write and read, and so every host-memory call (host_copies.hpp); made after the submitter it uses.
  std::unique_ptr<HostCopies> host_copies;
  Buffer host_a, host_b, host_c, host_bias;  // reused by the host-memory gemm, grown on demand
  // The copies beside the products (host_panels.cpp), uploads and downloads on the device's copy queues;
  // made at the first product cut into panels.
  std::unique_ptr<vk::Submitter> copy_up, copy_down;
  // The products submit_beside left in flight (their plans kept alive with them, and their buffers, which a
  // write beside into one of them waits for), dropped once seen complete; and the upload queue's serial of
  // the latest write beside still running (0: none).
  struct BesideProduct {
    uint64_t serial = 0;
    std::shared_ptr<GemmPlanState> plan;
    OperandIds ids{};
  };
  std::vector<BesideProduct> beside_products;
  uint64_t beside_write = 0;
};

// Reaches the private parts of the public classes.
struct Access {
  static EngineImpl& impl(Engine& e) { return *e.impl_; }
  static const BufferImpl* impl(const Buffer& b) { return b.impl_.get(); }
  static GemmRecording recording(std::unique_ptr<RecordingImpl> r) { return GemmRecording(std::move(r)); }
  static const std::shared_ptr<GemmPlanState>& impl(const GemmPlan& p) { return p.impl_; }
  static GemmSubmission submission(EngineImpl& e, uint64_t value) {
    GemmSubmission s;
    s.engine_alive_ = e.plans;
    s.engine_ = &e;
    s.value_ = value;
    return s;
  }
  static GemmPlan plan(std::shared_ptr<GemmPlanState> impl) {
    GemmPlan p;
    p.impl_ = std::move(impl);
    return p;
  }
};

// Throws unless [offset, offset + bytes) lies inside a buffer of `size` bytes; `what` names the call.
void check_range(const char* what, uint64_t offset, uint64_t bytes, uint64_t size);

// A descriptor pool holding `slots` slots of `plan`'s sets, all allocated into `sets` (gemm_plan.cpp).
vk::DeviceHandle<VkDescriptorPool> make_sets(const EngineImpl& e, const GemmPlanState& plan, uint32_t slots,
                                             std::vector<VkDescriptorSet>& sets);
// A timestamp query pool of `count` queries.
vk::DeviceHandle<VkQueryPool> make_queries(const EngineImpl& e, uint32_t count);

using vk::memory_barrier;  // vk/commands.hpp

// What vkgemm peak measures with, lent from `e` (peak_entry.cpp); the caller holds e.lock.
peak::PeakContext peak_context(EngineImpl& e);

}  // namespace vkgemm::detail
