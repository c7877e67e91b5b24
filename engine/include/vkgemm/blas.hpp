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
#include <string_view>

#include "vkgemm/types.hpp"

namespace vkgemm {

struct GemmDesc;

enum class Op { n, t };                       // op(X) = X, or X^T
enum class Layout { row_major, col_major };

// What a fused epilogue applies to each element of C after x = alpha * op(A) op(B) + beta * C, in the sums'
// precision (fp32 for f16 and bf16 inputs, f64 for f64) and before the store's conversion to C's type:
//   y = activation(x + bias),  one store, no second pass through memory.
// Float C only (f32, f64, f16, bf16); the transcendental activations (GELU, SiLU, sigmoid, tanh) not on f64,
// whose shaders have no double exp. Refused at the door otherwise, naming the argument
// (docs/design/epilogue.md).
// Each activation and its formula: vkgemm/names.hpp.
enum class Activation : uint8_t { VKGEMM_ACTIVATIONS(VKGEMM_NAMES_ENUMERATOR) };
// The bias vector's broadcast, in C's logical (m x n) shape whatever the layout: per_column adds bias[j] to
// every element of column j (n values: a network layer with one row per sample), per_row adds bias[i] to
// row i (m values). Every batch entry adds the same vector.
enum class BiasAxis : uint8_t { VKGEMM_BIAS_AXES(VKGEMM_NAMES_ENUMERATOR) };
// The dequantization of an int8 product (i8 or u8 A and B, C of f32 or f16: GemmDesc::c_type): its exact
// integer sums s times a scale before anything else, y = activation(alpha * scale * s + beta * C + bias):
// per_tensor, scale = tensor_scale; per_column, scale = scale[j] * tensor_scale, with scale[j] n f32 values
// (a quantized layer's per-output-channel weight scales; tensor_scale its input's scale). none: scale 1
// (the sums converted). The per-column scales lead the epilogue's vector operand (below).
enum class ScaleAxis : uint8_t { VKGEMM_SCALE_AXES(VKGEMM_NAMES_ENUMERATOR) };

// Its numbers are doubles, as alpha and beta are: the host rounds each once to the epilogue's precision (the
// sums'), so an f64 product's leaky ReLU and clamp use 0.7 itself, not the float nearest it.
struct Epilogue {
  BiasAxis bias = BiasAxis::none;
  DataType bias_type = DataType::f32;  // f32, or C's type; its buffer is the call's fourth operand
  Activation activation = Activation::none;
  double slope = 0.01;  // leaky_relu: the negative side's slope
  // clamp: both bounds, lo <= hi. No default: a clamp without one is refused at the door, naming it (a
  // default of 0 would turn every element of C into 0).
  std::optional<double> lo, hi;
  ScaleAxis scale = ScaleAxis::none;  // int8 products into float C only
  double tensor_scale = 1.0;          // per_tensor's scale, and the factor of every per_column scale
  bool active() const noexcept {
    return bias != BiasAxis::none || activation != Activation::none || scale != ScaleAxis::none;
  }
  friend bool operator==(const Epilogue&, const Epilogue&) = default;
};
std::string_view to_string(Activation activation) noexcept;  // "relu", "gelu-tanh", ...
std::optional<Activation> parse_activation(std::string_view name) noexcept;
std::string_view to_string(BiasAxis axis) noexcept;   // "none", "per-column", "per-row"
std::string_view to_string(ScaleAxis axis) noexcept;  // "none", "per-tensor", "per-column"
// The bias's length: n for per_column, m for per_row, 0 without a bias.
int64_t bias_length(const GemmDesc& desc) noexcept;
// The epilogue's vector operand (the call's fourth: Engine::gemm's `bias`, GemmPlan::record's) holds the
// per_column scales first, scale_length(desc) f32 values (n, or 0 without them), then the bias at byte
// bias_byte_offset(desc) = 4 * scale_length(desc): one buffer of a layer's constants.
int64_t scale_length(const GemmDesc& desc) noexcept;
uint64_t bias_byte_offset(const GemmDesc& desc) noexcept;
// Whether desc is a dequantizing product: i8 or u8 A and B into float C (f32 or f16).
bool dequantizes(const GemmDesc& desc) noexcept;

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
  // A fused bias and activation (Epilogue above); none by default. A bias needs a buffer at the call (the
  // overloads that take one: GemmPlan::record, Engine::run, Engine::gemm).
  Epilogue epilogue;
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
