#include "ozaki/model.hpp"


#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>

#include "ozaki/guard.hpp"
#include "vkgemm/error.hpp"
#include "vkgemm/reference.hpp"

namespace vkgemm::ozaki {
namespace {

// The exponent x of |v| = f 2^x, f in [0.5, 1); 0 for v = 0.
int exponent_of(double v) {
  int x = 0;
  (void)std::frexp(v, &x);
  return x;
}

// A subnormal matters when the scaling could round it to a nonzero integer: |v| 2^e >= 1/2 needs
// e >= 1022 (f64; 126 for f32), since |v| < 2^-1022. Below that it rounds to 0 whether a device flushes it or not.
int subnormal_matters_from(DataType type) { return type == DataType::f32 ? 126 : 1022; }

uint32_t reduce(int32_t v, uint32_t p) {
  const int64_t r = static_cast<int64_t>(v) % static_cast<int64_t>(p);
  return static_cast<uint32_t>(r < 0 ? r + p : r);
}

int32_t balanced(uint32_t r, uint32_t p) {
  return r >= (p + 1) / 2 ? static_cast<int32_t>(r) - static_cast<int32_t>(p) : static_cast<int32_t>(r);
}

// Element (r, c) of op(X) for batch entry `entry`, where X is the caller's operand as desc describes it.
struct OperandView {
  const std::byte* base;
  DataType type;
  Layout layout;
  bool transposed;
  int64_t ld, stride;

