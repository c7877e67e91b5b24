// One product with every operand 16-byte aligned inside its buffer, between guard regions: the matrix kernels'
// fast paths (16-byte loads, fragments loaded and stored straight) need it, where support.hpp's check_gemm_call
// places every operand 3 elements past a boundary and so keeps a kernel on its checked loads. Random elements
// where the call describes them, NaN in the gaps (and in C where beta is 0), the guards checked untouched, C
// compared with the CPU reference.
#pragma once

#include <random>

#include "support.hpp"

namespace vkgemm::test {

struct Size {
  int64_t m, n, k;
};

// The matrix suites' call: the smallest leading dimensions plus `pad`, batch entries `pad` apart (0: packed),
// `broadcast` 'A' or 'B' for a stride-0 operand (any other character: none).
struct CallShape {
  DataType input = DataType::f16, c_type = DataType::f32;
  Layout layout = Layout::row_major;
  Op op_a = Op::n, op_b = Op::n;
  int64_t pad = 0, batch = 1;
  char broadcast = ' ';
};
GemmDesc padded_desc(const CallShape& call, const Size& s, std::pair<double, double> scalars);

ProductCheck check_aligned_call(Engine& e, const GemmDesc& desc, const GemmOptions& options,
                                std::mt19937_64& rng);
ProductCheck check_aligned_call(const GemmDesc& desc, const GemmOptions& options, std::mt19937_64& rng);

}  // namespace vkgemm::test
