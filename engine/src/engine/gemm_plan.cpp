// Plans (vkgemm/plan.hpp): a call admitted (door.cpp) and planned once (EngineImpl::make_plan), its
// descriptor-set ring (none where the engine pushes descriptors), workspace and queries made once;
// recording then writes or pushes descriptors and records commands, allocating nothing. The engine's own
// calls go through the same plans, cached by call shape (plan_cache.hpp, EngineImpl::keep_plan).
#include <algorithm>
#include <chrono>
#include <cstring>

#include <fmt/format.h>

#include "engine/engine_impl.hpp"
#include "engine/epilogue_check.hpp"
#include "kernels/check_count.hpp"
#include "vk/check.hpp"
#include "vkgemm/error.hpp"

namespace vkgemm {
namespace detail {
namespace {

constexpr uint32_t kMaxPending = 64;
constexpr const char* kNames[kOperands] = {"A", "B", "C", "the epilogue's bias"};
constexpr const char* kOffsetNames[kOperands] = {"a_offset", "b_offset", "c_offset", "bias_offset"};

// The dispatches of one product and the bindings of one slot's sets (with push descriptors: of the dispatches).
void lay_out(GemmPlanState& p, kernels::Pipelines& pipelines) {
  const Schedule& plan = p.product;
  for (const SequencePass& pass : plan.sequence) {  // a sequence's passes bind as they say
    p.dispatches.push_back({pipelines.get(pass.pass.shape), &pass.pass, p.sets_per_record++, pass.indirect});
    for (const SequenceBinding& b : pass.bindings) p.bindings.push_back({b.source, b.offset, b.size});
    // Binding 3, the epilogue's bias: read by the pass that stores C with it (no emulated pass has one).
    const bool bias = p.bias && pass.pass.push.epilogue != 0;
    p.bindings.push_back(bias ? BindingSource{kSourceBias, p.bias_binding, p.needed[3] + p.bias_shift}
                              : p.bindings.back());
    // Binding 4, the K slices' sums of a pass that adds them itself; binding 2's where nothing reads it.
    const SequenceBinding& c = pass.bindings[2];
    p.bindings.push_back(pass.slices ? BindingSource{pass.slices->source, pass.slices->offset, pass.slices->size}
                                     : BindingSource{c.source, c.offset, c.size});
  }
  for (const PiecePasses& piece : plan.pieces) {
    if (!plan.sequence.empty()) break;  // the pieces are the emulated product's fallback, in its sequence
    const PieceBinding* own[3] = {&piece.piece.a, &piece.piece.b, &piece.piece.c};
    BindingSource operand[3];
    for (uint32_t b = 0; b < 3; ++b) operand[b] = {plan.source[b], own[b]->offset, own[b]->size};
    const uint32_t set = p.sets_per_record;
    const BindingSource space{kSourceWorkspace, 0, piece.workspace_bytes};
    // Binding 3, the epilogue's bias, is read only by the pass that stores C; every other pass (and every
    // product without a bias) binds C there, where nothing reads it. Binding 4, the K slices' sums, is read
    // only by a main pass that adds its slices itself; elsewhere it binds C too.
    const BindingSource bias = p.bias ? BindingSource{kSourceBias, p.bias_binding, p.needed[3] + p.bias_shift}
                                      : operand[2];
    if (piece.turn_b) {  // the turn writes the workspace as C; the main pass reads it as B
      p.dispatches.push_back({pipelines.get(piece.turn_b->shape), &*piece.turn_b, set});
      p.dispatches.push_back({pipelines.get(piece.main.shape), &piece.main, set + 1});
      p.bindings.insert(p.bindings.end(), {operand[0], operand[1], space, operand[2], operand[2],
                                           operand[0], space, operand[2], bias, operand[2]});
      p.sets_per_record += 2;
    } else if (piece.reduce) {
      p.dispatches.push_back({pipelines.get(piece.main.shape), &piece.main, set});
      p.dispatches.push_back({pipelines.get(piece.reduce->shape), &*piece.reduce, set + 1});
      p.bindings.insert(p.bindings.end(), {operand[0], operand[1], space, operand[2], operand[2],
                                           space, space, operand[2], bias, operand[2]});
      p.sets_per_record += 2;
    } else {
      p.dispatches.push_back({pipelines.get(piece.main.shape), &piece.main, set});
      p.bindings.insert(p.bindings.end(), {operand[0], operand[1], operand[2], bias,
                                           piece.adds_slices ? space : operand[2]});
      p.sets_per_record += 1;
    }
  }
  p.infos.resize(p.bindings.size());
  p.writes.resize(p.bindings.size());
  for (size_t i = 0; i < p.writes.size(); ++i) {
    VkWriteDescriptorSet& w = p.writes[i];
    w = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    w.dstBinding = static_cast<uint32_t>(i % kGemmBindings);
    w.descriptorCount = 1;
    w.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    w.pBufferInfo = &p.infos[i];
  }
}

}  // namespace

// A pool holding `slots` slots of the plan's sets, all allocated at once; `sets` receives them.
vk::DeviceHandle<VkDescriptorPool> make_sets(const EngineImpl& e, const GemmPlanState& p, uint32_t slots,
                                             std::vector<VkDescriptorSet>& sets) {
  const auto& t = e.device->table();
  const VkDevice dev = e.device->get();
  const uint32_t count = slots * p.sets_per_record;
  VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, kGemmBindings * count};
  VkDescriptorPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  pool_info.maxSets = count;
  pool_info.poolSizeCount = 1;
  pool_info.pPoolSizes = &size;
  VkDescriptorPool pool = VK_NULL_HANDLE;
  vk::check(t.vkCreateDescriptorPool(dev, &pool_info, nullptr, &pool), "vkCreateDescriptorPool");
  vk::DeviceHandle<VkDescriptorPool> owned(t, dev, pool);
  const std::vector<VkDescriptorSetLayout> layouts(count, e.pipelines->set_layout());
  VkDescriptorSetAllocateInfo alloc{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  alloc.descriptorPool = pool;
  alloc.descriptorSetCount = count;
  alloc.pSetLayouts = layouts.data();
  sets.assign(count, VK_NULL_HANDLE);
  vk::check(t.vkAllocateDescriptorSets(dev, &alloc, sets.data()), "vkAllocateDescriptorSets");
  return owned;
}

vk::DeviceHandle<VkQueryPool> make_queries(const EngineImpl& e, uint32_t count) {
  return vk::timestamp_queries(*e.device, count);
}

std::shared_ptr<GemmPlanState> EngineImpl::make_plan(const GemmDesc& desc, const GemmPlanOptions& options) {
  device->check_alive("plan");
  admit(desc, options.gemm);
  if (options.max_pending == 0 || options.max_pending > kMaxPending) {
    throw Error(ErrorCode::invalid_argument, fmt::format("plan: GemmPlanOptions::max_pending must be 1 to {} (got {})",
                                                         kMaxPending, options.max_pending));
  }
  const kernels::Types types = kernels::types_of(desc, options.gemm);
  const uint64_t planned[kOperands] = {options.a_offset, options.b_offset, options.c_offset, options.bias_offset};
  for (int i = 0; i < kOperands; ++i) {
    const uint64_t es = operand_element_size(desc, types, i);
    if (planned[i] % es) {
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("plan: GemmPlanOptions::{} {} is not a multiple of the {}-byte element",
                              kOffsetNames[i], planned[i], es));
    }
  }
  return build_plan(desc, options);
}

std::shared_ptr<GemmPlanState> EngineImpl::build_plan(const GemmDesc& desc, const GemmPlanOptions& options) {
  auto p = std::make_shared<GemmPlanState>();
  p->desc = desc;
  p->options = options;
  p->planned[0] = options.a_offset, p->planned[1] = options.b_offset, p->planned[2] = options.c_offset;
  p->planned[3] = options.bias_offset;
  p->granularity = std::max<uint64_t>(physical.storage_offset_alignment, 64);  // both powers of two
  const Placement placement{options.a_offset, options.b_offset, options.c_offset, options.bias_offset,
                            physical.storage_offset_alignment};
  p->product = schedule_product(desc, options.gemm, physical.info, tuning, placement);
  const kernels::Types& types = p->product.types;
  for (int i = 0; i < kOperands; ++i) {
    p->element[i] = operand_element_size(desc, types, i);
    p->needed[i] = operand_bytes(desc, types, i, p->planned[i]);  // record's offsets keep planned[i] % 4
  }
  p->bias = has_vector_operand(desc);  // a bias, or per_column dequantization scales
  if (p->bias) {  // bound from its start rounded down (schedule.hpp); the shader skips bias_shift bytes
    p->bias_shift = options.bias_offset % bias_binding_alignment(physical.storage_offset_alignment);
    p->bias_binding = options.bias_offset - p->bias_shift;
  }
  p->push = pipelines->push_descriptors();
  lay_out(*p, *pipelines);
  if (!p->product.pieces.empty()) {
    if (p->product.workspace_bytes) p->workspace = create_buffer(p->product.workspace_bytes, "vkgemm workspace");
    if (p->product.sums_bytes) p->sums = create_buffer(p->product.sums_bytes, "vkgemm int32 planes");
    // K slices that meet through counters in the workspace (the skinny kernel's single pass): zeroed once
    // here, as the plan is made, not on every call; each call leaves them at zero again (shaders/gemv.comp),
    // so a recorded command buffer replays without a clearing pass. The buffer may come from the engine's
    // pool of freed ones, whose words are whatever their last use left.
    if (p->workspace.valid() && p->product.counts_in_workspace()) fill(p->workspace, 0, p->product.workspace_bytes, 0);
    if (!p->push) {  // the ring; with push descriptors max_pending limits nothing
      p->pool = make_sets(*this, *p, options.max_pending, p->sets);
      p->slot_serial.assign(options.max_pending, 0);
    }
    if (options.timestamps && physical.info.timestamps) p->queries = make_queries(*this, 2 * options.gemm.repeat);
  }
  std::lock_guard guard(plans->lock);
  plans->live.push_back(p.get());
  p->registry = plans;
  p->engine = this;
  return p;
}

CallKey EngineImpl::plan_key(Door door, const GemmDesc& desc, const GemmOptions& options,
                             const VulkanBufferRange (&ops)[kOperands]) const {
  const uint64_t offsets[kOperands] = {ops[0].offset, ops[1].offset, ops[2].offset, ops[3].offset};
  return call_key(door, desc, options, offsets, std::max<uint64_t>(physical.storage_offset_alignment, 64));
}

PlanCache::Found EngineImpl::find_plan(const CallKey& key) {
  PlanCache::Found found = plan_cache.find(key, tuning.generation());
  if (found.admitted) count_check(Checked::admitted_before);
  return found;
}

std::shared_ptr<GemmPlanState> EngineImpl::keep_plan(const CallKey& key, const PlanCache::Found& found,
                                                     const GemmDesc& desc, const GemmOptions& options,
                                                     const VulkanBufferRange (&ops)[kOperands], bool admitted) {
  if (found.plan) {
    if (admitted && !found.admitted) plan_cache.admit(key);
    return found.plan;
  }
  const uint64_t granularity = std::max<uint64_t>(physical.storage_offset_alignment, 64);
  GemmPlanOptions po;
  po.gemm = options;
  po.a_offset = ops[0].offset % granularity, po.b_offset = ops[1].offset % granularity;
  po.c_offset = ops[2].offset % granularity, po.bias_offset = ops[3].offset % granularity;
  po.timestamps = options.timestamps;
  po.max_pending = 1;  // the engine's calls wait for each submission (record_gemm brings its own sets)
  std::shared_ptr<GemmPlanState> plan = build_plan(desc, po);  // the call was admitted at its door
  plan->engine_only = true;
  plan_cache.insert(key, plan, admitted);
  return plan;
}

std::shared_ptr<GemmPlanState> EngineImpl::cached_plan(const GemmDesc& desc, const GemmOptions& options,
                                                       const VulkanBufferRange (&ops)[kOperands], bool admitted) {
  const CallKey key = plan_key(Door::buffers, desc, options, ops);
  return keep_plan(key, plan_cache.find(key, tuning.generation()), desc, options, ops, admitted);
}

EngineImpl::~EngineImpl() {
  try {
    if (submitter) submitter->wait_all();  // Engine::submit's products may still use the plans' objects
    if (copy_up) copy_up->wait_all();      // a write beside the products may still read the staging ring
  } catch (const Error&) {
    // A lost device: nothing runs any more.
  }
  plan_cache.clear();
  std::lock_guard guard(plans->lock);
  for (GemmPlanState* p : plans->live) p->release();
  plans->live.clear();
  plans->engine_alive = false;
}

GemmPlanState::~GemmPlanState() {
  if (!registry) return;
  std::lock_guard guard(registry->lock);
  if (!registry->engine_alive) return;  // released with the engine
  std::erase(registry->live, this);
  release();
}

void GemmPlanState::release() noexcept {
  // Its command buffer is idle: every submission of an engine plan was waited for (replay.cpp), and the
  // engine waits for all of them before it releases its plans.
  replay.pool.reset();
  replay.cmd = VK_NULL_HANDLE;
  replay.recorded = false;
  workspace = Buffer();
  sums = Buffer();
  sets.clear();
  pool.reset();
  queries.reset();
  engine = nullptr;
}

EngineImpl& GemmPlanState::live_engine(const char* what) const {
  if (!engine) {
    throw Error(ErrorCode::invalid_argument, fmt::format("{}: the plan's engine was destroyed; a plan must not "
                                                         "outlive its engine", what));
  }
  engine->device->check_alive(what);
  return *engine;
}

void GemmPlanState::check_operands(const VulkanBufferRange (&ops)[kOperands]) const {
  const int used = bias ? kOperands : 3;  // a plan without a bias ignores the fourth operand
  bool ok = true;
  for (int i = 0; i < used; ++i) {
    ok = ok && ops[i].buffer != VK_NULL_HANDLE && ops[i].offset % element[i] == 0 && ops[i].size >= needed[i];
  }
  if (!ok) engine->check_buffers(desc, ops, product.types);  // throws, naming the operand and the problem
  for (int i = 0; i < used; ++i) {
    if ((ops[i].offset - planned[i]) % granularity) {
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("plan record: {}'s offset {} is not {} plus a multiple of {} (the offset the plan was "
                              "made for, GemmPlanOptions::{}, and GemmPlan::offset_granularity()); make a plan for "
                              "this offset", kNames[i], ops[i].offset, planned[i], granularity, kOffsetNames[i]));
    }
  }
}

