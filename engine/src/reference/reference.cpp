// The CPU reference GEMM (double accumulation; long double for f64; wrap-around for int32), spread over
// every core by rows, and the comparison against it. See reference.hpp for the bound and why it holds.
#include "vkgemm/reference.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <thread>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include "vkgemm/error.hpp"
#include "core/element_access.hpp"
#include "reference/parallel.hpp"
#include "reference/tolerance.hpp"
#include "vkgemm/half.hpp"

namespace vkgemm {
namespace {

using detail::parallel_rows;

// What reference_float gathers beside C_ref, per element (each may be null): the worst-case bound's
// sum_p |a_p b_p| and the model's sums over the partial sums (tolerance.hpp's SumStats).
struct Gathered {
  double* abs_product = nullptr;
  double* energy = nullptr;
  double* drift = nullptr;
};

// A block of columns [j0, j0 + width) of C: `row` and Gathered's arrays start at column j0, `b` is that block
// of B packed (row stride width). Each element's terms are added in order of p whatever the block, so the
// sums do not depend on it.
struct Columns {
  uint64_t k, width;
};

// row(j) += sum_p a_p B(p, j), k outer and j inner so that B and the accumulators stream. long double (f64's)
// is x87 arithmetic, which does not vectorize and loads and stores each 10-byte accumulator once per term:
// four terms go in per load and store (the sum of those four first, then the accumulator: still far inside
// long double's precision for a double result).
template <typename T, typename Acc>
void accumulate_row(Acc* row, const T* a, const T* b, Columns c) {
  std::fill(row, row + c.width, Acc(0));
  uint64_t p = 0;
  if constexpr (std::is_same_v<Acc, long double>) {
    for (; p + 4 <= c.k; p += 4) {
      const Acc a0 = a[p], a1 = a[p + 1], a2 = a[p + 2], a3 = a[p + 3];
      const T *b0 = b + p * c.width, *b1 = b0 + c.width, *b2 = b1 + c.width, *b3 = b2 + c.width;
      for (uint64_t j = 0; j < c.width; ++j) {
        row[j] += (a0 * static_cast<Acc>(b0[j]) + a1 * static_cast<Acc>(b1[j])) +
                  (a2 * static_cast<Acc>(b2[j]) + a3 * static_cast<Acc>(b3[j]));
      }
    }
  }
  for (; p < c.k; ++p) {
    const Acc ap = static_cast<Acc>(a[p]);
    const T* brow = b + p * c.width;
    for (uint64_t j = 0; j < c.width; ++j) row[j] += ap * static_cast<Acc>(brow[j]);
  }
}

// What the bounds gather beside a row (tolerance.hpp's SumStats), into `row` (Gathered's arrays at this
// row's columns; abs_product, or energy and drift, null when not wanted): per element sum_p |a_p b_p|, and
// the sums over the partial sums s_p, which are taken in double, term by term, as the products are. With
// `sums` (double sums: the row's own, accumulate_row's for double) the partial sums are kept there, so one
// pass gives both where the model's sums are wanted; otherwise in `partial`.
template <typename T>
void gather_row(const T* a, const T* b, Columns c, Gathered row, double* sums, std::vector<double>& partial) {
  double *abs = row.abs_product, *energy = row.energy, *drift = row.drift;
  if (abs) std::fill(abs, abs + c.width, 0.0);
  if (energy) std::fill(energy, energy + c.width, 0.0), std::fill(drift, drift + c.width, 0.0);
  if (energy && !sums) partial.assign(c.width, 0.0), sums = partial.data();
  if (energy) std::fill(sums, sums + c.width, 0.0);
  for (uint64_t p = 0; p < c.k; ++p) {
    const auto ap = static_cast<double>(a[p]);
    const T* brow = b + p * c.width;
    if (abs) {
      const double abs_a = std::fabs(ap);
      for (uint64_t j = 0; j < c.width; ++j) abs[j] += abs_a * std::fabs(static_cast<double>(brow[j]));
    }
    if (energy) {
      for (uint64_t j = 0; j < c.width; ++j) {
        const double product = ap * static_cast<double>(brow[j]);
        sums[j] += product;
        detail::SumStats st{0.0, energy[j], drift[j]};
        st.add(product, sums[j]);
        energy[j] = st.energy;
        drift[j] = st.drift;
      }
    }
  }
}

// Row by row over every core, in blocks of columns narrow enough that a block of B (k x width) stays in a
// core's cache while every row of the core's range reads it: B comes from memory once a core, not once a
// row. Acc is double, or long double for f64.
template <typename T, typename Acc>
void reference_float(uint32_t m, uint32_t n, uint32_t k, const T* a, const T* b, Acc* c, Gathered g) {
  constexpr uint64_t kBlockBytes = 1024 * 1024;
  const uint64_t fit = kBlockBytes / (std::max<uint64_t>(k, 1) * sizeof(T));
  const uint64_t block = std::clamp<uint64_t>(fit / 64 * 64, 64, std::max<uint32_t>(n, 1));
  const bool stats = g.energy && g.drift;
  parallel_rows(m, uint64_t{m} * n * k, [&](uint32_t begin, uint32_t end) {
    std::vector<double> partial;
    std::vector<T> packed;  // the block of B, contiguous: strided, its rows would contend for cache sets
    for (uint64_t j0 = 0; j0 < n; j0 += block) {
      const Columns cols{k, std::min<uint64_t>(block, n - j0)};
      packed.resize(k * cols.width);
      for (uint64_t p = 0; p < k; ++p) std::copy_n(b + p * n + j0, cols.width, packed.data() + p * cols.width);
      for (uint64_t i = begin; i < end; ++i) {
        Acc* crow = c + i * n + j0;
        const auto at = [&](double* x, bool wanted) { return wanted ? x + i * n + j0 : nullptr; };
        const Gathered row{at(g.abs_product, g.abs_product), at(g.energy, stats), at(g.drift, stats)};
        const bool gather = row.abs_product || stats;
        if constexpr (std::is_same_v<Acc, double>) {
          if (stats) {
            gather_row(a + i * k, packed.data(), cols, row, crow, partial);
            continue;
          }
        }
        accumulate_row(crow, a + i * k, packed.data(), cols);
        if (gather) gather_row(a + i * k, packed.data(), cols, row, nullptr, partial);
      }
    }
  });
}

template <typename I>
void reference_int(uint32_t m, uint32_t n, uint32_t k, const I* a, const I* b, int32_t* c) {
  parallel_rows(m, uint64_t{m} * n * k, [&](uint32_t begin, uint32_t end) {
    std::vector<uint32_t> row(n);
    for (uint64_t i = begin; i < end; ++i) {
      std::fill(row.begin(), row.end(), 0u);
      for (uint64_t p = 0; p < k; ++p) {
        // Widened to int32 (i8 sign-extended, u8 zero-extended) as the shaders do; wraps like the GPU.
        const auto aip = static_cast<uint32_t>(static_cast<int32_t>(a[i * k + p]));
        for (uint64_t j = 0; j < n; ++j) row[j] += aip * static_cast<uint32_t>(static_cast<int32_t>(b[p * n + j]));
      }
      std::memcpy(&c[i * n], row.data(), n * sizeof(int32_t));
    }
  });
}

template <typename T>
double frobenius(const T* x, uint64_t count) {
  double s = 0.0;
  for (uint64_t i = 0; i < count; ++i) {
    const auto v = static_cast<double>(x[i]);
    if (detail::counts_in_norm(v)) s += v * v;
  }
  return std::sqrt(s);
}

// f16 and bf16 matrices as floats (exact).
std::vector<float> widen(DataType type, const void* h, uint64_t count) {
  std::vector<float> out(count);
  for (uint64_t i = 0; i < count; ++i) out[i] = static_cast<float>(detail::load_element(type, h, i));
  return out;
}

// The integer reference of any integer input type, C int32.
void reference_any_int(DataType type, uint32_t m, uint32_t n, uint32_t k, const void* a, const void* b, int32_t* c) {
  if (type == DataType::i8) return reference_int(m, n, k, static_cast<const int8_t*>(a), static_cast<const int8_t*>(b), c);
  if (type == DataType::u8) {
    return reference_int(m, n, k, static_cast<const uint8_t*>(a), static_cast<const uint8_t*>(b), c);
  }
  reference_int(m, n, k, static_cast<const int32_t*>(a), static_cast<const int32_t*>(b), c);
}

void check_types(DataType input, DataType output) {
  // A dequantizing product (i8 or u8 into float C) is judged with its epilogue, by the GemmDesc reference.
  if (!output_allowed(input, output) || (is_integer(input) && !is_integer(output))) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("reference: inputs of {} cannot give a result of {} (f16 inputs give f32 or f16, bf16 f32 "
                            "or bf16, i8 and u8 i32; other types their own)", to_string(input), to_string(output)));
  }
}

}  // namespace

