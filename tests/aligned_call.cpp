// The aligned product check (aligned_call.hpp).
#include "aligned_call.hpp"

#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "vkgemm/reference.hpp"

namespace vkgemm::test {
namespace {

constexpr uint64_t kGuard = 256;
constexpr std::byte kGuardByte{0xA5};

struct Placed {
  Buffer buffer;
  uint64_t bytes = 0;
};

Placed place(Engine& e, const std::vector<std::byte>& data) {
  Placed p;
  p.bytes = data.size();
  std::vector<std::byte> all(2 * kGuard + data.size(), kGuardByte);
  if (!data.empty()) std::memcpy(all.data() + kGuard, data.data(), data.size());
  p.buffer = e.create_buffer(all.size(), "aligned test operand");
  e.write(p.buffer, 0, all.data(), all.size());
  return p;
}

std::vector<std::byte> take(Engine& e, const Placed& p, const char* name, std::string& problems) {
  std::vector<std::byte> all(p.buffer.size());
  e.read(p.buffer, 0, all.data(), all.size());
  uint64_t changed = 0;
  for (uint64_t i = 0; i < all.size(); ++i) {
    if ((i < kGuard || i >= kGuard + p.bytes) && all[i] != kGuardByte) ++changed;
  }
  if (changed) problems += fmt::format("{} guard bytes around {} were overwritten; ", changed, name);
  return {all.begin() + kGuard, all.begin() + static_cast<std::ptrdiff_t>(kGuard + p.bytes)};
}

// Random where the call describes elements, NaN (all bits set) in the gaps, or everywhere with all_poison.
std::vector<std::byte> contents(const GemmDesc& d, char which, bool all_poison, std::mt19937_64& rng) {
  const OperandExtent x = operand_extent(d, which);
  const DataType type = which == 'C' ? output_type(d) : d.type;
  const uint64_t es = element_size(type);
  std::vector<char> described(x.elements, 0);
  for (int64_t t = 0; t < d.batch; ++t)
    for (int64_t o = 0; o < x.outer; ++o)
      for (int64_t i = 0; i < x.inner; ++i) described[uint64_t(t * x.stride + o * x.ld + i)] = 1;
  auto out = random_elements(type, x.elements, rng);
  for (uint64_t i = 0; i < x.elements; ++i) {
    if (all_poison || !described[i]) std::memset(&out[i * es], 0xFF, es);
  }
  return out;
}

}  // namespace

ProductCheck check_aligned_call(Engine& e, const GemmDesc& desc, const GemmOptions& options,
                                      std::mt19937_64& rng) {
  const bool reads_ab = desc.alpha != 0.0 && desc.k != 0;
  const auto a = contents(desc, 'A', !reads_ab, rng), b = contents(desc, 'B', !reads_ab, rng);
  const auto c0 = contents(desc, 'C', desc.beta == 0.0, rng);
  Placed pa = place(e, a), pb = place(e, b), pc = place(e, c0);
  ProductCheck out;
  try {
    out.timing = e.gemm(desc, {&pa.buffer, kGuard}, {&pb.buffer, kGuard}, {&pc.buffer, kGuard}, options);
  } catch (const Error& err) {
    out.detail = fmt::format("aligned {}: threw {}", describe(desc), err.what());
    return out;
  }
  std::string problems;
  take(e, pa, "A", problems);
  take(e, pb, "B", problems);
  const auto c = take(e, pc, "C", problems);
  const Comparison cmp = compare_with_reference(desc, a.data(), b.data(), c0.data(), c.data(),
                                                {.f16_accumulate = options.f16_accumulate, .random_inputs = true});
  if (!cmp.passed) problems += cmp.summary();
  out.passed = problems.empty();
  out.detail = fmt::format("aligned {} tile {} ({} {}): {}", describe(desc), options.tile,
                           to_string(out.timing.kernel), out.timing.config, out.passed ? "ok" : problems);
  return out;
}

ProductCheck check_aligned_call(const GemmDesc& desc, const GemmOptions& options, std::mt19937_64& rng) {
  return check_aligned_call(engine(), desc, options, rng);
}

GemmDesc padded_desc(const CallShape& call, const Size& s, std::pair<double, double> scalars) {
  GemmDesc d;
  d.type = call.input, d.c_type = call.c_type, d.layout = call.layout, d.op_a = call.op_a, d.op_b = call.op_b;
  d.m = s.m, d.n = s.n, d.k = s.k;
  d.alpha = scalars.first, d.beta = scalars.second;
  const bool row = call.layout == Layout::row_major;
  const auto inner = [&](int64_t rows, int64_t cols) { return std::max<int64_t>(1, row ? cols : rows); };
  d.lda = inner(call.op_a == Op::n ? s.m : s.k, call.op_a == Op::n ? s.k : s.m) + call.pad;
  d.ldb = inner(call.op_b == Op::n ? s.k : s.n, call.op_b == Op::n ? s.n : s.k) + call.pad;
  d.ldc = inner(s.m, s.n) + call.pad;
  d.batch = call.batch;
  if (call.batch > 1) {
    d.stride_a = call.broadcast == 'A' ? 0 : operand_extent(d, 'A').stride + call.pad;
    d.stride_b = call.broadcast == 'B' ? 0 : operand_extent(d, 'B').stride + call.pad;
    d.stride_c = operand_extent(d, 'C').stride + call.pad;
  }
  return d;
}

}  // namespace vkgemm::test