uint32_t GemmPlanState::take_slot() {
  const uint32_t slot = next_slot;
  next_slot = (slot + 1) % options.max_pending;
  return slot;
}

void EngineImpl::ranges_of(const BufferOffset (&ops)[kOperands], VulkanBufferRange (&ranges)[kOperands], const char* what,
                           OperandIds* ids) const {
  for (int i = 0; i < kOperands; ++i) {
    if (i == 3 && !ops[i].buffer) {  // no bias: an empty range, refused by check_buffers where the call needs one
      ranges[i] = {};
      if (ids) (*ids)[size_t(i)] = 0;
      continue;
    }
    if (!ops[i].buffer) throw Error(ErrorCode::invalid_argument, fmt::format("{}: {} has no buffer", what, kNames[i]));
    const BufferImpl& b = owned(*ops[i].buffer, kNames[i]);
    const uint64_t size = b.alloc.size;
    ranges[i] = {b.alloc.buffer.get(), ops[i].offset, ops[i].offset > size ? 0 : size - ops[i].offset};
    if (ids) (*ids)[size_t(i)] = b.id;
  }
}

}  // namespace detail

GemmPlan::GemmPlan() noexcept = default;
GemmPlan::~GemmPlan() = default;
GemmPlan::GemmPlan(GemmPlan&&) noexcept = default;
GemmPlan& GemmPlan::operator=(GemmPlan&&) noexcept = default;