double unit_roundoff(DataType type) noexcept {
  switch (type) {
    case DataType::f32: return std::ldexp(1.0, -24);
    case DataType::f64: return std::ldexp(1.0, -53);
    case DataType::f16: return std::ldexp(1.0, -11);
    case DataType::bf16: return std::ldexp(1.0, -8);
    case DataType::i32: case DataType::i8: case DataType::u8: return 0.0;
  }
  return 0.0;
}

double error_bound(DataType type, uint32_t k) noexcept {
  return 2.0 * static_cast<double>(std::max<uint32_t>(k, 1)) * unit_roundoff(type);
}

double error_bound(DataType input, DataType output, uint32_t k, bool f16_accumulate) noexcept {
  if (!is_half_width_float(input)) return error_bound(input, k);
  if (f16_accumulate) return error_bound(DataType::f16, k);
  // Products of two 16-bit floats are exact in fp32; the sums are fp32; then one rounding to a 16-bit C.
  return error_bound(DataType::f32, k) + (output == input ? unit_roundoff(input) : 0.0);
}

void reference_gemm(DataType type, uint32_t m, uint32_t n, uint32_t k, const void* a, const void* b, void* c,
                    std::vector<double>* abs_product) {
  const uint64_t count = uint64_t{m} * n;
  double* abs = nullptr;
  if (abs_product) {
    abs_product->assign(is_integer(type) ? 0 : count, 0.0);
    abs = is_integer(type) ? nullptr : abs_product->data();
  }
  const Gathered g{abs};
  switch (type) {
    case DataType::f32: {
      std::vector<double> ref(count);
      reference_float(m, n, k, static_cast<const float*>(a), static_cast<const float*>(b), ref.data(), g);
      for (uint64_t i = 0; i < count; ++i) static_cast<float*>(c)[i] = static_cast<float>(ref[i]);
      break;
    }
    case DataType::f64: {
      std::vector<long double> ref(count);
      reference_float(m, n, k, static_cast<const double*>(a), static_cast<const double*>(b), ref.data(), g);
      for (uint64_t i = 0; i < count; ++i) static_cast<double*>(c)[i] = static_cast<double>(ref[i]);
      break;
    }
    case DataType::i32: case DataType::i8: case DataType::u8:
      reference_any_int(type, m, n, k, a, b, static_cast<int32_t*>(c));
      break;
    case DataType::f16: case DataType::bf16: {
      std::vector<double> ref(count);
      const auto wa = widen(type, a, uint64_t{m} * k), wb = widen(type, b, uint64_t{k} * n);
      reference_float(m, n, k, wa.data(), wb.data(), ref.data(), g);
      for (uint64_t i = 0; i < count; ++i) detail::store_element(type, c, i, ref[i]);
      break;
    }
  }
}

