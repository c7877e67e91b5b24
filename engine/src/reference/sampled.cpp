// The sampled check (reference.hpp states what it judges and why the bounds hold): the witnesses, judged
// by the full comparison's own rule (pick.hpp), and the row sums.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "core/element_access.hpp"
#include "core/indexer.hpp"
#include "reference/parallel.hpp"
#include "reference/pick.hpp"
#include "reference/row_sums.hpp"
#include "vkgemm/reference.hpp"

namespace vkgemm {
namespace {

using detail::Pick;

// One line (row or column) in every `block` lines of `count`, at random inside its block, and the first
// and the last; ascending, once each.
std::vector<int64_t> cover(int64_t count, int64_t block, std::mt19937_64& rng, std::vector<char>& taken) {
  taken.assign(size_t(count), 0);
  std::vector<int64_t> out;
  const auto take = [&](int64_t l) {
    if (!taken[size_t(l)]) taken[size_t(l)] = 1, out.push_back(l);
  };
  if (count == 0) return out;
  take(0), take(count - 1);
  for (int64_t b0 = 0; b0 < count; b0 += block) {
    const int64_t width = std::min(block, count - b0);
    take(b0 + static_cast<int64_t>(rng() % uint64_t(width)));
  }
  return out;
}

// Lines not yet taken, in random order: what the budget left over adds, front first.
std::vector<int64_t> spare(const std::vector<char>& taken, std::mt19937_64& rng) {
  std::vector<int64_t> out;
  for (size_t l = 0; l < taken.size(); ++l)
    if (!taken[l]) out.push_back(int64_t(l));
  std::shuffle(out.begin(), out.end(), rng);
  return out;
}

// The witnesses of one batch entry: the tiles' cover, then random rows and columns in turn while each
// costs (its count of new elements times k) no more than what is left of `budget`.
void entry_witnesses(const GemmDesc& d, int64_t block_m, int64_t block_n, uint64_t budget, std::mt19937_64& rng,
                     std::vector<int64_t>& rows, std::vector<int64_t>& cols) {
  std::vector<char> taken_rows, taken_cols;
  rows = cover(d.m, block_m, rng, taken_rows);
  cols = cover(d.n, block_n, rng, taken_cols);
  const auto k = uint64_t(std::max<int64_t>(d.k, 1));
  uint64_t cost = uint64_t(rows.size()) * cols.size() * k;
  const std::vector<int64_t> more_rows = spare(taken_rows, rng), more_cols = spare(taken_cols, rng);
  size_t r = 0, c = 0;
  for (bool progress = true; progress;) {
    progress = false;
    if (r < more_rows.size() && cost + cols.size() * k <= budget) {
      rows.push_back(more_rows[r++]), cost += cols.size() * k, progress = true;
    }
    if (c < more_cols.size() && cost + rows.size() * k <= budget) {
      cols.push_back(more_cols[c++]), cost += rows.size() * k, progress = true;
    }
  }
  std::sort(rows.begin(), rows.end());
  std::sort(cols.begin(), cols.end());
}

// How many multiply-adds the tiles' cover takes in every entry, for blocks of block_m x block_n.
uint64_t cover_cost(const GemmDesc& d, int64_t block_m, int64_t block_n) {
  const auto lines = [](int64_t count, int64_t block) { return count ? uint64_t((count + block - 1) / block + 2) : 0; };
  return uint64_t(d.batch) * lines(d.m, block_m) * lines(d.n, block_n) * uint64_t(std::max<int64_t>(d.k, 1));
}

// Every tile of tile_m x tile_n rows and columns, however placed, contains a whole aligned block of half
// its size, so one witness in each such block puts one in the tile. Where the budget cannot pay for that,
// the blocks (and so the tile answered for) grow, on the side with more of them first.
Pick choose_witnesses(const GemmDesc& d, const SampleOptions& s, std::mt19937_64& rng, Comparison::Sampled& out) {
  int64_t block_m = std::max<int64_t>(1, s.tile_m / 2), block_n = std::max<int64_t>(1, s.tile_n / 2);
  while (cover_cost(d, block_m, block_n) > s.budget && (block_m < d.m || block_n < d.n)) {
    const bool rows_first = block_n >= d.n || (block_m < d.m && d.m * block_n >= d.n * block_m);
    (rows_first ? block_m : block_n) *= 2;
  }
  out.tile_m = static_cast<uint32_t>(std::min<int64_t>(2 * block_m, UINT32_MAX));
  out.tile_n = static_cast<uint32_t>(std::min<int64_t>(2 * block_n, UINT32_MAX));
  Pick pick;
  pick.rows.resize(size_t(d.batch)), pick.cols.resize(size_t(d.batch));
  const uint64_t per_entry = s.budget / uint64_t(std::max<int64_t>(d.batch, 1));
  for (int64_t t = 0; t < d.batch; ++t) entry_witnesses(d, block_m, block_n, per_entry, rng, pick.rows[size_t(t)], pick.cols[size_t(t)]);
  return pick;
}

}  // namespace

Comparison check_sampled(const GemmDesc& desc, const void* a, const void* b, const void* c_in, const void* c_gpu,
                         const CompareOptions& options, const SampleOptions& sample, const void* bias) {
  check_gemm(desc);
  const std::optional<ozaki::EmulationBound> emulation = detail::emulation_bound(desc, a, b, options);
  const ozaki::EmulationBound* own = emulation ? &*emulation : nullptr;
  std::mt19937_64 rng(sample.seed);
  Comparison::Sampled account;
  account.seed = sample.seed;
  account.vectors = std::max(1u, sample.vectors);
  account.elements = uint64_t(desc.batch) * uint64_t(desc.m) * uint64_t(desc.n);
  const Pick witnesses = choose_witnesses(desc, sample, rng, account);
  account.witnesses = witnesses.element_count();
  // The row sums are linear in C: an activation breaks them, so with an epilogue the witnesses judge alone;
  // so do they a dequantized product's (judged element by element, as the full comparison does).
  std::optional<double> norm_ab2;
  if (desc.epilogue.active() || dequantizes(desc)) {
    account.vectors = 0;
  } else {
    norm_ab2 = detail::judge_row_sums(desc, a, b, c_in, c_gpu, options, rng, account, own);
  }
  Comparison out = detail::judge_picked(desc, a, b, c_in, c_gpu, options, witnesses, norm_ab2, bias, own);
  detail::judge_gaps(desc, c_in, c_gpu, out);
  out.sampled = account;
  detail::decide(desc, out);
  return out;
}

}  // namespace vkgemm
