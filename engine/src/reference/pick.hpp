// The elements of a full BLAS call's C that a comparison judges one by one: per batch entry, a set of rows
// and a set of columns of C, and every element where a picked row meets a picked column. The full
// comparison picks them all; the sampled check (sampled.cpp) picks its witnesses. Both judge what they pick
// by the same rule (reference_blas.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "ozaki/bound.hpp"
#include "vkgemm/blas.hpp"
#include "vkgemm/reference.hpp"

namespace vkgemm::detail {

struct Pick {
  std::vector<std::vector<int64_t>> rows, cols;  // per batch entry, ascending

  static Pick every(const GemmDesc& d) {
    Pick p;
    p.rows.resize(size_t(d.batch)), p.cols.resize(size_t(d.batch));
    for (int64_t t = 0; t < d.batch; ++t) {
      for (int64_t i = 0; i < d.m; ++i) p.rows[size_t(t)].push_back(i);
      for (int64_t j = 0; j < d.n; ++j) p.cols[size_t(t)].push_back(j);
    }
    return p;
  }
  uint64_t row_count() const { return total(rows); }
  uint64_t col_count() const { return total(cols); }
  uint64_t element_count() const {
    uint64_t n = 0;
    for (size_t t = 0; t < rows.size(); ++t) n += uint64_t(rows[t].size()) * uint64_t(cols[t].size());
    return n;
  }
  // Every picked row of every entry in order: its entry, its row of C, where its first element and its
  // entry's first picked column stand among the picked ones.
  struct Row {
    int64_t t = 0, i = 0;
    uint64_t first_cell = 0, first_col = 0;
  };
  using Rows = std::vector<Row>;
  Rows flat_rows() const {
    Rows out;
    uint64_t cell = 0, col = 0;
    for (size_t t = 0; t < rows.size(); ++t) {
      for (const int64_t i : rows[t]) {
        out.push_back({int64_t(t), i, cell, col});
        cell += cols[t].size();
      }
      col += cols[t].size();
    }
    return out;
  }

 private:
  static uint64_t total(const std::vector<std::vector<int64_t>>& lines) {
    uint64_t n = 0;
    for (const auto& l : lines) n += l.size();
    return n;
  }
};

// The picked elements against the reference (elementwise, and normwise over them); bad_elements and
// first_bad name C's span. The caller adds the gaps and decides. norm_ab2, sum over entries of ||A_t||_F^2
// ||B_t||_F^2 of the finite elements, where the caller has it (else it is measured).
// `bias`: the epilogue's bias vector, where desc's epilogue has one. `emulation`: the emulation's own bound
// judges each element instead of the native kernel's (CompareOptions::emulation_moduli; null: the native).
Comparison judge_picked(const GemmDesc& d, const void* a, const void* b, const void* c_in, const void* c_gpu,
                        const CompareOptions& options, const Pick& pick, std::optional<double> norm_ab2 = {},
                        const void* bias = nullptr, const ozaki::EmulationBound* emulation = nullptr);
// The emulation's bound where options.emulation_moduli asks for it and the inputs are covered (else nullopt:
// the native kernel's bound). Throws vkgemm::Error(invalid_argument) for a type the emulation does not take.
std::optional<ozaki::EmulationBound> emulation_bound(const GemmDesc& d, const void* a, const void* b,
                                                     const CompareOptions& options);
// Every element of C's span outside the described matrices must equal c_in bitwise.
void judge_gaps(const GemmDesc& d, const void* c_in, const void* c_gpu, Comparison& out);
// passed: no bad element or row sum, and (float types) the normwise tests.
void decide(const GemmDesc& d, Comparison& out);

}  // namespace vkgemm::detail
