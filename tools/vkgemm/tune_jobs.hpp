// What `vkgemm tune` tunes: each row-major product it times, from --sizes × --ops or from a shape-set file
// (tools/shape-sets/*.json, as tools/gpu/sets/bench-vs-cublas.py reads them).
#pragma once

#include <string>
#include <vector>

#include "shapes.hpp"
#include "vkgemm/blas.hpp"
#include "vkgemm/types.hpp"

namespace vkgemm::cli {

struct TuneJob {
  Shape shape;
  Op op_a = Op::n, op_b = Op::n;
};

// "nn", "nt", "tn", "tt" (op(A) then op(B); t: stored transposed), comma-separated in one or more texts,
// or "all". Throws vkgemm::Error(invalid_argument) naming the text.
std::vector<std::pair<Op, Op>> parse_ops(const std::vector<std::string>& texts);

// Every shape with every op combination.
std::vector<TuneJob> jobs_of(const std::vector<Shape>& shapes, const std::vector<std::pair<Op, Op>>& ops);

// The cases of `type` in a shape-set file, as the kernel runs them: a column-major case is the row-major
// product of B and A (m and n swapped, each operand keeping its op); batched cases are left out (a tuning
// entry is for one product), and `skipped` counts them. Repeated products are tuned once. Throws
// vkgemm::Error (io_error, file_format) naming the file and what is wrong.
std::vector<TuneJob> jobs_from_shape_set(const std::string& path, DataType type, size_t& skipped);

std::string to_string(const TuneJob& job);  // "4096x4096x4096 nt"

}  // namespace vkgemm::cli
