#include "engine/plan_cache.hpp"

#include <algorithm>
#include <cstdint>

namespace vkgemm::detail {

uint64_t CallKey::hash() const noexcept {
  uint64_t h = 14695981039346656037ull;
  for (size_t i = 0; i < size_; ++i) h = (h ^ bytes_[i]) * 1099511628211ull;
  return h;
}

#if UINTPTR_MAX == 0xffffffffffffffffu
// A field added to GemmDesc or GemmOptions changes its size here: add it to call_key, then these numbers.
static_assert(sizeof(GemmDesc) == 216 && sizeof(GemmOptions) == 68, "a new GemmDesc or GemmOptions field: key it");
#endif

CallKey call_key(Door door, const GemmDesc& desc, const GemmOptions& options, const uint64_t (&offsets)[kOperands],
                 uint64_t granularity) {
  // Field by field (no padding bytes), optionals as presence and value: a change to any field the door or
  // planning reads makes another key. A field added to GemmDesc or GemmOptions must be added here.
  CallKey key;
  key.put(door);
  key.put(desc.type), key.put(desc.c_type.has_value()), key.put(desc.c_type.value_or(desc.type));
  key.put(desc.layout), key.put(desc.op_a), key.put(desc.op_b);
  key.put(desc.m), key.put(desc.n), key.put(desc.k), key.put(desc.lda), key.put(desc.ldb), key.put(desc.ldc);
  key.put(desc.alpha), key.put(desc.beta), key.put(desc.batch);
  for (const auto& s : {desc.stride_a, desc.stride_b, desc.stride_c}) key.put(s.has_value()), key.put(s.value_or(0));
  const Epilogue& e = desc.epilogue;
  key.put(e.bias), key.put(e.bias_type), key.put(e.activation), key.put(e.slope);
  for (const auto& bound : {e.lo, e.hi}) key.put(bound.has_value()), key.put(bound.value_or(0.0));
  key.put(e.scale), key.put(e.tensor_scale);
  key.put(options.kernel), key.put(options.tile), key.put(options.blocked), key.put(options.repeat);
  key.put(options.warmup), key.put(options.timestamps), key.put(options.f16_accumulate);
  key.put(options.max_k_per_submission), key.put(options.wait), key.put(options.precision);
  key.put(options.emulation_moduli);
  for (const uint64_t offset : offsets) key.put(offset % granularity);
  return key;
}

PlanCache::Entry* PlanCache::lookup(const CallKey& key, uint64_t hash) noexcept {
  for (Entry& e : entries_) {
    if (e.hash == hash && e.key == key) return &e;
  }
  return nullptr;
}

PlanCache::Found PlanCache::find(const CallKey& key, uint64_t generation) {
  if (generation != generation_) {
    if (!entries_.empty()) ++stats_.invalidations;
    clear();
    generation_ = generation;
  }
  Entry* e = key.valid() ? lookup(key, key.hash()) : nullptr;
  if (!e) {
    ++stats_.misses;
    return {};
  }
  ++stats_.hits;
  if (e->admitted) ++stats_.admitted_hits;
  e->used = ++clock_;
  return {e->plan, e->admitted};
}

void PlanCache::insert(const CallKey& key, std::shared_ptr<GemmPlanState> plan, bool admitted) {
  if (!key.valid()) return;  // never found again: not kept
  if (entries_.size() >= kCapacity) {
    const auto oldest = std::min_element(entries_.begin(), entries_.end(),
                                         [](const Entry& a, const Entry& b) { return a.used < b.used; });
    if (oldest != entries_.end() - 1) *oldest = std::move(entries_.back());
    entries_.pop_back();
    ++stats_.evictions;
  }
  entries_.push_back({key, key.hash(), std::move(plan), admitted, ++clock_});
}

void PlanCache::admit(const CallKey& key) noexcept {
  if (Entry* e = key.valid() ? lookup(key, key.hash()) : nullptr) e->admitted = true;
}

void PlanCache::clear() noexcept { entries_.clear(); }

PlanCacheStats PlanCache::stats() const noexcept {
  PlanCacheStats s = stats_;
  s.size = entries_.size();
  return s;
}

}  // namespace vkgemm::detail
