// The BLAS argument checks (xGEMM's, one ErrorCode each) and the extent of every operand.
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "vkgemm/blas.hpp"

#include "engine/epilogue_check.hpp"
#include "kernels/check_count.hpp"
#include "vkgemm/error.hpp"

namespace vkgemm {
namespace {

constexpr int64_t kMaxDim = std::numeric_limits<uint32_t>::max();  // kernels index with 32-bit uints

const char* op_name(Op op) { return op == Op::n ? "N" : "T"; }
const char* layout_name(Layout l) { return l == Layout::row_major ? "row-major" : "column-major"; }

void check_size(const char* name, int64_t v) {
  if (v < 0) throw Error(ErrorCode::negative_dimension, fmt::format("gemm: {} = {} is negative", name, v));
  if (v > kMaxDim) {
    throw Error(ErrorCode::too_large, fmt::format("gemm: {} = {} exceeds 2^32-1, the largest the kernels index", name, v));
  }
}

}  // namespace

OperandExtent operand_extent(const GemmDesc& d, char which) {
  // Rows and columns of the matrix as stored (before op), then outer/inner by layout.
  int64_t rows = 0, cols = 0, ld = 0;
  std::optional<int64_t> stride;
  const char* ld_name = "";
  const char* stride_name = "";
  switch (which) {
    case 'A':
      rows = d.op_a == Op::n ? d.m : d.k, cols = d.op_a == Op::n ? d.k : d.m;
      ld = d.lda, stride = d.stride_a, ld_name = "lda", stride_name = "stride_a";
      break;
    case 'B':
      rows = d.op_b == Op::n ? d.k : d.n, cols = d.op_b == Op::n ? d.n : d.k;
      ld = d.ldb, stride = d.stride_b, ld_name = "ldb", stride_name = "stride_b";
      break;
    default:
      rows = d.m, cols = d.n, ld = d.ldc, stride = d.stride_c, ld_name = "ldc", stride_name = "stride_c";
      break;
  }
  OperandExtent e;
  const bool row_major = d.layout == Layout::row_major;
  e.outer = row_major ? rows : cols;
  e.inner = row_major ? cols : rows;
  const int64_t min_ld = std::max<int64_t>(1, e.inner);
  if (ld == 0) ld = min_ld;  // 0 asks for the tight value
  if (ld < min_ld) {
    const char* op = which == 'A' ? op_name(d.op_a) : which == 'B' ? op_name(d.op_b) : "N";
    throw Error(ErrorCode::invalid_leading_dimension,
                fmt::format("gemm: {} = {} is smaller than {}, the {} of the {} {}x{} {} (op {}) it must hold", ld_name,
                            ld, min_ld, row_major ? "columns" : "rows", layout_name(d.layout), rows, cols, which, op));
  }
  if (ld > kMaxDim) throw Error(ErrorCode::too_large, fmt::format("gemm: {} = {} exceeds 2^32-1", ld_name, ld));
  e.ld = ld;
  const uint64_t one = (e.outer == 0 || e.inner == 0) ? 0 : uint64_t(e.outer - 1) * uint64_t(ld) + uint64_t(e.inner);
  if (!stride && e.outer > 0 && uint64_t(ld) > kMaxDim / uint64_t(e.outer)) {  // before the product wraps
    throw Error(ErrorCode::too_large, fmt::format("gemm: one {} spans {} x {} elements, more than 2^32-1", which,
                                                  e.outer, ld));
  }
  e.stride = stride ? *stride : static_cast<int64_t>(uint64_t(ld) * uint64_t(e.outer));
  if (e.stride < 0) {
    throw Error(ErrorCode::invalid_stride, fmt::format("gemm: {} = {} is negative", stride_name, e.stride));
  }
  if (e.stride > kMaxDim) {
    throw Error(ErrorCode::too_large, fmt::format("gemm: {} = {} exceeds 2^32-1", stride_name, e.stride));
  }
  if (which == 'C' && d.batch > 1 && uint64_t(e.stride) < one) {
    throw Error(ErrorCode::invalid_stride,
                fmt::format("gemm: stride_c = {} is smaller than one C ({} elements with ldc = {}): the {} batch "
                            "entries would write over each other",
                            e.stride, one, ld, d.batch));
  }
  // Both factors are below 2^32, so the sum stays below 2^64.
  e.elements = (one == 0 || d.batch == 0) ? 0 : uint64_t(d.batch - 1) * uint64_t(e.stride) + one;
  return e;
}

DataType output_type(const GemmDesc& desc) noexcept { return desc.c_type.value_or(default_output_type(desc.type)); }

void check_gemm(const GemmDesc& d) {
  detail::count_check(detail::Checked::desc);
  if (d.op_a != Op::n && d.op_a != Op::t) throw Error(ErrorCode::invalid_argument, "gemm: op_a is neither N nor T");
  if (d.op_b != Op::n && d.op_b != Op::t) throw Error(ErrorCode::invalid_argument, "gemm: op_b is neither N nor T");
  if (d.layout != Layout::row_major && d.layout != Layout::col_major) {
    throw Error(ErrorCode::invalid_argument, "gemm: the layout is neither row-major nor column-major");
  }
  check_size("m", d.m);
  check_size("n", d.n);
  check_size("k", d.k);
  check_size("batch", d.batch);
  for (char which : {'A', 'B', 'C'}) (void)operand_extent(d, which);
  detail::check_epilogue(d);
  if (is_integer(d.type) && !dequantizes(d)) {  // a dequantizing product's scalars are fp32, as its C
    for (const auto& [name, v] : {std::pair{"alpha", d.alpha}, std::pair{"beta", d.beta}}) {
      if (v != std::floor(v) || v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) {
        throw Error(ErrorCode::invalid_argument,
                    fmt::format("gemm: {} = {} is not an int32 value, as {} products need", name, v,
                                to_string(d.type)));
      }
    }
  }
}

}  // namespace vkgemm
