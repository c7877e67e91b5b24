// Freivalds's check of every row of a full BLAS call's C: the products of op(B), op(A), C and C0 with
// vectors, read once each in storage order, and the bound a right row's sum meets (reference.hpp).
#include "reference/row_sums.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <limits>
#include <thread>
#include <type_traits>
#include <vector>

#include "core/element_access.hpp"
#include "core/indexer.hpp"
#include "reference/parallel.hpp"
#include "reference/tolerance.hpp"
#include "reference/typed_load.hpp"

namespace vkgemm::detail {
namespace {

constexpr double kFailRightResult = 1e-12;  // the chance that some right row fails its sum, at most

// One batch entry's logical rows x cols matrix: op(A) (m x k), op(B) (k x n), C or C0 (m x n).
struct Operand {
  const void* data = nullptr;
  DataType type = DataType::f32;
  Indexer ix;
  int64_t t = 0, rows = 0, cols = 0;
};

// What one pass over an operand gathers per row r: prod[v][r] = sum_c M(r, c) x_v(c) for each vector, and
// for float types absw[w][r] = sum_c |M(r, c)| w(c) for each weight, sq[r] = sum_c M(r, c)^2,
// max[r] = max_c |M(r, c)|, bad[r]: the row holds NaN or Inf.
template <typename Acc>
struct RowProducts {
  std::vector<std::vector<Acc>> prod;
  std::vector<std::vector<double>> absw;
  std::vector<double> sq, max;
  std::vector<char> bad;
  RowProducts(size_t rows, size_t vectors, size_t weights)
      : prod(vectors, std::vector<Acc>(rows)), absw(weights, std::vector<double>(rows)), sq(rows), max(rows),
        bad(rows) {}
  void merge(const RowProducts& o) {  // a part over other columns of the same rows
    for (size_t v = 0; v < prod.size(); ++v)
      for (size_t r = 0; r < sq.size(); ++r) prod[v][r] += o.prod[v][r];
    for (size_t w = 0; w < absw.size(); ++w)
      for (size_t r = 0; r < sq.size(); ++r) absw[w][r] += o.absw[w][r];
    for (size_t r = 0; r < sq.size(); ++r) sq[r] += o.sq[r], max[r] = std::max(max[r], o.max[r]), bad[r] |= o.bad[r];
  }
};

// Element e of row r, at column c, into the row's tallies. Integers: the products alone, wrapping modulo
// 2^32. Non-finite elements flag their row and stay out of its norm.
template <typename Acc>
inline void add(RowProducts<Acc>& out, size_t r, size_t c, double e, const std::vector<std::vector<Acc>>& x,
                const std::vector<std::vector<double>>& w) {
  if constexpr (std::is_floating_point_v<Acc>) {
    if (!std::isfinite(e)) out.bad[r] = 1;
    const double ae = std::fabs(e);
    for (size_t v = 0; v < x.size(); ++v) out.prod[v][r] += static_cast<Acc>(e) * x[v][c];
    for (size_t k = 0; k < w.size(); ++k) out.absw[k][r] += ae * w[k][c];
    if (std::isfinite(e)) out.sq[r] += e * e;
    out.max[r] = std::max(out.max[r], ae);
  } else {
    const auto u = static_cast<uint32_t>(static_cast<int32_t>(e));
    for (size_t v = 0; v < x.size(); ++v) out.prod[v][r] += u * x[v][c];
  }
}

// One row read along memory, its tallies kept in locals and stored once (through the RowProducts at each
// element, the compiler could keep none of them in registers: the pass took twice as long). Up to four
// vectors and four weights; more go element by element.
template <typename Acc, typename Load>
void tally_row(RowProducts<Acc>& out, size_t r, const Load& load, uint64_t base, int64_t cols,
               const std::vector<std::vector<Acc>>& x, const std::vector<std::vector<double>>& w) {
  constexpr size_t kMax = 4;
  const size_t nv = x.size(), nw = w.size();
  if (nv > kMax || nw > kMax) {
    for (int64_t c = 0; c < cols; ++c) add(out, r, size_t(c), load(base + uint64_t(c)), x, w);
    return;
  }
  const Acc* xv[kMax] = {};
  const double* wv[kMax] = {};
  for (size_t v = 0; v < nv; ++v) xv[v] = x[v].data();
  for (size_t k = 0; k < nw; ++k) wv[k] = w[k].data();
  Acc prod[kMax] = {};
  double absw[kMax] = {}, sq = 0.0, max = 0.0;
  bool bad = false;
  for (int64_t c = 0; c < cols; ++c) {
    const double e = load(base + uint64_t(c));
    if constexpr (std::is_floating_point_v<Acc>) {
      const double ae = std::fabs(e);
      bad |= !(ae <= std::numeric_limits<double>::max());  // NaN or an infinity
      for (size_t v = 0; v < nv; ++v) prod[v] += static_cast<Acc>(e) * xv[v][c];
      for (size_t k = 0; k < nw; ++k) absw[k] += ae * wv[k][c];
      sq += e * e;
      max = std::max(max, ae);
    } else {
      const auto u = static_cast<uint32_t>(static_cast<int32_t>(e));
      for (size_t v = 0; v < nv; ++v) prod[v] += u * xv[v][c];
    }
  }
  if (bad) {  // the row's norm counts its finite elements alone
    sq = 0.0;
    for (int64_t c = 0; c < cols; ++c)
      if (const double e = load(base + uint64_t(c)); std::isfinite(e)) sq += e * e;
  }
  for (size_t v = 0; v < nv; ++v) out.prod[v][r] = prod[v];
  for (size_t k = 0; k < nw; ++k) out.absw[k][r] = absw[k];
  out.sq[r] = sq, out.max[r] = max, out.bad[r] = bad;
}

// The pass over M in storage order on every core: by rows where its rows lie along memory, else by
// columns, each part with its own tallies, merged in order (so the sums do not depend on the cores).
// Either way the inner loop reads memory contiguously.
template <typename Acc>
RowProducts<Acc> multiply(const Operand& m, const std::vector<std::vector<Acc>>& x,
                          const std::vector<std::vector<double>>& w) {
  const auto rows = size_t(m.rows);
  const uint64_t work = uint64_t(m.rows) * uint64_t(m.cols) * (x.size() + w.size() + 1);
  RowProducts<Acc> out(rows, x.size(), w.size());
  if (m.rows == 0 || m.cols == 0) return out;
  if (m.ix.rows_contiguous()) {
    with_elements(m.type, m.data, [&](const auto& load) {
      parallel_rows(static_cast<uint32_t>(m.rows), work, [&](uint32_t begin, uint32_t end) {
        for (int64_t r = begin; r < end; ++r) tally_row(out, size_t(r), load, m.ix(m.t, r, 0), m.cols, x, w);
      });
    });
    return out;
  }
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const auto per = static_cast<uint32_t>(std::max<int64_t>(1, (m.cols + cores - 1) / cores));
  std::vector<RowProducts<Acc>> parts((size_t(m.cols) + per - 1) / per, RowProducts<Acc>(rows, x.size(), w.size()));
  with_elements(m.type, m.data, [&](const auto& load) {
    parallel_rows(static_cast<uint32_t>(m.cols), work, [&](uint32_t begin, uint32_t end) {
      RowProducts<Acc>& part = parts[begin / per];
      for (int64_t c = begin; c < end; ++c) {
        const uint64_t base = m.ix(m.t, 0, c);
        for (int64_t r = 0; r < m.rows; ++r) add(part, size_t(r), size_t(c), load(base + uint64_t(r)), x, w);
      }
    }, per);
  });
  for (const auto& p : parts) out.merge(p);
  return out;
}

Operand operand(const GemmDesc& d, const void* data, char which, int64_t t) {
  Operand o{data, which == 'C' ? output_type(d) : d.type, indexer(d, which), t, d.m, d.n};
  if (which == 'A') o.cols = d.k;
  if (which == 'B') o.rows = d.k;
  return o;
}

// Random signs (floats) or odd residues (integers), one vector of n per row sum.
template <typename Acc>
std::vector<std::vector<Acc>> draw(uint32_t vectors, int64_t n, std::mt19937_64& rng) {
  std::vector<std::vector<Acc>> x(vectors, std::vector<Acc>(size_t(n)));
  for (auto& v : x)
    for (auto& e : v) {
      if constexpr (std::is_floating_point_v<Acc>) e = (rng() & 1) ? Acc(1) : Acc(-1);
      else e = static_cast<Acc>(rng() | 1u);
    }
  return x;
}

void fail_row(Comparison::Sampled& account, uint64_t at) {
  if (account.bad_rows++ == 0 || at < account.first_bad_row) account.first_bad_row = at;
}

}  // namespace

namespace {

// The largest finite value of C's type: a row whose reference may reach it may rightly hold an infinity.
double largest(DataType type) {
  switch (type) {
    case DataType::f16: return 65504.0;
    case DataType::bf16: return 3.3895313892515355e38;
    case DataType::f32: return std::numeric_limits<float>::max();
    default: return std::numeric_limits<double>::max();
  }
}

// The passes of one batch entry's float row sums: op(B) (against x, and |op(B)| against ones), op(A)
// (against op(B) x, and |op(A)| against |op(B)| 1, op(B)'s row norms and row maxima), C and C0.
template <typename Acc>
struct FloatPasses {
  std::optional<RowProducts<Acc>> a, c0;
  RowProducts<Acc> c;
  double b_norm = 0.0;  // ||op(B)||_F, of its finite elements
  bool b_bad = false;
};

template <typename Acc>
FloatPasses<Acc> float_passes(const GemmDesc& d, const void* a, const void* b, const void* c_in, const void* c_gpu,
                              int64_t t, const std::vector<std::vector<Acc>>& x) {
  const std::vector<std::vector<double>> ones(1, std::vector<double>(size_t(d.n), 1.0));
  FloatPasses<Acc> p{std::nullopt, std::nullopt, multiply(operand(d, c_gpu, 'C', t), x, ones)};
  if (d.alpha != 0.0 && d.k != 0) {
    RowProducts<Acc> pb = multiply(operand(d, b, 'B', t), x, ones);
    std::vector<double> row_norm(size_t(d.k));
    for (size_t p_ = 0; p_ < row_norm.size(); ++p_) {
      row_norm[p_] = std::sqrt(pb.sq[p_]);
      if (std::isfinite(pb.sq[p_])) p.b_norm += pb.sq[p_];
      if (pb.bad[p_]) p.b_bad = true;
    }
    p.b_norm = std::sqrt(p.b_norm);
    p.a = multiply(operand(d, a, 'A', t), pb.prod, {pb.absw[0], row_norm, pb.max});
  }
  if (d.beta != 0.0) p.c0 = multiply(operand(d, c_in, 'C', t), x, ones);
  return p;
}

// Row i's sums against their bound: the elements' allowed errors, summed with random signs (at most
// lambda sqrt(sum_j allowed_ij^2), by Hoeffding's inequality, with sum_j allowed_ij^2 bounded through
// Minkowski's inequality and ||(|A_i| |B|)|| <= min(||A_i|| ||B||_F, sum_p |a_ip| ||B_p||)), and the
// sums' own rounding in Acc (each a sum of n + k terms, then alpha, beta and the difference).
// With the emulation's bound, its rows' allowances (ozaki::EmulationBound::row_allowed) take the place of
// gamma's.
template <typename Acc>
void judge_float_rows(const GemmDesc& d, const FloatPasses<Acc>& p, int64_t t, const Tolerance& tol, double lambda,
                      const ozaki::EmulationBound* emulation, Comparison::Sampled& account) {
  const Indexer ic = indexer(d, 'C');
  const double own = 1.01 * double(d.n + d.k + 4) * static_cast<double>(std::numeric_limits<Acc>::epsilon()) / 2;
  const double alpha = std::fabs(d.alpha), beta = std::fabs(d.beta), gamma = tol.gamma();
  for (size_t i = 0; i < size_t(d.m); ++i) {
    const bool a_bad = p.a && (p.b_bad || p.a->bad[i]), c0_bad = p.c0 && p.c0->bad[i];
    const double reach = (p.a ? alpha * p.a->absw[2][i] : 0.0) + (p.c0 ? beta * p.c0->max[i] : 0.0);
    if (a_bad || c0_bad || (p.c.bad[i] && reach * (1.0 + 1e-6) >= largest(output_type(d)))) {
      ++account.rows_unjudged;  // NaN or Inf in, or an infinity that may be right: the witnesses judge
      continue;
    }
    const double ab = p.a ? std::min(std::sqrt(p.a->sq[i]) * p.b_norm, p.a->absw[1][i]) : 0.0;
    const double c0 = p.c0 ? std::sqrt(p.c0->sq[i]) : 0.0;
    const double errors = lambda * (emulation ? emulation->row_allowed(t, int64_t(i), ab, c0)
                                              : gamma * (alpha * ab + beta * c0) + tol.absolute() * std::sqrt(double(d.n)));
    const double rounding = own * ((p.a ? alpha * p.a->absw[0][i] : 0.0) + (p.c0 ? beta * p.c0->absw[0][i] : 0.0) +
                                   p.c.absw[0][i]);
    const double bound = errors + rounding;
    account.row_sum_catch = std::max(account.row_sum_catch, 2.0 * bound);
    for (size_t v = 0; v < p.c.prod.size(); ++v) {
      const Acc expected = (p.a ? static_cast<Acc>(d.alpha) * p.a->prod[v][i] : Acc(0)) +
                           (p.c0 ? static_cast<Acc>(d.beta) * p.c0->prod[v][i] : Acc(0));
      const auto diff = static_cast<double>(std::fabs(p.c.prod[v][i] - expected));
      const double ratio = p.c.bad[i] || !std::isfinite(diff) ? std::numeric_limits<double>::infinity()
                           : bound > 0.0                      ? diff / bound
                           : diff > 0.0                       ? std::numeric_limits<double>::infinity()
                                                              : 0.0;
      account.row_sum_ratio = std::max(account.row_sum_ratio, ratio);
      if (ratio > 1.0) {
        fail_row(account, ic(t, int64_t(i), 0));
        break;
      }
    }
  }
}

template <typename Acc>
double judge_float(const GemmDesc& d, const void* a, const void* b, const void* c_in, const void* c_gpu,
                   const CompareOptions& options, std::mt19937_64& rng, Comparison::Sampled& account,
                   const ozaki::EmulationBound* emulation) {
  // The worst-case allowance alone: a right result meets it whatever its inputs (the model's is smaller,
  // and only for random inputs).
  const Tolerance tol(d.type, output_type(d), uint64_t(d.k), 2, {.f16_accumulate = options.f16_accumulate}, d.alpha,
                      d.beta);
  const double sums = double(d.batch) * double(d.m) * account.vectors;
  const double lambda = std::sqrt(2.0 * std::log(2.0 * std::max(sums, 1.0) / kFailRightResult));
  double norm_ab2 = 0.0;
  for (int64_t t = 0; t < d.batch; ++t) {
    const auto x = draw<Acc>(account.vectors, d.n, rng);
    const FloatPasses<Acc> p = float_passes(d, a, b, c_in, c_gpu, t, x);
    if (p.a) {
      double na2 = 0.0;
      for (const double r : p.a->sq) na2 += r;
      norm_ab2 += na2 * p.b_norm * p.b_norm;
    }
    judge_float_rows(d, p, t, tol, lambda, emulation, account);
  }
  return norm_ab2;
}

// Integers: C x = alpha op(A) (op(B) x) + beta C0 x exactly, modulo 2^32 as the GPU wraps. With x odd, one
// wrong element changes its row's sum whatever its error.
void judge_int(const GemmDesc& d, const void* a, const void* b, const void* c_in, const void* c_gpu,
               std::mt19937_64& rng, Comparison::Sampled& account) {
  const Indexer ic = indexer(d, 'C');
  const auto alpha = static_cast<uint32_t>(static_cast<int32_t>(d.alpha));
  const auto beta = static_cast<uint32_t>(static_cast<int32_t>(d.beta));
  for (int64_t t = 0; t < d.batch; ++t) {
    const auto x = draw<uint32_t>(account.vectors, d.n, rng);
    const RowProducts<uint32_t> pc = multiply(operand(d, c_gpu, 'C', t), x, {});
    std::optional<RowProducts<uint32_t>> pa, p0;
    if (d.alpha != 0.0 && d.k != 0) pa = multiply(operand(d, a, 'A', t), multiply(operand(d, b, 'B', t), x, {}).prod, {});
    if (d.beta != 0.0) p0 = multiply(operand(d, c_in, 'C', t), x, {});
    for (size_t i = 0; i < size_t(d.m); ++i)
      for (size_t v = 0; v < x.size(); ++v) {
        const uint32_t expected = (pa ? alpha * pa->prod[v][i] : 0u) + (p0 ? beta * p0->prod[v][i] : 0u);
        if (pc.prod[v][i] != expected) {
          fail_row(account, ic(t, int64_t(i), 0));
          break;
        }
      }
  }
  account.row_sum_ratio = account.bad_rows ? std::numeric_limits<double>::infinity() : 0.0;
}

}  // namespace

double judge_row_sums(const GemmDesc& d, const void* a, const void* b, const void* c_in, const void* c_gpu,
                      const CompareOptions& options, std::mt19937_64& rng, Comparison::Sampled& account,
                      const ozaki::EmulationBound* emulation) {
  if (d.m == 0 || d.n == 0 || d.batch == 0) return 0.0;
  if (is_integer(d.type)) {
    judge_int(d, a, b, c_in, c_gpu, rng, account);
    return 0.0;
  }
  if (d.type == DataType::f64) return judge_float<long double>(d, a, b, c_in, c_gpu, options, rng, account, emulation);
  return judge_float<double>(d, a, b, c_in, c_gpu, options, rng, account, emulation);
}

}  // namespace vkgemm::detail
