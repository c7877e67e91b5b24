#include "pblas/block_cyclic.hpp"

#include <algorithm>

namespace vkgemm::pblas {
namespace {

// The block holding global index i, and where that block starts.
struct BlockAt {
  int64_t index = 0;
  int64_t start = 0;
  int64_t size = 0;
};

BlockAt block_at(const Axis& axis, int64_t i) noexcept {
  if (i < axis.first) return {0, 0, axis.first};
  const int64_t later = (i - axis.first) / axis.block;
  return {1 + later, axis.first + later * axis.block, axis.block};
}

int64_t positive_mod(int64_t x, int64_t m) noexcept { return ((x % m) + m) % m; }

}  // namespace

bool valid(const Axis& axis) noexcept {
  return axis.n >= 0 && axis.first >= 1 && axis.block >= 1 && axis.procs >= 1 && axis.src >= 0 &&
         axis.src < axis.procs;
}

int owner(const Axis& axis, int64_t i) noexcept {
  return static_cast<int>(positive_mod(axis.src + block_at(axis, i).index, axis.procs));
}

int64_t count_below(const Axis& axis, int p, int64_t i) noexcept {
  i = std::clamp<int64_t>(i, 0, axis.n);
  if (i == 0) return 0;
  // p holds the blocks b with b = d (mod procs).
  const int64_t d = positive_mod(p - axis.src, axis.procs);
  int64_t total = d == 0 ? std::min(i, axis.first) : 0;
  if (i <= axis.first) return total;
  // The later blocks, numbered from 0 after the first: p holds those = e (mod procs).
  const int64_t e = positive_mod(d - 1, axis.procs);
  const int64_t j = i - axis.first, whole = j / axis.block, rest = j % axis.block;
  if (whole > e) total += ((whole - e - 1) / axis.procs + 1) * axis.block;
  if (whole % axis.procs == e) total += rest;
  return total;
}

int64_t local_extent(const Axis& axis, int p) noexcept { return count_below(axis, p, axis.n); }

std::vector<OwnedBlock> owned_blocks(const Axis& axis, int p) {
  std::vector<OwnedBlock> blocks;
  const int64_t d = positive_mod(p - axis.src, axis.procs);
  int64_t local = 0;
  auto add = [&](int64_t start, int64_t size) {
    const int64_t length = std::min(size, axis.n - start);
    blocks.push_back({start, length, local});
    local += length;
  };
  if (d == 0 && axis.n > 0) add(0, axis.first);
  const int64_t e = positive_mod(d - 1, axis.procs);
  for (int64_t start = axis.first + e * axis.block; start < axis.n; start += axis.procs * axis.block) add(start, axis.block);
  return blocks;
}

Axis sub_axis(const Axis& whole, int64_t offset, int64_t n) noexcept {
  const BlockAt at = block_at(whole, offset);
  Axis sub = whole;
  sub.n = n;
  sub.first = at.size - (offset - at.start);
  sub.src = static_cast<int>(positive_mod(whole.src + at.index, whole.procs));
  return sub;
}

bool same_layout(const Axis& x, const Axis& y) noexcept {
  if (x.n != y.n || x.procs != y.procs) return false;
  if (x.n == 0 || x.procs == 1) return true;  // nothing, or everything on one process in order
  if (x.src != y.src) return false;
  // One block (the first covers everything): nothing else matters.
  const bool x_one = x.first >= x.n, y_one = y.first >= y.n;
  if (x_one || y_one) return x_one && y_one;
  // The later blocks' size matters only where there is more than one of them.
  return x.first == y.first && (x.block == y.block || x.n - x.first <= std::min(x.block, y.block));
}

}  // namespace vkgemm::pblas
