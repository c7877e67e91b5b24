// The two gathers of vkgemm's distributed GEMM: every process assembles, in global order, the whole K extent
// of the op(A) rows and op(B) columns its block of C needs, from the pieces its process row (for A) and
// process column (for B) hold: read directly from a process on this machine, else point-to-point messages on
// the grid's private communicator (messages.hpp); this process's own piece is copied into place.
#pragma once

#include <cstdint>

#include "pblas/block_cyclic.hpp"
#include "pblas/grid.hpp"

namespace vkgemm::pblas {

// How many peers' pieces a gather read directly, and how many came as messages.
struct Received {
  int direct = 0, messages = 0;
};

// A's gather along the process row: `local` holds this process's rows x local_extent(k_axis, my_col) piece
// (column-major, leading dimension ld); on return `full` holds rows x k_axis.n, leading dimension rows, each
// column at its global index. k_axis: the columns' distribution over the grid's columns.
// `direct`: pieces on this machine may be read directly (messages.hpp).
template <class T>
Received gather_columns(const GridComm& grid, const GridShape& shape, const Axis& k_axis, int64_t rows, const T* local,
                    int64_t ld, T* full, bool direct);

// B's gather along the process column: `local` holds this process's local_extent(k_axis, my_row) x cols piece;
// on return `full` holds k_axis.n x cols, leading dimension k_axis.n, each row at its global index.
template <class T>
Received gather_rows(const GridComm& grid, const GridShape& shape, const Axis& k_axis, int64_t cols, const T* local,
                 int64_t ld, T* full, bool direct);

}  // namespace vkgemm::pblas