void reference_gemm(DataType input, DataType output, uint32_t m, uint32_t n, uint32_t k, const void* a,
                    const void* b, void* c) {
  check_types(input, output);
  if (!is_half_width_float(input) || output == input) return reference_gemm(input, m, n, k, a, b, c);
  std::vector<double> ref(uint64_t{m} * n);
  const auto wa = widen(input, a, uint64_t{m} * k), wb = widen(input, b, uint64_t{k} * n);
  reference_float(m, n, k, wa.data(), wb.data(), ref.data(), Gathered{});
  for (uint64_t i = 0; i < ref.size(); ++i) static_cast<float*>(c)[i] = static_cast<float>(ref[i]);
}

ReferenceProduct::ReferenceProduct(DataType type, uint32_t m, uint32_t n, uint32_t k, const void* a, const void* b)
    : ReferenceProduct(type, default_output_type(type), m, n, k, a, b) {}

ReferenceProduct::ReferenceProduct(DataType input, DataType output, uint32_t m, uint32_t n, uint32_t k, const void* a,
                                   const void* b, const CompareOptions& options)
    : type_(input), output_(output), m_(m), n_(n), k_(k), options_(options) {
  check_types(input, output);
  if (options.f16_accumulate && (input != DataType::f16 || output != DataType::f16)) {
    throw Error(ErrorCode::invalid_argument, "reference: f16 accumulation is for f16 inputs and an f16 result");
  }
  const uint64_t count = uint64_t{m} * n;
  value_.resize(count);
  if (is_integer(input)) {
    std::vector<int32_t> ref(count);
    reference_any_int(input, m, n, k, a, b, ref.data());
    std::copy(ref.begin(), ref.end(), value_.begin());
    return;
  }
  abs_product_.resize(count);
  if (options.random_inputs) {
    energy_.resize(count);
    drift_.resize(count);
  }
  const Gathered g{abs_product_.data(), energy_.empty() ? nullptr : energy_.data(),
                   drift_.empty() ? nullptr : drift_.data()};
  switch (input) {
    case DataType::f16: case DataType::bf16: {
      const auto wa = widen(input, a, uint64_t{m} * k), wb = widen(input, b, uint64_t{k} * n);
      std::vector<double> ref(count);
      reference_float(m, n, k, wa.data(), wb.data(), ref.data(), g);
      std::copy(ref.begin(), ref.end(), value_.begin());
      scale_ = frobenius(wa.data(), wa.size()) * frobenius(wb.data(), wb.size());
      break;
    }
    case DataType::f32: {
      std::vector<double> ref(count);
      reference_float(m, n, k, static_cast<const float*>(a), static_cast<const float*>(b), ref.data(), g);
      std::copy(ref.begin(), ref.end(), value_.begin());
      scale_ = frobenius(static_cast<const float*>(a), uint64_t{m} * k) *
               frobenius(static_cast<const float*>(b), uint64_t{k} * n);
      break;
    }
    case DataType::f64:
      reference_float(m, n, k, static_cast<const double*>(a), static_cast<const double*>(b), value_.data(), g);
      scale_ = frobenius(static_cast<const double*>(a), uint64_t{m} * k) *
               frobenius(static_cast<const double*>(b), uint64_t{k} * n);
      break;
    case DataType::i32: case DataType::i8: case DataType::u8:
      break;
  }
}