static detail::GemmPlanState& checked(const std::shared_ptr<detail::GemmPlanState>& impl, const char* what) {
  if (!impl) throw Error(ErrorCode::invalid_argument, fmt::format("{}: this GemmPlan is empty", what));
  impl->live_engine(what);
  return *impl;
}

const GemmDesc& GemmPlan::desc() const { return checked(impl_, "GemmPlan::desc").desc; }
Kernel GemmPlan::kernel() const { return checked(impl_, "GemmPlan::kernel").product.kernel; }
const std::string& GemmPlan::config() const { return checked(impl_, "GemmPlan::config").product.config; }
uint64_t GemmPlan::offset_granularity() const { return checked(impl_, "GemmPlan::offset_granularity").granularity; }

void GemmPlan::record(VkCommandBuffer cmd, const VulkanBufferRange& a, const VulkanBufferRange& b,
                  const VulkanBufferRange& c) {
  record(cmd, a, b, c, VulkanBufferRange{});
}

void GemmPlan::record(VkCommandBuffer cmd, const VulkanBufferRange& a, const VulkanBufferRange& b,
                      const VulkanBufferRange& c, const VulkanBufferRange& bias) {
  detail::GemmPlanState& p = checked(impl_, "GemmPlan::record");
  if (!cmd) throw Error(ErrorCode::invalid_argument, "GemmPlan::record: the command buffer is VK_NULL_HANDLE");
  const VulkanBufferRange ops[detail::kOperands] = {a, b, c, bias};
  p.check_operands(ops);
  if (p.product.pieces.empty()) return;  // nothing to do, as the reference BLAS
  p.record(cmd, ops, p.next_sets(), p.queries.get());
}

