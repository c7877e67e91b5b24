// vkgemm_check_cost: what the sampled check (reference.hpp, check_sampled) costs on the host, and that it
// fails wrong results, at sizes the full reference cannot reach. For one type and size it builds
// A (random) and B (a permutation matrix with random signs), so that C = A B is known exactly without
// the O(n^3) product, then times the check of C and of wrong copies of it, one line each:
//   right            the product as it is: must pass
//   one element      one element off by twice what its row's sum is sure to see: must fail
//   NaN              one element NaN (an element no store reached): must fail
//   tile             one 128 x 128 block off by more than its elements' allowance, less than the sums see
//   K half           the second half of K lost (a split-K slice): must fail
// Usage: vkgemm_check_cost TYPE SIZE [SEED]   (TYPE f32, f64, f16 or bf16; C f32 for the 16-bit types)
// Exit 0 when every verdict is the expected one. tools/dev/check-cost.sh runs the published sizes.
#include <chrono>
#include <cmath>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "vkgemm/blas.hpp"
#include "vkgemm/half.hpp"
#include "vkgemm/reference.hpp"

namespace {

using vkgemm::DataType;

double load(DataType t, const std::vector<std::byte>& v, size_t i) {
  switch (t) {
    case DataType::f64: return reinterpret_cast<const double*>(v.data())[i];
    case DataType::f16: return vkgemm::half_to_float(reinterpret_cast<const uint16_t*>(v.data())[i]);
    case DataType::bf16: return vkgemm::bfloat16_to_float(reinterpret_cast<const uint16_t*>(v.data())[i]);
    default: return reinterpret_cast<const float*>(v.data())[i];
  }
}

void store(DataType t, std::vector<std::byte>& v, size_t i, double x) {
  switch (t) {
    case DataType::f64: reinterpret_cast<double*>(v.data())[i] = x; break;
    case DataType::f16: reinterpret_cast<uint16_t*>(v.data())[i] = vkgemm::float_to_half(float(x)); break;
    case DataType::bf16: reinterpret_cast<uint16_t*>(v.data())[i] = vkgemm::float_to_bfloat16(float(x)); break;
    default: reinterpret_cast<float*>(v.data())[i] = float(x); break;
  }
}

struct Product {
  vkgemm::GemmDesc d;
  std::vector<std::byte> a, b, c;
};

// A uniform(-1, 1); B(p, perm[p]) = +-1; so C(i, perm[p]) = +-A(i, p), exact in C's type.
Product make(DataType type, int64_t n, uint64_t seed) {
  Product p;
  p.d.type = type;
  p.d.c_type = vkgemm::default_output_type(type);
  p.d.m = p.d.n = p.d.k = n;
  const DataType out = *p.d.c_type;
  const size_t es = vkgemm::element_size(type), cs = vkgemm::element_size(out), count = size_t(n) * size_t(n);
  p.a.resize(count * es), p.b.assign(count * es, std::byte{0}), p.c.resize(count * cs);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (size_t i = 0; i < count; ++i) store(type, p.a, i, u(rng));
  std::vector<int64_t> perm(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) perm[size_t(i)] = i;
  std::shuffle(perm.begin(), perm.end(), rng);
  std::vector<double> sign(static_cast<size_t>(n));
  for (int64_t q = 0; q < n; ++q) {
    sign[size_t(q)] = (rng() & 1) ? 1.0 : -1.0;
    store(type, p.b, size_t(q) * size_t(n) + size_t(perm[size_t(q)]), sign[size_t(q)]);
  }
  for (int64_t i = 0; i < n; ++i)
    for (int64_t q = 0; q < n; ++q)
      store(out, p.c, size_t(i) * size_t(n) + size_t(perm[size_t(q)]), sign[size_t(q)] * load(type, p.a, size_t(i * n + q)));
  return p;
}

bool run(const char* name, const Product& p, const std::vector<std::byte>& c, bool expect_pass, uint64_t seed) {
  vkgemm::SampleOptions s;
  s.seed = seed;
  const auto start = std::chrono::steady_clock::now();
  const vkgemm::Comparison r = vkgemm::check_sampled(p.d, p.a.data(), p.b.data(), c.data(), c.data(), {}, s);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const bool right = r.passed == expect_pass;
  fmt::print("{:<12} {:<6} {:8.3f} s  {}  {}\n", name, r.passed ? "passed" : "failed", seconds,
             right ? "as expected" : "WRONG", r.summary());
  return right;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s TYPE SIZE [SEED]  (TYPE f32, f64, f16 or bf16)\n", argv[0]);
    return 2;
  }
  const std::string name = argv[1];
  const DataType type = name == "f64" ? DataType::f64 : name == "f16" ? DataType::f16 : name == "bf16" ? DataType::bf16 : DataType::f32;
  const int64_t n = std::stoll(argv[2]);
  const uint64_t seed = argc > 3 ? std::stoull(argv[3]) : std::random_device{}();
  if (n < 256 || n > 65536 || (name != "f32" && name != "f64" && name != "f16" && name != "bf16")) {
    std::fprintf(stderr, "%s: TYPE is f32, f64, f16 or bf16, SIZE 256 to 65536\n", argv[0]);
    return 2;
  }
  fmt::print("sampled check of {} {}x{}x{} on the host, seed {}\n", name, n, n, n, seed);
  const Product p = make(type, n, seed);
  const DataType out = *p.d.c_type;
  bool ok = run("right", p, p.c, true, seed);
  vkgemm::SampleOptions probe;
  probe.seed = seed;
  const double catch_size = vkgemm::check_sampled(p.d, p.a.data(), p.b.data(), p.c.data(), p.c.data(), {}, probe).sampled->row_sum_catch;
  std::mt19937_64 rng(seed + 1);
  const size_t count = size_t(n) * size_t(n), at = rng() % count;
  auto one = p.c;
  store(out, one, at, load(out, one, at) + 2.0 * catch_size);
  ok &= run("one element", p, one, false, seed);
  auto nan = p.c;
  store(out, nan, at, std::numeric_limits<double>::quiet_NaN());
  ok &= run("NaN", p, nan, false, seed);
  auto tile = p.c;  // a 128 x 128 block at a random place, off by 1/8 (the elements' allowance is far smaller)
  const size_t i0 = rng() % size_t(n - 128), j0 = rng() % size_t(n - 128);
  for (size_t i = i0; i < i0 + 128; ++i)
    for (size_t j = j0; j < j0 + 128; ++j) store(out, tile, i * size_t(n) + j, load(out, tile, i * size_t(n) + j) + 0.125);
  ok &= run("tile", p, tile, false, seed);
  Product half = p;  // C as if the second half of K had been lost: B's rows k/2.. zero
  std::fill(half.b.begin() + std::ptrdiff_t(half.b.size() / 2), half.b.end(), std::byte{0});
  ok &= run("K half", half, p.c, false, seed);
  return ok ? 0 : 1;
}