Comparison ReferenceProduct::compare(const void* c_gpu) const {
  // Each row range tallies on its own; the tallies are merged in row order, so first_bad is the first.
  struct Tally {
    uint64_t bad = 0, first_bad = 0;
    double worst = 0.0;
    long double diff2 = 0.0L;
    detail::ModelSums model;
  };
  const bool exact = is_integer(type_);
  const detail::Tolerance tolerance(type_, output_, k_, 0, options_);
  const unsigned parts = std::max(1u, std::min(std::thread::hardware_concurrency(), m_));
  std::vector<Tally> tallies(parts);
  const uint32_t per = (m_ + parts - 1) / parts;
  parallel_rows(m_, uint64_t{m_} * n_ * 64, [&](uint32_t begin, uint32_t end) {
    Tally& t = tallies[begin / per];
    for (uint64_t i = uint64_t{begin} * n_; i < uint64_t{end} * n_; ++i) {
      const double got = detail::load_element(output_, c_gpu, i);
      const long double diff = std::fabs(static_cast<long double>(got) - value_[i]);
      double ratio = 0.0;
      if (exact) {
        ratio = diff != 0.0L ? std::numeric_limits<double>::infinity() : 0.0;
      } else if (const auto nf = detail::judge_non_finite(output_, static_cast<double>(value_[i]), got);
                 nf != detail::NonFinite::finite) {
        if (nf == detail::NonFinite::differs && t.bad++ == 0) t.first_bad = i;
        if (nf == detail::NonFinite::differs) t.worst = std::numeric_limits<double>::infinity();
        continue;  // judged by its class alone, outside the normwise error
      } else {
        const detail::SumStats stats{abs_product_[i], energy_.empty() ? 0.0 : energy_[i],
                                     drift_.empty() ? 0.0 : drift_[i]};
        const auto ref = static_cast<double>(value_[i]);
        const detail::ElementTerms terms{1.0, 0.0, 0.0, ref, ref};
        tolerance.accumulate(t.model, stats, terms);
        if (!std::isfinite(got)) {
          ratio = std::numeric_limits<double>::infinity();
        } else if (diff > 0.0L) {
          const double allowed = tolerance.allowed(stats, terms);
          ratio = allowed > 0.0 ? static_cast<double>(diff) / allowed : std::numeric_limits<double>::infinity();
        }
      }
      if (ratio > 1.0 && t.bad++ == 0) t.first_bad = i;
      t.worst = std::max(t.worst, ratio);
      t.diff2 += std::isfinite(got) ? diff * diff : std::numeric_limits<long double>::infinity();
    }
  }, per);
  Comparison out;
  out.bound = tolerance.gamma();
  long double diff2 = 0.0L;
  detail::ModelSums model;
  for (const Tally& t : tallies) {
    if (t.bad && out.bad_elements == 0) out.first_bad = t.first_bad;
    out.bad_elements += t.bad;
    out.worst_element_ratio = std::max(out.worst_element_ratio, t.worst);
    diff2 += t.diff2;
    model.merge(t.model);
  }
  if (exact) {
    out.passed = out.bad_elements == 0;
    return out;
  }
  // The absolute allowance (f16 results) over all elements comes off the norm of the difference.
  const double slack = tolerance.absolute() * std::sqrt(static_cast<double>(uint64_t{m_} * n_));
  const double norm = std::max(0.0, static_cast<double>(std::sqrt(diff2)) - slack);
  out.normwise_error = scale_ > 0.0 ? norm / scale_ : norm;
  out.normwise_model_ratio = tolerance.normwise_model_ratio(model, static_cast<double>(std::sqrt(diff2)));
  out.passed = out.bad_elements == 0 && out.normwise_error <= out.bound && out.normwise_model_ratio <= 1.0;
  return out;
}

