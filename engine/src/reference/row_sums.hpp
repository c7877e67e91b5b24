// The sampled check's row sums (Freivalds's check; reference.hpp, check_sampled, says what they judge).
#pragma once

#include <random>

#include "ozaki/bound.hpp"
#include "vkgemm/blas.hpp"
#include "vkgemm/reference.hpp"

namespace vkgemm::detail {

// Judges C x against alpha op(A) (op(B) x) + beta C0 x for account.vectors random vectors x per batch
// entry, row by row, and fills the account's row-sum fields. Returns what its passes measured on the way:
// sum over entries of ||A_t||_F^2 ||B_t||_F^2 of the finite elements (0 for integers, or A and B unread).
// `emulation`: each element's allowance is the emulation's own (ozaki/bound.hpp) instead of the native
// kernel's worst case.
double judge_row_sums(const GemmDesc& d, const void* a, const void* b, const void* c_in, const void* c_gpu,
                      const CompareOptions& options, std::mt19937_64& rng, Comparison::Sampled& account,
                      const ozaki::EmulationBound* emulation = nullptr);

}  // namespace vkgemm::detail
