// The GEMM the reference BLAS defines, strided-batched:
//   C_i = alpha * op(A_i) * op(B_i) + beta * C_i   for i in 0 .. batch-1,   op(X) = X or X^T,
// with op(A_i) m x k, op(B_i) k x n, C_i m x n, each matrix stored with its leading dimension in row-major
// or column-major order, and X_i starting stride_x elements after X_{i-1} (a stride of 0 broadcasts X).
//
// Checked as the reference BLAS (xGEMM's XERBLA) checks, each failure its own ErrorCode:
//   m, n, k, batch < 0              -> negative_dimension
//   lda < max(1, rows A must hold)  -> invalid_leading_dimension (likewise ldb, ldc)
//   a negative stride, or stride_c smaller than one C when batch > 1 (entries would overwrite each other)
//                                   -> invalid_stride
//   a buffer smaller than the matrices it must hold -> buffer_too_small
// Then, as the reference BLAS: m = 0, n = 0 or batch = 0 does nothing; alpha = 0 or k = 0 only scales C
// (A and B are not read); beta = 0 never reads C, so NaN or garbage in C does not reach the result.
#pragma once

#include <cstdint>
#include <optional>

#include "vkgemm/types.hpp"

namespace vkgemm {

enum class Op { n, t };                       // op(X) = X, or X^T
enum class Layout { row_major, col_major };

struct GemmDesc {
  DataType type = DataType::f32;  // A, B, C and the scalars (i32: alpha and beta must be integers)
  // C's type when it differs: f16 inputs take C of f32 (the default, default_output_type) or f16; the
  // other types only their own. The scalars are applied in C's precision (f32 for both f16 outputs).
  std::optional<DataType> c_type;
  Layout layout = Layout::row_major;
  Op op_a = Op::n;
  Op op_b = Op::n;
  int64_t m = 0, n = 0, k = 0;
  // Leading dimensions in elements: the distance between consecutive rows (row-major) or columns
  // (column-major) of the matrix as stored. 0 means the smallest valid value (tightly packed).
  int64_t lda = 0, ldb = 0, ldc = 0;
  double alpha = 1.0;
  double beta = 0.0;
  int64_t batch = 1;
  // Elements from one batch entry to the next; empty means packed back to back (ld times the stored
  // matrix's other dimension); 0 broadcasts one A or B to every entry (not allowed for C).
  std::optional<int64_t> stride_a, stride_b, stride_c;
};

// The stored shape of one operand, and the elements and bytes a whole batch of it spans.
struct OperandExtent {
  int64_t outer = 0;   // rows (row-major) or columns (column-major) of the matrix as stored
  int64_t inner = 0;   // the other dimension; ld must be at least max(1, inner)
  int64_t ld = 0;      // the leading dimension in effect (the given one, or inner when 0 was given)
  int64_t stride = 0;  // the batch stride in effect
  uint64_t elements = 0;  // from the first element of entry 0 to the last of entry batch-1, plus one
};

// Resolves defaults and checks every argument as described above; throws vkgemm::Error. `which` is
// 'A', 'B' or 'C'. The extents never exceed what the buffers must hold.
OperandExtent operand_extent(const GemmDesc& desc, char which);
void check_gemm(const GemmDesc& desc);
// C's element type: desc.c_type, else default_output_type(desc.type).
DataType output_type(const GemmDesc& desc) noexcept;

}  // namespace vkgemm
