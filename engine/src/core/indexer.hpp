// Where element (i, j) of op(A), op(B) or C lives in a full BLAS call's host memory (blas.hpp): one rule
// for the reference, the sampled check's witnesses and its row sums.
#pragma once

#include <cstdint>

#include "vkgemm/blas.hpp"

namespace vkgemm::detail {

struct Indexer {
  OperandExtent e;
  bool row_major = true;
  bool transposed = false;
  uint64_t operator()(int64_t batch, int64_t i, int64_t j) const {
    const int64_t r = transposed ? j : i, c = transposed ? i : j;  // (r, c) of the matrix as stored
    const int64_t outer = row_major ? r : c, inner = row_major ? c : r;
    return uint64_t(batch * e.stride + outer * e.ld + inner);
  }
  // Whether element (i, j + 1) sits next to (i, j) in memory: the rows of op(X) are contiguous.
  bool rows_contiguous() const { return row_major != transposed; }
};

inline Indexer indexer(const GemmDesc& d, char which) {
  Indexer x;
  x.e = operand_extent(d, which);
  x.row_major = d.layout == Layout::row_major;
  x.transposed = (which == 'A' && d.op_a == Op::t) || (which == 'B' && d.op_b == Op::t);
  return x;
}

}  // namespace vkgemm::detail
