// The local product of a process of a 1 x Q grid, streamed: its block of C stays on the device while the
// pieces of A arrive, each K block multiplied as soon as it is there (its own first, then each other
// process's as its messages complete), so that the transfers of A overlap the products instead of preceding
// them; each block is written to the device while the block before is multiplied (two A buffers in turn). B
// (all of K on this process: one process row) and C cross the bus once, in parts along N: the first part's
// before the first product, each later part's beside the products before it. Through the drop-in BLAS's
// engine (vkgemm_blas_engine), its device buffers and products (the C ABI).
//
// Where a device step fails, every message still completes and the product is computed the assembled way
// (block by block through the drop-in BLAS, which has its CPU fallback); C is written only by the last
// step, so a failure leaves it as it came.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "pblas/block_cyclic.hpp"
#include "pblas/gather.hpp"
#include "pblas/grid.hpp"
#include "pblas/settings.hpp"
#include "vkgemm/vkgemm.h"

namespace vkgemm::pblas {

// Fortran GEMM (the drop-in BLAS's dgemm_ or sgemm_): the assembled way's local product.
template <class T>
using Gemm = void (*)(const char*, const char*, const int*, const int*, const int*, const T*, const T*, const int*,
                      const T*, const int*, const T*, T*, const int*, size_t, size_t);

// One process's part: C (m x n, leading dimension m: no gaps) = alpha A B + beta C with A's columns
// distributed by k_axis over the grid's row (this process holds m x local_extent(k_axis, my_col) of them,
// leading dimension m) and B k x n whole here (leading dimension ldb).
template <class T>
struct StreamCall {
  Axis k_axis;
  int64_t m = 0, n = 0;
  const T* a = nullptr;
  const T* b = nullptr;
  int64_t ldb = 0;
  T* c = nullptr;
  T alpha{}, beta{};
};

// The K blocks a streamed product multiplies one by one must be at least this wide: narrower ones are many
// small products (ScaLAPACK's default block is 64), which the assembled way's one GEMM runs better.
inline constexpr int64_t kMinStreamBlock = 256;

// Whether this process can stream its part (its own facts alone: the other processes' choices do not change
// the messages): one process row, several columns, an engine, C without gaps, K blocks of kMinStreamBlock or
// more, and every device buffer (an A block, a part's C and B: settings.part_columns changes the parts) within
// the device's allocation limit.
template <class T>
bool can_stream(const StreamCall<T>& call, const GridShape& shape, int64_t a_ld, int64_t c_ld, vkgemm_engine* engine,
                const Settings& settings);

// How it went: streamed, or computed the assembled way after a device step failed (`why`).
struct StreamOutcome {
  bool streamed = false;
  int products = 0;      // device products run (a part of a K block each)
  bool checked = false;  // judged on the host (and passed, where streamed)
  bool buffers_kept = false;  // every device buffer kept from an earlier call (kept_buffers.hpp)
  Received received;     // the other processes' pieces: read directly, or as messages
  std::string why;
  // Seconds the device part spent making its buffers, writing what no product runs beside (the first part's B
  // and C where beta reads it, A's first block), multiplying (submitting the products and waiting for them),
  // waiting for A's pieces, and reading C (VKGEMM_BLAS_VERBOSE=2's line). The later parts' B and C and A's
  // later blocks are written beside the products (beside_s); where a product had completed by the end of the
  // write beside it, the write was not hidden in part (at most all of it): not_hidden of them, not_hidden_s
  // their time, an upper bound.
  double buffers_s = 0, write_s = 0, multiply_s = 0, wait_s = 0, read_s = 0;
  double beside_s = 0, not_hidden_s = 0;
  int not_hidden = 0;
};

// The host buffers for the other processes' pieces (by grid column; none for this process's own), or an
// empty vector where the host has no memory for them.
template <class T>
std::vector<std::unique_ptr<T[]>> allocate_pieces(const StreamCall<T>& call, const GridShape& shape);

// Collective over the grid's row. `gemm` computes block by block where the device fails; settings.check
// judges the streamed result on the host (VKGEMM_BLAS_CHECK=1), recomputing it block by block where it fails.
template <class T>
StreamOutcome stream_product(const StreamCall<T>& call, const GridComm& grid, const GridShape& shape,
                             vkgemm_engine* engine, const Settings& settings, Gemm<T> gemm,
                             const std::vector<std::unique_ptr<T[]>>& pieces);

}  // namespace vkgemm::pblas
