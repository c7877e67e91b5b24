// The plans of the engine's own calls (Engine::gemm on engine buffers and on host memory, record_gemm,
// submit_gemm), kept by call shape: a repeated call finds its plan (kernel, configuration, pieces, pipelines,
// descriptor layout) here and does only its recording, its submission and its wait. An entry made for a call
// that passed the door (door.cpp) also stands for that call's checks of its description and options: they
// are pure functions of the bytes of the key, the device and the tuning table, so a call with the same key
// passes them again (the door's memo; the buffers are the call's own and are still checked every call).
//
// Bounded (kCapacity entries, the least recently used goes first), cleared when the tuning table changes
// (its generation, tuning::Table::generation). Not locked itself: the engine's lock, which every public
// call holds, guards it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

#include "vkgemm/blas.hpp"
#include "vkgemm/options.hpp"

namespace vkgemm::detail {

struct GemmPlanState;

// The caller's operands of one call, in this order wherever the engine keeps them: A, B, C, and the
// epilogue's bias vector (GemmDesc::epilogue; an empty range, never bound as itself, where there is none).
inline constexpr int kOperands = 4;

// A call's shape as bytes: every field of the description and options that the door checks or planning
// reads, and the operands' offsets modulo the binding granularity. Fixed storage: building one allocates
// nothing.
class CallKey {
 public:
  // Room for every field call_key puts, with some to spare (a call that overflowed it would never be cached;
  // the plan cache suite's key test fails then).
  static constexpr size_t kCapacity = 320;

  template <typename T>
  void put(const T& value) noexcept {
    static_assert(std::is_trivially_copyable_v<T>);
    static_assert(sizeof(T) <= kCapacity);
    if (size_ + sizeof(T) > kCapacity) {
      overflow_ = true;  // a key that cannot hold the call never equals another (operator==)
      return;
    }
    std::memcpy(bytes_.data() + size_, &value, sizeof(T));
    size_ += sizeof(T);
  }
  uint64_t hash() const noexcept;  // FNV-1a of the bytes
  bool valid() const noexcept { return !overflow_; }
  friend bool operator==(const CallKey& a, const CallKey& b) noexcept {
    return a.valid() && b.valid() && a.size_ == b.size_ && std::memcmp(a.bytes_.data(), b.bytes_.data(), a.size_) == 0;
  }

 private:
  std::array<unsigned char, kCapacity> bytes_{};
  size_t size_ = 0;
  bool overflow_ = false;
};

// Which door a call came through: the caller's buffers (Engine::gemm on engine buffers, record_gemm,
// submit_gemm: admit and check_buffers) or host memory (admit and check_fits, the operands against the
// device before they are copied). A memo stands only for the checks its own door made.
enum class Door : uint8_t { buffers, host };

// The key of a call: its door, `desc`, `options` and the operands' byte offsets modulo `granularity`.
CallKey call_key(Door door, const GemmDesc& desc, const GemmOptions& options, const uint64_t (&offsets)[kOperands],
                 uint64_t granularity);

// What the cache did since the engine was made (the tests' view, and docs/library.md's numbers).
struct PlanCacheStats {
  uint64_t hits = 0;           // a call found its plan
  uint64_t admitted_hits = 0;  // ... and the door's checks with it (the entry's call had passed the door)
  uint64_t misses = 0;         // a call planned afresh
  uint64_t evictions = 0;      // entries dropped at kCapacity, the least recently used first
  uint64_t invalidations = 0;  // times the tuning table's change emptied the cache
  size_t size = 0;             // entries now
};

class PlanCache {
 public:
  static constexpr size_t kCapacity = 64;

  struct Found {
    std::shared_ptr<GemmPlanState> plan;  // null: a miss
    bool admitted = false;                // the entry's call passed the door with this key
  };
  // The plan of `key`, made the most recent; counted as a hit or a miss. A `generation` other than the
  // entries' (the tuning table changed since) empties the cache first.
  Found find(const CallKey& key, uint64_t generation);
  // Adds a plan for `key` (absent), dropping the least recently used entry at kCapacity.
  void insert(const CallKey& key, std::shared_ptr<GemmPlanState> plan, bool admitted);
  // The entry of `key` (present) now stands for the door's checks too.
  void admit(const CallKey& key) noexcept;
  void clear() noexcept;
  PlanCacheStats stats() const noexcept;

 private:
  struct Entry {
    CallKey key;
    uint64_t hash = 0;
    std::shared_ptr<GemmPlanState> plan;
    bool admitted = false;
    uint64_t used = 0;  // the use clock's value at its last find or insert
  };
  Entry* lookup(const CallKey& key, uint64_t hash) noexcept;

  std::vector<Entry> entries_;  // at most kCapacity, in no order
  uint64_t clock_ = 0;
  uint64_t generation_ = 0;
  PlanCacheStats stats_;
};

}  // namespace vkgemm::detail