GemmTiming GemmPlan::timing() const {
  const detail::GemmPlanState& p = checked(impl_, "GemmPlan::timing");
  return p.timing(p.queries.get());
}

GemmPlan Engine::plan(const GemmDesc& desc) { return plan(desc, GemmPlanOptions{}); }

GemmPlan Engine::plan(const GemmDesc& desc, const GemmPlanOptions& options) {
  std::lock_guard guard(impl_->lock);
  return detail::Access::plan(impl_->make_plan(desc, options));
}

// The plan of Engine::run and submit: checked, this engine's, its operands as ranges and checked.
static detail::GemmPlanState& runnable(detail::EngineImpl& e, GemmPlan& plan,
                                       const BufferOffset (&ops)[detail::kOperands],
                                       VulkanBufferRange (&ranges)[detail::kOperands], const char* what) {
  detail::GemmPlanState& p = checked(detail::Access::impl(plan), what);
  if (p.engine != &e) throw Error(ErrorCode::invalid_argument, fmt::format("{}: the plan belongs to another engine", what));
  e.ranges_of(ops, ranges, what);
  p.check_operands(ranges);
  return p;
}

GemmTiming Engine::run(GemmPlan& plan, const BufferOffset& a, const BufferOffset& b, const BufferOffset& c) {
  return run(plan, a, b, c, BufferOffset{});
}

