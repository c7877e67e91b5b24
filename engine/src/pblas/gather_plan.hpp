// Which P?GEMM calls vkgemm's distributed GEMM takes, and how: the rule, pure arithmetic on the call's
// replicated arguments (every process of the grid decides alike), checked by the core tests.
//
// The algorithm: each process gathers the op(A) rows of its block of C with the whole K extent (from its
// process row) and the op(B) columns of its block with the whole K extent (from its process column), in
// global order, then computes its block of C as one local GEMM through vkgemm's drop-in BLAS: one product a
// process, its C crossing the bus once, where ScaLAPACK's PDGEMM calls one local GEMM a K step (each moving
// C) and packs every panel on one core. It costs memory: each process holds its rows of A and its columns
// of B whole (P or Q times its share of them).
//
// Taken: op(A) = A and op(B) = B; descriptors of type 1 (BLOCK_CYCLIC_2D) or 2 (with first blocks of their own
// size, IMB and INB); all three on one context; sub(A)'s rows laid out as sub(C)'s rows and sub(B)'s columns as
// sub(C)'s columns (the same blocks on the same processes; any offsets IA, JA, ...); something to multiply
// (M, N, K > 0, alpha != 0). Everything else goes to ScaLAPACK's own P?GEMM, which also reports illegal
// arguments: a call this rule cannot read is never taken.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>

#include "pblas/block_cyclic.hpp"

namespace vkgemm::pblas {

// A ScaLAPACK array descriptor, read: DTYPE, CTXT, M, N, [IMB, INB,] MB, NB, RSRC, CSRC, LLD.
struct Descriptor {
  int type = 0;
  int context = 0;
  int64_t m = 0, n = 0;
  int64_t first_rows = 0, first_cols = 0;  // IMB, INB (MB, NB for type 1)
  int64_t mb = 0, nb = 0;
  int rsrc = 0, csrc = 0;
  int64_t lld = 0;
};

// A type 1 descriptor (9 integers) or type 2 (11); nothing for any other type.
std::optional<Descriptor> read_descriptor(const int* desc);

// One operand's place: the whole matrix's row and column axes, the submatrix's first row and column (0-based),
// and the submatrix's own axes (sub_axis of the whole).
struct Operand {
  Axis whole_rows, whole_cols;
  int64_t row0 = 0, col0 = 0;
  Axis rows, cols;
  int64_t lld = 0;
  // Where the submatrix starts in process (r, c)'s local array, and its local extent there.
  int64_t local_offset(int r, int c) const;
  int64_t local_rows(int r) const { return local_extent(rows, r); }
  int64_t local_cols(int c) const { return local_extent(cols, c); }
};

struct GatherPlan {
  Operand a, b, c;
  int64_t m = 0, n = 0, k = 0;
  int context = 0;
};

// A call's arguments as P?GEMM receives them (IA, JA, ... 1-based).
struct PgemmCall {
  char transa = 'N', transb = 'N';
  int64_t m = 0, n = 0, k = 0;
  bool alpha_zero = false;
  int64_t ia = 1, ja = 1, ib = 1, jb = 1, ic = 1, jc = 1;
  const int* desca = nullptr;
  const int* descb = nullptr;
  const int* descc = nullptr;
};

// The plan on a grid of `rows` x `cols` processes, or why the call goes to ScaLAPACK's own (one phrase).
std::variant<GatherPlan, std::string> plan_gather(const PgemmCall& call, int rows, int cols);

}  // namespace vkgemm::pblas