  double at(int64_t entry, int64_t r, int64_t c) const {
    if (transposed) std::swap(r, c);
    const int64_t index = entry * stride + (layout == Layout::row_major ? r * ld + c : c * ld + r);
    if (type == DataType::f32) {
      float v;
      std::memcpy(&v, base + index * 4, 4);
      return static_cast<double>(v);
    }
    double v;
    std::memcpy(&v, base + index * 8, 8);
    return v;
  }
};

OperandView view(const GemmDesc& desc, const void* data, char which) {
  const OperandExtent e = operand_extent(desc, which);
  const bool t = which == 'A' ? desc.op_a == Op::t : which == 'B' ? desc.op_b == Op::t : false;
  return {static_cast<const std::byte*>(data), desc.type, desc.layout, t, e.ld, e.stride};
}

// op(X) of one entry gathered into a dense rows x cols row-major matrix of doubles.
std::vector<double> gather(const OperandView& v, int64_t entry, uint32_t rows, uint32_t cols) {
  std::vector<double> out(static_cast<size_t>(rows) * cols);
  for (uint32_t r = 0; r < rows; ++r)
    for (uint32_t c = 0; c < cols; ++c) out[static_cast<size_t>(r) * cols + c] = v.at(entry, r, c);
  return out;
}

void store(std::byte* base, DataType type, int64_t index, double v) {
  if (type == DataType::f32) {
    const auto f = static_cast<float>(v);
    std::memcpy(base + index * 4, &f, 4);
  } else {
    std::memcpy(base + index * 8, &v, 8);
  }
}

bool reads_ab_for(const GemmDesc& desc) { return desc.alpha != 0.0 && desc.k != 0; }

uint32_t moduli_count(const ModelOptions& options, DataType type, uint64_t k) {
  return options.moduli != 0 ? options.moduli : default_moduli(type, k);
}

}  // namespace

bool subnormal(double v, DataType type) {
  const double smallest = type == DataType::f32 ? static_cast<double>(std::numeric_limits<float>::min())
                                                : std::numeric_limits<double>::min();
  return v != 0.0 && std::fabs(v) < smallest;
}

LineScale line_scale(double largest, bool non_finite, bool has_subnormal, int bits, DataType type, int test_bits) {
  LineScale s;
  s.exponent = largest == 0.0 || !std::isfinite(largest) ? 0 : bits - exponent_of(largest);
  s.covered = !non_finite && !(has_subnormal && s.exponent + test_bits >= subnormal_matters_from(type));
  return s;
}

int32_t balanced_residue(double v, uint32_t p) {
  const double magnitude = std::fabs(v);
  const double hi = std::floor(std::ldexp(magnitude, -32));  // exact: a power-of-two scaling and a floor
  const double lo = magnitude - std::ldexp(hi, 32);           // exact: the low 32 bits of the integer
  const uint32_t two32 = static_cast<uint32_t>((uint64_t{1} << 32) % p);
  const uint32_t r = (static_cast<uint32_t>(hi) % p * two32 + static_cast<uint32_t>(lo) % p) % p;
  return balanced(v < 0 && r != 0 ? p - r : r, p);
}

SplitSide split(std::span<const double> x, uint32_t rows, uint32_t cols, bool by_rows, int bits,
                const Moduli& moduli, DataType type, int test_bits) {
  const uint32_t lines = by_rows ? rows : cols, length = by_rows ? cols : rows;
  const auto index = [&](uint32_t line, uint32_t t) {
    return by_rows ? static_cast<size_t>(line) * cols + t : static_cast<size_t>(t) * cols + line;
  };
  const size_t plane = static_cast<size_t>(rows) * cols;
  SplitSide s;
  s.exponent.assign(lines, 0);
  s.planes.assign(plane * moduli.count, 0);
  s.magnitude.assign(plane, 0);
  s.stats.assign(lines, {});
  for (uint32_t line = 0; line < lines; ++line) {
    double largest = 0.0;
    bool has_subnormal = false, non_finite = false;
    for (uint32_t t = 0; t < length; ++t) {
      const double v = x[index(line, t)];
      non_finite = non_finite || !std::isfinite(v);
      has_subnormal = has_subnormal || subnormal(v, type);
      largest = std::max(largest, std::fabs(v));
    }
    const LineScale scale = line_scale(largest, non_finite, has_subnormal, bits, type, test_bits);
    const int32_t e = scale.exponent;
    s.exponent[line] = e;
    s.covered = s.covered && scale.covered;
    if (!s.covered) continue;
    LineStats& stats = s.stats[line];
    for (uint32_t t = 0; t < length; ++t) {
      const double exact = scale_back(x[index(line, t)], e);
      const double scaled = std::nearbyint(exact);
      stats.norm += std::fabs(exact);
      stats.inexact = stats.inexact || scaled != exact;
      const double magnitude = std::floor(std::ldexp(std::fabs(exact), OZAKI_MAGNITUDE_BITS - bits));
      s.magnitude[index(line, t)] = static_cast<int8_t>(magnitude);
      stats.levels.count(static_cast<uint32_t>(magnitude));
      for (uint32_t l = 0; l < moduli.count; ++l) {
        s.planes[l * plane + index(line, t)] = static_cast<int8_t>(balanced_residue(scaled, moduli.p[l]));
      }
    }
  }
  return s;
}

std::vector<int32_t> plane_products(const SplitSide& a, const SplitSide& b, uint32_t m, uint32_t n, uint32_t k,
                                    uint32_t count, uint32_t chunk_k) {
  const uint32_t chunks = k == 0 ? 1 : (k + chunk_k - 1) / chunk_k;
  const size_t mn = static_cast<size_t>(m) * n;
  std::vector<int32_t> out(mn * count * chunks, 0);
  for (uint32_t chunk = 0; chunk < chunks; ++chunk) {
    const uint32_t k0 = chunk * chunk_k, k1 = std::min(k, k0 + chunk_k);
    for (uint32_t l = 0; l < count; ++l) {
      const int8_t* pa = a.planes.data() + static_cast<size_t>(l) * m * k;
      const int8_t* pb = b.planes.data() + static_cast<size_t>(l) * k * n;
      int32_t* pc = out.data() + (static_cast<size_t>(chunk) * count + l) * mn;
      for (uint32_t i = 0; i < m; ++i)
        for (uint32_t j = 0; j < n; ++j) {
          uint32_t sum = 0;  // int32 wrapping, as the device's i8 product
          for (uint32_t p = k0; p < k1; ++p)
            sum += static_cast<uint32_t>(pa[static_cast<size_t>(i) * k + p] * pb[static_cast<size_t>(p) * n + j]);
          pc[static_cast<size_t>(i) * n + j] = static_cast<int32_t>(sum);
        }
    }
  }
  return out;
}

namespace {

// S_ij: the magnitude planes' product at (i, j), exact (each K chunk's int32 sum is: OZAKI_MAGNITUDE_BITS).
double magnitude_sum(const SplitSide& a, const SplitSide& b, uint32_t i, uint32_t j, uint32_t n, uint32_t k) {
  uint64_t sums = 0;
  for (uint32_t p = 0; p < k; ++p) {
    sums += static_cast<uint64_t>(a.magnitude[static_cast<size_t>(i) * k + p]) *
            static_cast<uint64_t>(b.magnitude[static_cast<size_t>(p) * n + j]);
  }
  return static_cast<double>(sums);
}

}  // namespace

bool span_guard(const SplitSide& a, const SplitSide& b, uint32_t m, uint32_t n, uint32_t k, double allowance,
                double* worst) {
  bool admitted = true;
  if (worst) *worst = 0.0;
  for (uint32_t i = 0; i < m; ++i)
    for (uint32_t j = 0; j < n; ++j) {
      const double s = magnitude_sum(a, b, i, j, n, k);
      admitted = admitted && guard_admits(a.stats[i], b.stats[j], k, s, allowance);
      if (worst) {
        const double t = guard_truncation(a.stats[i], b.stats[j], k);
        *worst = std::max(*worst, t == 0.0 ? 0.0 : s == 0.0 ? HUGE_VAL : t / (allowance * s));
      }
    }
  return admitted;
}

bool levels_admit(const SplitSide& a, const SplitSide& b, uint32_t m, uint32_t n, uint32_t k, double allowance) {
  for (uint32_t i = 0; i < m; ++i)
    for (uint32_t j = 0; j < n; ++j) {
      const double bound = level_bound(a.stats[i].levels, b.stats[j].levels, k);
      if (!guard_admits(a.stats[i], b.stats[j], k, bound, allowance)) return false;
    }
  return true;
}

uint32_t span_choice(const SplitSide& a, const SplitSide& b, uint32_t m, uint32_t n, uint32_t k, double allowance,
                     const Candidates& candidates) {
  uint32_t choice = 0;
  for (uint32_t i = 0; i < m; ++i)
    for (uint32_t j = 0; j < n; ++j) {
      const double s = magnitude_sum(a, b, i, j, n, k);
      choice = std::max(choice, guard_choice(a.stats[i], b.stats[j], k, s, allowance, candidates));
    }
  return choice;
}

double reconstruct(const std::array<uint32_t, kMaxModuli>& residues, const Moduli& moduli) {
  std::array<int32_t, kMaxModuli> digit{};
  for (uint32_t j = 0; j < moduli.count; ++j) {  // Garner: digit j from the residue and the digits below
    const int32_t p = static_cast<int32_t>(moduli.p[j]);
    int32_t below = 0;  // the digits below weighted by W_i inverse[j] mod p_j: one modulo a digit
    for (uint32_t i = 0; i < j; ++i) below += digit[i] * static_cast<int32_t>(moduli.scaled[j][i]);
    const int32_t value = static_cast<int32_t>(residues[j] * moduli.inverse[j]) - below;
    digit[j] = balanced(static_cast<uint32_t>((value % p + p) % p), moduli.p[j]);
  }
  // Three digits at a time make one exact int32 D_g = v_3g + p_3g (v_3g+1 + p_3g+1 v_3g+2), |D_g| <= R_g / 2
  // with R_g = p_3g p_3g+1 p_3g+2 < 2^24: C' = D_0 + R_0 (D_1 + R_1 (D_2 + ...)), a third of the steps.
  const uint32_t groups = (moduli.count + 2) / 3;
  std::array<int32_t, (kMaxModuli + 2) / 3> group{};
  for (uint32_t g = 0; g < groups; ++g) {
    for (uint32_t t = 3; t-- > 0;) {
      const uint32_t j = 3 * g + t;
      if (j < moduli.count) group[g] = digit[j] + static_cast<int32_t>(moduli.p[j]) * group[g];
    }
  }
  // Compensated Horner (Graillat, Langlois and Louvet): s carries the rounded value, c the rounding errors.
  // s R is split exactly without fma (Vulkan does not require fma to be fused, and lavapipe's is not):
  // Veltkamp's split makes s = hi + lo with hi of 26 bits and lo of 27, so hi R and lo R (R < 2^24) are exact;
  // Fast2Sum then adds them, and D_g, each error exact (|hi R| >= |lo R|; |s R| >= R >= 2 |D_g| when s != 0).
  double s = group[groups - 1], c = 0.0;
  for (uint32_t g = groups - 1; g-- > 0;) {
    const double p = static_cast<double>(moduli.p[3 * g]) * moduli.p[3 * g + 1] * moduli.p[3 * g + 2];
    const double d = group[g];
    const double gamma = s * 134217729.0;  // 2^27 + 1
    const double hi = gamma - (gamma - s);
    const double lo = s - hi;
    const double high = hi * p, low = lo * p;
    const double product = high + low;
    const double product_error = low - (product - high);
    const double sum = product + d;
    const double sum_error = d - (sum - product);
    c = c * p + (product_error + sum_error);
    s = sum;
  }
  return s + c;
}

double scale_back(double v, int32_t e) {
  const int32_t half = e / 2;
  return std::ldexp(std::ldexp(v, half), e - half);
}

bool model_product(std::span<const double> a, std::span<const double> b, std::span<double> c, uint32_t m,
                   uint32_t n, uint32_t k, double alpha, double beta, DataType type, const ModelOptions& options) {
  Moduli moduli = make_moduli(moduli_count(options, type, k));
  const ScaleBits bits = scale_bits(moduli, k);
  const SplitSide sa = split(a, m, k, true, bits.a, moduli, type);
  const SplitSide sb = split(b, k, n, false, bits.b, moduli, type);
  if (!sa.covered || !sb.covered) return false;
  const std::vector<int32_t> sums = plane_products(sa, sb, m, n, k, moduli.count, options.chunk_k);
  const uint32_t chunks = static_cast<uint32_t>(sums.size() / (static_cast<size_t>(m) * n * moduli.count));
  const size_t mn = static_cast<size_t>(m) * n;
  if (options.mutation == Mutation::wrong_weight) {
    const uint32_t last = moduli.count - 1;
    moduli.inverse[last] = (moduli.inverse[last] + 1) % moduli.p[last];
    scale_weights(moduli, last);
  }
  for (uint32_t i = 0; i < m; ++i)
    for (uint32_t j = 0; j < n; ++j) {
      std::array<uint32_t, kMaxModuli> residues{};
      const size_t at = static_cast<size_t>(i) * n + j;
      for (uint32_t l = 0; l < moduli.count; ++l) {
        if (options.mutation == Mutation::drop_modulus && l + 1 == moduli.count) continue;
        uint32_t r = 0;
        for (uint32_t chunk = 0; chunk < chunks; ++chunk) {
          if (options.mutation == Mutation::lose_chunk && chunks > 1 && chunk + 1 == chunks) continue;
          r = (r + reduce(sums[(static_cast<size_t>(chunk) * moduli.count + l) * mn + at], moduli.p[l])) %
              moduli.p[l];
        }
        residues[l] = r;
      }
      const int32_t off = options.mutation == Mutation::scale_off_by_one && i == 0 ? 1 : 0;
      const double product = scale_back(reconstruct(residues, moduli), -(sa.exponent[i] + sb.exponent[j] + off));
      double v = alpha * product;
      if (beta != 0.0) v = v + beta * c[at];
      c[at] = type == DataType::f32 ? static_cast<double>(static_cast<float>(v)) : v;
    }
  return true;
}

namespace {

bool model_gemm_once(const GemmDesc& desc, const void* a, const void* b, const void* c_in, void* c_out,
                     const ModelOptions& options) {
  const OperandExtent ce = operand_extent(desc, 'C');
  const size_t size = element_size(desc.type);
  std::memcpy(c_out, c_in, ce.elements * size);
  const auto m = static_cast<uint32_t>(desc.m), n = static_cast<uint32_t>(desc.n), k = static_cast<uint32_t>(desc.k);
  const OperandView va = view(desc, a, 'A'), vb = view(desc, b, 'B'), vc = view(desc, c_in, 'C');
  auto* out = static_cast<std::byte*>(c_out);
  bool covered = true;
  for (int64_t entry = 0; entry < desc.batch; ++entry) {
    std::vector<double> c(static_cast<size_t>(m) * n, 0.0);
    if (desc.beta != 0.0) c = gather(vc, entry, m, n);
    bool ok = true;
    if (reads_ab_for(desc)) {
      ok = model_product(gather(va, entry, m, k), gather(vb, entry, k, n), c, m, n, k, desc.alpha, desc.beta,
                         desc.type, options);
    } else {  // alpha = 0 or k = 0: C = beta C, A and B not read
      for (auto& v : c) v = desc.beta == 0.0 ? 0.0 : (desc.type == DataType::f32 ? static_cast<double>(static_cast<float>(desc.beta * v)) : desc.beta * v);
    }
    covered = covered && ok;
    if (!ok) continue;
    for (uint32_t i = 0; i < m; ++i)
      for (uint32_t j = 0; j < n; ++j) {
        const int64_t index = entry * vc.stride + (desc.layout == Layout::row_major ? i * vc.ld + j : j * vc.ld + i);
        store(out, desc.type, index, c[static_cast<size_t>(i) * n + j]);
      }
  }
  return covered;
}

// The device's first split and span guard over every batch entry (the flag and the choice are the call's): the
// candidate count that computes the call (none where an input is uncovered or no candidate is admitted), and
// which of the guard's passes decided the first count (guard.hpp: the later ones did not run).
struct Verdict {
  std::optional<uint32_t> moduli;
  GuardPass decided_by = GuardPass::magnitudes;
};
Verdict judge(const GemmDesc& desc, const void* a, const void* b, const ModelOptions& options) {
  const auto m = static_cast<uint32_t>(desc.m), n = static_cast<uint32_t>(desc.n), k = static_cast<uint32_t>(desc.k);
  Candidates candidates = candidate_moduli(desc.type, k, options.moduli);
  if (options.mutation == Mutation::first_count_only) candidates.count = 1;
  const Moduli moduli = make_moduli(candidates.moduli[0]);
  const ScaleBits bits = scale_bits(moduli, k), last = scale_bits(make_moduli(candidates.last()), k);
  const bool guard = options.mutation != Mutation::no_guard && guarded(desc.type, k, moduli.count);
  const uint32_t judged = options.mutation == Mutation::lenient_guard ? std::min(moduli.count + 1, kMaxModuli) : moduli.count;
  const double allowance = guard_allowance(desc.type, k, scale_bits(make_moduli(judged), k));
  const OperandView va = view(desc, a, 'A'), vb = view(desc, b, 'B');
  uint32_t choice = 0;
  bool levels = guard;
  Extremes rows, columns;
  for (int64_t entry = 0; entry < desc.batch; ++entry) {
    const SplitSide sa = split(gather(va, entry, m, k), m, k, true, bits.a, moduli, desc.type, last.a - bits.a);
    const SplitSide sb = split(gather(vb, entry, k, n), k, n, false, bits.b, moduli, desc.type, last.b - bits.b);
    if (!sa.covered || !sb.covered) return {};
    if (guard) choice = std::max(choice, span_choice(sa, sb, m, n, k, allowance, candidates));
    levels = levels && levels_admit(sa, sb, m, n, k, allowance);
    for (const LineStats& line : sa.stats) rows.take(line);
    for (const LineStats& line : sb.stats) columns.take(line);
  }
  const GuardPass decided_by = guard && extremes_admit(rows, columns, k, allowance) ? GuardPass::extremes
                               : levels                                             ? GuardPass::levels
                                                                                    : GuardPass::magnitudes;
  if (choice == candidates.count) return {std::nullopt, decided_by};
  return {candidates.moduli[choice], decided_by};
}

std::optional<uint32_t> choose_moduli(const GemmDesc& desc, const void* a, const void* b, const ModelOptions& options) {
  return judge(desc, a, b, options).moduli;
}

}  // namespace

bool model_gemm(const GemmDesc& desc, const void* a, const void* b, const void* c_in, void* c_out,
                const ModelOptions& options) {
  if (desc.type != DataType::f32 && desc.type != DataType::f64) {
    throw Error(ErrorCode::unsupported_type, "the emulated product computes f32 and f64");
  }
  ModelOptions chosen = options;
  if (reads_ab_for(desc)) {
    const std::optional<uint32_t> moduli = choose_moduli(desc, a, b, options);
    if (!moduli) {
      std::memcpy(c_out, c_in, operand_extent(desc, 'C').elements * element_size(desc.type));
      return false;
    }
    chosen.moduli = *moduli;
  }
  return model_gemm_once(desc, a, b, c_in, c_out, chosen);
}

GuardPass deciding_pass(const GemmDesc& desc, const void* a, const void* b) {
  return reads_ab_for(desc) ? judge(desc, a, b, {}).decided_by : GuardPass::magnitudes;
}

}  // namespace vkgemm::ozaki