Comparison compare_with_reference(DataType type, uint32_t m, uint32_t n, uint32_t k, const void* a, const void* b,
                                  const void* c_gpu) {
  return ReferenceProduct(type, m, n, k, a, b).compare(c_gpu);
}

Comparison compare_with_reference(DataType input, DataType output, uint32_t m, uint32_t n, uint32_t k, const void* a,
                                  const void* b, const void* c_gpu, const CompareOptions& options) {
  return ReferenceProduct(input, output, m, n, k, a, b, options).compare(c_gpu);
}

namespace {

// The sampled check's account (reference.hpp, check_sampled), after the comparison's own words.
std::string sampled_summary(const Comparison::Sampled& s) {
  auto out = fmt::format("; sampled (seed {}): {} witnesses of {} elements, one in every {}x{} tile of C; "
                         "row sums against {} random vectors",
                         s.seed, s.witnesses, s.elements, s.tile_m, s.tile_n, s.vectors);
  out += s.row_sum_catch > 0.0 ? fmt::format(" at {:.3g} of their bound (one element off by more than {:.3g} fails "
                                             "its row)", s.row_sum_ratio, s.row_sum_catch)
                               : std::string(s.bad_rows ? "" : ", exact");
  if (s.bad_rows) out += fmt::format("; {} rows' sums fail, the first at index {}", s.bad_rows, s.first_bad_row);
  if (s.rows_unjudged) out += fmt::format("; {} rows with NaN or Inf left to the witnesses", s.rows_unjudged);
  return out;
}

std::string full_summary(const Comparison& c) {
  if (c.bound == 0.0 && c.emulation_moduli == 0) {  // int32
    return c.bad_elements == 0 ? "exact match"
                               : fmt::format("{} elements differ, the first at index {}", c.bad_elements, c.first_bad);
  }
  const double normwise_error = c.normwise_error, bound = c.bound, worst_element_ratio = c.worst_element_ratio;
  const double normwise_model_ratio = c.normwise_model_ratio;
  const uint64_t bad_elements = c.bad_elements, first_bad = c.first_bad;
  auto s = c.emulation_moduli ? fmt::format("the emulation's own bound ({} moduli): ", c.emulation_moduli) : std::string{};
  s += fmt::format("normwise error {:.3g} (bound {:.3g}), worst element at {:.3g} of its bound", normwise_error,
                   bound, worst_element_ratio);
  if (normwise_model_ratio > 0.0) s += fmt::format(", normwise at {:.3g} of the random-rounding model", normwise_model_ratio);
  if (bad_elements) s += fmt::format("; {} elements outside, the first at index {}", bad_elements, first_bad);
  return s;
}

}  // namespace

std::string Comparison::summary() const {
  return full_summary(*this) + (sampled ? sampled_summary(*sampled) : std::string{});
}

}  // namespace vkgemm
