// Ozaki scheme II's integers (docs/design/ozaki.md): the moduli, the constants of the Chinese remainder
// reconstruction, and the scaling budget that keeps the integer product inside the range the moduli cover.
// Host arithmetic alone: the CPU model (model.hpp) and the device's passes take their constants from here.
#pragma once

#include <array>
#include <cstdint>

#include "ozaki_abi.h"
#include "vkgemm/types.hpp"

namespace vkgemm::ozaki {

// Pairwise coprime moduli of at most 256, largest first: each residue fits an int8 (balanced: [-128, 127] for
// 256, [-(p-1)/2, (p-1)/2] for an odd p). 256 = 2^8, 255 = 3·5·17, 253 = 11·23, 247 = 13·19, 217 = 7·31; the
// others are primes. Their product over the first n grows by log2(p) ≈ 7.9 bits a modulus.
// (shaders/ozaki_abi.h holds the list, for the shaders too.)
inline constexpr std::array<uint32_t, OZAKI_MAX_MODULI> kModuliTable = {OZAKI_MODULI};
// Garner's inverse[j] of the whole table, as the merge shader takes them (a test recomputes them).
inline constexpr std::array<uint32_t, OZAKI_MAX_MODULI> kGarnerInverses = {OZAKI_GARNER_INVERSES};
// Garner's weights of the whole table times the digit's inverse, row-major (row j: (W_i mod p_j) inverse[j] mod p_j
// for i < j, then 0), as the merge takes them.
inline constexpr std::array<uint32_t, OZAKI_MAX_MODULI * OZAKI_MAX_MODULI> kGarnerWeights = {OZAKI_GARNER_WEIGHTS};
inline constexpr uint32_t kMaxModuli = static_cast<uint32_t>(kModuliTable.size());
inline constexpr uint32_t kMinModuli = 2;
// One int8 product's K range: every partial sum of an odd modulus's residues (|r| <= 127) stays below 2^31,
// 131072 * 127^2 < 2^31, so the int32 sum is exact; modulus 256's wraps modulo 2^32, which 256 divides.
inline constexpr uint32_t kChunkK = 1u << 17;
// The scaled integers stay below 2^62: each splits exactly into two 32-bit halves (hi < 2^30) for its residues.
inline constexpr int kMaxScaleBits = 62;

// The first `count` moduli and the constants of Garner's reconstruction (balanced mixed radix):
//   W_j = p_0 ... p_{j-1} (W_0 = 1),  weight[j][i] = W_i mod p_j (i < j),  inverse[j] = W_j^-1 mod p_j,
//   scaled[j][i] = weight[j][i] inverse[j] mod p_j: digit j is (y_j inverse[j] - sum_i scaled[j][i] v_i) mod p_j.
struct Moduli {
  uint32_t count = 0;
  std::array<uint32_t, kMaxModuli> p{};
  std::array<uint32_t, kMaxModuli> inverse{};
  std::array<std::array<uint32_t, kMaxModuli>, kMaxModuli> weight{};
  std::array<std::array<uint32_t, kMaxModuli>, kMaxModuli> scaled{};
};

// Row j of `scaled` from weight[j] and inverse[j].
void scale_weights(Moduli& moduli, uint32_t j);

// Throws vkgemm::Error(invalid_argument) unless kMinModuli <= count <= kMaxModuli.
Moduli make_moduli(uint32_t count);

// The number of moduli a type gets by default for a product over k: the fewest with which the span guard
// (guard.hpp) admits inputs whose rows of op(A) and columns of op(B) hold no element far below their largest
// with a margin of at least 2 at every k (docs/design/ozaki.md tabulates the margins): 14 for f64, 7 for f32.
uint32_t default_moduli(DataType type, uint64_t k) noexcept;

// The largest T with k * 2^(T+1) < P = p_0 ... p_{count-1}: integers |A'| <= 2^sA, |B'| <= 2^sB with
// sA + sB <= T give |C'| <= k 2^T < P / 2, inside the balanced range [-P/2, P/2 - 1] the residues determine.
// k counts as at least 1. May be negative (too few moduli for k).
int exponent_budget(const Moduli& moduli, uint64_t k);

// The bits each side's integers get: sA = floor(T / 2), sB = T - sA, each at most kMaxScaleBits.
struct ScaleBits {
  int a = 0;
  int b = 0;
};
ScaleBits scale_bits(const Moduli& moduli, uint64_t k);

// log2(P), for the bound and the messages.
double log2_product(const Moduli& moduli) noexcept;

}  // namespace vkgemm::ozaki
