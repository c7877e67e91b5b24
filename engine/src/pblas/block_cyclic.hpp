// ScaLAPACK's block-cyclic distribution along one axis of a matrix, and of a submatrix of it: which process
// holds each global index, where it lies in that process's local array, and the blocks a process holds in
// order. Pure arithmetic on the descriptor's numbers (no MPI, no BLACS), so the tests check it against an
// enumeration of every index.
//
// Along one axis (rows: M, IMB, MB, RSRC over P process rows; columns: N, INB, NB, CSRC over Q) the global
// indices 0 .. n-1 fall into blocks: block 0 holds the first `first` indices, every later block `block`
// indices (the last may be short); block b lives on process (src + b) mod procs, and a process stores its
// blocks one after another in its local array, in global order.
#pragma once

#include <cstdint>
#include <vector>

namespace vkgemm::pblas {

struct Axis {
  int64_t n = 0;      // global extent
  int64_t first = 1;  // the first block's size (IMB or INB; MB or NB for a descriptor without them)
  int64_t block = 1;  // every later block's size (MB or NB)
  int src = 0;        // the process holding block 0 (RSRC or CSRC)
  int procs = 1;      // processes along this axis (P or Q)
};

// One block a process holds: global indices [global, global + length), local [local, local + length).
struct OwnedBlock {
  int64_t global = 0;
  int64_t length = 0;
  int64_t local = 0;
};

// Whether the numbers describe a distribution: n >= 0, sizes >= 1, 0 <= src < procs.
bool valid(const Axis& axis) noexcept;

// The process holding global index i (0 <= i < n).
int owner(const Axis& axis, int64_t i) noexcept;

// How many of the global indices below i (clamped to 0 .. n) process p holds: the local index of the first
// index at or after i that p holds. count_below(axis, p, axis.n) is p's local extent (ScaLAPACK's NUMROC).
int64_t count_below(const Axis& axis, int p, int64_t i) noexcept;
int64_t local_extent(const Axis& axis, int p) noexcept;

// The blocks process p holds, in global (= local) order.
std::vector<OwnedBlock> owned_blocks(const Axis& axis, int p);

// The submatrix's axis: global indices offset .. offset + n - 1 of `whole`, renumbered from 0 (ScaLAPACK's
// IA - 1, JA - 1), as a distribution of its own. Its indices on process p start at local index
// count_below(whole, p, offset) of p's local array. Requires offset + n <= whole.n.
Axis sub_axis(const Axis& whole, int64_t offset, int64_t n) noexcept;

// Whether two axes put every index on the same process at the same local position (relative to where each
// submatrix starts): the same extent and process count, and the same blocks wherever there is more than one.
bool same_layout(const Axis& x, const Axis& y) noexcept;

}  // namespace vkgemm::pblas