GemmTiming Engine::run(GemmPlan& plan, const BufferOffset& a, const BufferOffset& b, const BufferOffset& c,
                       const BufferOffset& bias) {
  std::lock_guard guard(impl_->lock);
  VulkanBufferRange ranges[detail::kOperands];
  detail::GemmPlanState& p = runnable(*impl_, plan, {a, b, c, bias}, ranges, "Engine::run");
  return impl_->submit_plan(p, ranges, nullptr);
}

GemmSubmission Engine::submit(GemmPlan& plan, const BufferOffset& a, const BufferOffset& b, const BufferOffset& c) {
  std::lock_guard guard(impl_->lock);
  VulkanBufferRange ranges[detail::kOperands];
  detail::GemmPlanState& p = runnable(*impl_, plan, {a, b, c}, ranges, "Engine::submit");
  return detail::Access::submission(*impl_, impl_->submit_plan_async(p, ranges, nullptr));
}

std::vector<double> Engine::time_record(GemmPlan& plan, const BufferOffset& a, const BufferOffset& b,
                                        const BufferOffset& c, uint32_t times) {
  std::lock_guard guard(impl_->lock);
  VulkanBufferRange ranges[detail::kOperands];
  detail::GemmPlanState& p = runnable(*impl_, plan, {a, b, c}, ranges, "Engine::time_record");
  std::vector<double> us;
  us.reserve(times);
  if (p.product.pieces.empty()) return us;
  for (uint64_t serial : p.slot_serial) {
    if (serial) impl_->submitter->wait(serial);  // no slot in use by a submission of the plan
  }
  const auto& t = impl_->device->table();
  // One submission (an empty command buffer): each record is made into the begun buffer and thrown away.
  impl_->submitter->run([&](VkCommandBuffer cmd) {
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    for (uint32_t i = 0; i < times; ++i) {
      const auto start = std::chrono::steady_clock::now();
      p.check_operands(ranges);
      p.record(cmd, ranges, p.next_sets(), p.queries.get());
      us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
      vk::check(t.vkEndCommandBuffer(cmd), "vkEndCommandBuffer");
      vk::check(t.vkResetCommandBuffer(cmd, 0), "vkResetCommandBuffer");
      vk::check(t.vkBeginCommandBuffer(cmd, &begin), "vkBeginCommandBuffer");
    }
  });
  return us;
}

// The engine of a live submission; with fences (no timeline) its lock too, as the submitter's fences are
// reset by submit.
template <typename F>
static auto with_engine(const std::shared_ptr<detail::PlanRegistry>& alive, detail::EngineImpl* e, const char* what,
                        F&& f) {
  if (!alive) throw Error(ErrorCode::invalid_argument, fmt::format("{}: this GemmSubmission is empty", what));
  {
    std::lock_guard guard(alive->lock);
    if (!alive->engine_alive) {
      throw Error(ErrorCode::invalid_argument, fmt::format("{}: the submission's engine was destroyed", what));
    }
  }
  if (e->submitter->timeline()) return f(*e->submitter);
  std::lock_guard guard(e->lock);
  return f(*e->submitter);
}

void GemmSubmission::wait() const {
  with_engine(engine_alive_, engine_, "GemmSubmission::wait", [&](vk::Submitter& s) { s.wait(value_); });
}
bool GemmSubmission::done() const {
  return with_engine(engine_alive_, engine_, "GemmSubmission::done", [&](vk::Submitter& s) { return s.done(value_); });
}
VkSemaphore GemmSubmission::semaphore() const {
  return with_engine(engine_alive_, engine_, "GemmSubmission::semaphore",
                     [](vk::Submitter& s) { return s.timeline(); });
}

}  // namespace vkgemm
