#include "ozaki/moduli.hpp"

#include <cmath>
#include <string>

#include "vkgemm/error.hpp"

namespace vkgemm::ozaki {
namespace {

// x^-1 mod p by the extended Euclidean algorithm (x and p coprime, p <= 256).
uint32_t inverse_mod(uint32_t x, uint32_t p) {
  int64_t r0 = p, r1 = x % p, t0 = 0, t1 = 1;
  while (r1 != 0) {
    const int64_t q = r0 / r1;
    const int64_t r2 = r0 - q * r1, t2 = t0 - q * t1;
    r0 = r1, r1 = r2, t0 = t1, t1 = t2;
  }
  if (r0 != 1) throw Error(ErrorCode::invalid_argument, "ozaki: moduli not coprime");
  return static_cast<uint32_t>((t0 % static_cast<int64_t>(p) + p) % p);
}

// P = p_0 ... p_{count-1} as little-endian 32-bit limbs (20 moduli of 8 bits: 160 bits).
using Big = std::array<uint64_t, 6>;

Big product(const Moduli& moduli) {
  Big big{1, 0, 0, 0, 0, 0};
  for (uint32_t j = 0; j < moduli.count; ++j) {
    uint64_t carry = 0;
    for (auto& limb : big) {
      const uint64_t v = limb * moduli.p[j] + carry;
      limb = v & 0xffffffffu;
      carry = v >> 32;
    }
  }
  return big;
}

// Whether k * 2^shift < big (a negative shift: whether k < big * 2^-shift, that is floor(k / 2^-shift) < big).
bool below(uint64_t k, int shift, const Big& big) {
  if (shift < 0) return below(shift <= -64 ? 0 : k >> -shift, 0, big);
  Big v{};  // k << shift in 32-bit limbs: k * 2^bit spans 96 bits at most (k < 2^64, bit < 32)
  const int limb = shift / 32, bit = shift % 32;
  const uint64_t low = k << bit;  // bits 0-63 of k * 2^bit
  const std::array<uint64_t, 3> parts = {low & 0xffffffffu, low >> 32, bit == 0 ? 0 : k >> (64 - bit)};
  for (int i = 0; i < 3; ++i) {
    if (parts[static_cast<size_t>(i)] == 0) continue;
    if (limb + i >= static_cast<int>(v.size())) return false;
    v[static_cast<size_t>(limb + i)] = parts[static_cast<size_t>(i)];
  }
  for (size_t i = v.size(); i-- > 0;) {
    if (v[i] != big[i]) return v[i] < big[i];
  }
  return false;
}

}  // namespace

Moduli make_moduli(uint32_t count) {
  if (count < kMinModuli || count > kMaxModuli) {
    throw Error(ErrorCode::invalid_argument, "the emulated product's moduli count " + std::to_string(count) +
                                                 " is outside " + std::to_string(kMinModuli) + " to " +
                                                 std::to_string(kMaxModuli));
  }
  Moduli m;
  m.count = count;
  for (uint32_t j = 0; j < count; ++j) {
    m.p[j] = kModuliTable[j];
    uint32_t w = 1;  // W_i mod p_j, i = 0 .. j
    for (uint32_t i = 0; i < j; ++i) {
      m.weight[j][i] = w;
      w = static_cast<uint32_t>((static_cast<uint64_t>(w) * kModuliTable[i]) % m.p[j]);
    }
    m.inverse[j] = inverse_mod(w, m.p[j]);
    scale_weights(m, j);
  }
  return m;
}

void scale_weights(Moduli& moduli, uint32_t j) {
  for (uint32_t i = 0; i < j; ++i) moduli.scaled[j][i] = moduli.weight[j][i] * moduli.inverse[j] % moduli.p[j];
}

uint32_t default_moduli(DataType type, uint64_t /*k*/) noexcept { return type == DataType::f32 ? 7u : 14u; }

int exponent_budget(const Moduli& moduli, uint64_t k) {
  const Big p = product(moduli);
  const uint64_t kk = k == 0 ? 1 : k;
  int t = static_cast<int>(std::floor(log2_product(moduli))) + 1;  // above the answer: walk down
  while (t > -64 && !below(kk, t + 1, p)) --t;
  return t;
}

ScaleBits scale_bits(const Moduli& moduli, uint64_t k) {
  const int t = exponent_budget(moduli, k);
  ScaleBits s;
  s.a = t >= 0 ? t / 2 : -((1 - t) / 2);  // floor(t / 2)
  s.b = t - s.a;
  if (s.a > kMaxScaleBits) s.a = kMaxScaleBits;
  if (s.b > kMaxScaleBits) s.b = kMaxScaleBits;
  return s;
}

double log2_product(const Moduli& moduli) noexcept {
  double bits = 0.0;
  for (uint32_t j = 0; j < moduli.count; ++j) bits += std::log2(static_cast<double>(moduli.p[j]));
  return bits;
}

}  // namespace vkgemm::ozaki
