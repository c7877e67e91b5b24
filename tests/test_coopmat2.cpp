// The NV cooperative-matrix-2 kernel's fast path (shaders/coopmat2.comp) on the device under test. The BLAS
// grid (test_blas.cpp, "grid f16 coopmat2") places every operand 3 elements past an aligned start, which
// keeps the kernel on its general path; this suite places them aligned with leading dimensions of multiples
// of 8, so that the fast path runs, and walks K through every count of steps below three of its unrolled
// runs (zero, one and two whole runs of UNROLL steps, each with every rest), with and without a partial
// last step, for each tile, on products with tiles inside C and edge tiles, split along K where the grid
// is short and K long, every op combination taking turns, C f32 and f16, alpha and beta; and the same for i8
// and u8 (C i32, integer scalars that overflow int32, one slice however long K) and bf16 (C f32 and bf16, split as
// f16 is; a bf16 C through the fp32 workspace even in one slice). The sides are
// multiples of 8, so with beta 0 or split along K the edge tiles start a tile back and overlap their
// neighbours (shaders/coopmat2.comp tile_start); with beta they stay edge tiles; two more products move
// them on one side only. Each product is checked against the CPU reference with poisoned gaps and guards;
// each case builds all its pipelines first, side by side.
//
// A device without VK_NV_cooperative_matrix2 (lavapipe) cannot run it: each case is then a skip. It runs
// on an NVIDIA GPU (tools/gpu/sets/check-and-bench.sh's tests phase).
#include <doctest/doctest.h>

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "gemm_abi.h"
#include "kernels/registry.hpp"  // kernels::coopmat2_launch: each tile's K step and unroll
#include "spec_constant.hpp"
#include "support.hpp"
#include "vkgemm/reference.hpp"

using namespace vkgemm;

namespace {

bool runs_here(DataType c_type, bool f16_acc, DataType input = DataType::f16) {
  try {
    test::engine().check_supported(input, c_type, {.kernel = Kernel::coopmat2, .f16_accumulate = f16_acc});
    return true;
  } catch (const Error& err) {
    test::skip(err.what());
    return false;
  }
}

// K step counts for a loop of `unroll` steps per run: every count below two runs (each rest of 1 to
// unroll - 1 after zero and one whole run), then two runs and two runs plus the largest rest.
std::vector<uint32_t> step_counts(uint32_t unroll) {
  std::vector<uint32_t> out;
  for (uint32_t s = 1; s < 2 * unroll; ++s) out.push_back(s);
  out.push_back(2 * unroll);
  out.push_back(3 * unroll - 1);
  return out;
}

// Row- or column-major call with lds of the natural size plus 8 (m, n, k multiples of 8 keep every ld a
// multiple of 8 elements: 16 bytes of f16 or bf16, the fast path's alignment); for i8 and u8 the natural size rounded up to
// 16 elements, plus 16 (A and B 16-byte aligned; C's ld a multiple of 16 elements too).
GemmDesc make_desc(Layout layout, Op op_a, Op op_b, int64_t m, int64_t n, int64_t k, DataType c_type, double alpha,
                   double beta, DataType input = DataType::f16) {
  GemmDesc d;
  d.type = input, d.c_type = c_type, d.layout = layout, d.op_a = op_a, d.op_b = op_b;
  d.m = m, d.n = n, d.k = k, d.alpha = alpha, d.beta = beta;
  const bool row = layout == Layout::row_major;
  const auto inner = [&](int64_t rows, int64_t cols) {
    const int64_t natural = row ? cols : rows;
    return element_size(input) == 2 ? natural + 8 : (natural + 15) / 16 * 16 + 16;
  };
  d.lda = inner(op_a == Op::n ? m : k, op_a == Op::n ? k : m);
  d.ldb = inner(op_b == Op::n ? k : n, op_b == Op::n ? n : k);
  d.ldc = inner(m, n);
  return d;
}

// The products of `tile` (32, 64, 96, 128, 192, 256 or 512 forced): every K step count on a product of one row
// and one column of whole tiles plus an edge row and column, then K long enough to split, then edge tiles on
// one side only.
struct TileProducts {
  DataType input = DataType::f16;
  bool f16_acc = false;
  GemmOptions options;
  uint32_t bm = 0, bn = 0, bk = 0, unroll = 0;
  std::vector<GemmDesc> descs;
};

TileProducts tile_products(uint32_t tile, bool f16_acc, DataType input = DataType::f16) {
  const Engine& e = test::engine();
  const bool int8 = input == DataType::i8 || input == DataType::u8, bf16 = input == DataType::bf16;
  const DataType narrow_c = bf16 ? DataType::bf16 : DataType::f16;  // the inputs' own type as C
  TileProducts t{input, f16_acc, GemmOptions{.kernel = Kernel::coopmat2, .tile = tile, .f16_accumulate = f16_acc}};
  const kernels::Types types{input, int8 ? DataType::i32 : f16_acc ? DataType::f16 : DataType::f32, f16_acc};
  const kernels::LaunchShape shape = kernels::coopmat2_launch(e.device(), types, t.options, 1, 1);
  t.bm = shape.tile[1], t.bn = shape.tile[0];
  t.bk = test::spec_constant(shape, "BK");
  t.unroll = test::spec_constant(shape, "UNROLL");
  const int64_t m = t.bm + t.bm / 2 + 8, n = t.bn + t.bn / 4 + 8;  // whole tiles and edge tiles (multiples of 8)
  std::vector<int64_t> ks;
  for (uint32_t s : step_counts(t.unroll)) ks.push_back(int64_t{s} * t.bk + (s % 3 == 0 ? 8 : 0));  // some: a partial step
  // A short grid with K >= 4096 splits (coopmat2_splits) where the types split (f16, bf16): slices of multiples of
  // 256 with rests of their own; the others run it as one slice.
  ks.push_back(4096 + 13 * t.bk + 8);
  ks.push_back(8192 + 5 * t.bk + 8);
  const Op ops[4][2] = {{Op::n, Op::n}, {Op::n, Op::t}, {Op::t, Op::n}, {Op::t, Op::t}};
  const std::pair<double, double> float_scalars[] = {{1.0, 0.0}, {0.75, -2.0}, {-1.5, 0.0}, {1.0, 1.0}};
  const std::pair<double, double> int_scalars[] = {
      {1.0, 0.0}, {3.0, -2.0}, {double(1 << 20), double(3 << 29)}, {1.0, 1.0}};
  const auto& scalars = int8 ? int_scalars : float_scalars;
  for (size_t i = 0; i < ks.size(); ++i) {
    // The inputs' type as C on two products of three: it meets every pair of scalars (beta 0 and not).
    const DataType c_type = int8 ? DataType::i32 : f16_acc || i % 3 != 0 ? narrow_c : DataType::f32;
    const Layout layout = i % 5 == 4 ? Layout::col_major : Layout::row_major;
    const auto [alpha, beta] = scalars[i % 4];
    t.descs.push_back(make_desc(layout, ops[i % 4][0], ops[i % 4][1], m, n, ks[i], c_type, alpha, beta, input));
  }
  // Edge tiles on one side only moved inside (the other side not a multiple of 8), beta 0; C of the sums'
  // type, then of the inputs'.
  for (const auto& [rows, cols] : {std::pair<int64_t, int64_t>{m, n - 3}, {m - 5, n}}) {
    const DataType c_type = int8 || rows == m ? types.output : narrow_c;
    t.descs.push_back(make_desc(Layout::row_major, Op::n, Op::t, rows, cols, 3 * t.bk + 8, c_type, 1.0, 0.0, input));
  }
  return t;
}

// The products of these tiles, their pipelines built first, side by side (Engine::prepare: a driver that
// compiles a coopmat2 pipeline in seconds would otherwise compile them one after another, between checks).
std::vector<TileProducts> prepared_tiles(std::initializer_list<uint32_t> tiles, bool f16_acc,
                                         DataType input = DataType::f16) {
  std::vector<TileProducts> out;
  std::vector<std::pair<GemmDesc, GemmOptions>> calls;
  for (uint32_t tile : tiles) {
    out.push_back(tile_products(tile, f16_acc, input));
    for (const GemmDesc& d : out.back().descs) calls.emplace_back(d, out.back().options);
  }
  test::engine().prepare(calls);
  return out;
}

// Each product of `t` against the CPU reference, on the tile it forced. Returns the products checked.
int run_tile(const TileProducts& t, std::mt19937_64& rng, int& failures) {
  const std::string tile_name = fmt::format("{}x{}", t.bm, t.bn);
  int runs = 0;
  for (const GemmDesc& d : t.descs) {
    const auto r = test::check_gemm_call(d, t.options, rng, 0);
    ++runs;
    if (r.passed && r.timing.config.find(tile_name) == std::string::npos) {
      FAIL_CHECK("tile ", t.options.tile, " ran ", r.timing.config, ", not ", tile_name);
    }
    if (!r.passed && ++failures <= 5) FAIL_CHECK("seed ", test::run_seed(), ": ", r.detail);
  }
  MESSAGE(to_string(t.input), " tile ", t.bm, "x", t.bn, "x", t.bk, " unroll ", t.unroll,
          std::string(t.f16_acc ? " fp16 sums" : ""), ": ", runs, " products");
  return runs;
}

void check_runs(const char* what, int runs, int failures) {
  fmt::print("{}: {} products checked, {} failed\n", what, runs, failures);
  CHECK(runs > 0);
  CHECK_MESSAGE(failures == 0, failures, " of ", runs, " calls failed (the first 5 are listed); seed ", test::run_seed());
}

}  // namespace

TEST_SUITE("coopmat2") {
  TEST_CASE("fast path: every K step count of the unrolled runs, inside and edge tiles, split K, each tile") {
    if (!runs_here(DataType::f32, false)) return;
    auto rng = test::case_rng("coopmat2 fast path");
    int failures = 0, runs = 0;
    for (const TileProducts& t : prepared_tiles({32u, 64u, 96u, 128u, 192u, 256u, 512u}, false)) {
      runs += run_tile(t, rng, failures);
    }
    check_runs("coopmat2 fast path", runs, failures);
  }

  // Its own case, so that a device call short of time can run it alone (--test-case="*fp16 sums*").
  TEST_CASE("fast path with fp16 sums: the large tile (256 x 256 x 32)") {
    if (!runs_here(DataType::f16, true)) return;  // skipped where the device lists no shapes for fp16 sums
    auto rng = test::case_rng("coopmat2 fast path fp16 sums");
    int failures = 0;
    const int runs = run_tile(prepared_tiles({256u}, true).front(), rng, failures);
    check_runs("coopmat2 fast path, fp16 sums", runs, failures);
  }

  // Its own case too (--test-case="*bf16*"): a skip where the device lacks bf16 matrices (the refusal names
  // what is missing). C f32 and bf16 (through the fp32 workspace and the bf16 reduce pass), split K.
  TEST_CASE("fast path for bf16: C f32 and bf16, every K step count, inside and edge tiles, split K") {
    if (!runs_here(DataType::f32, false, DataType::bf16)) return;
    auto rng = test::case_rng("coopmat2 fast path bf16");
    int failures = 0, runs = 0;
    for (const TileProducts& t : prepared_tiles({32u, 64u, 96u, 128u, 192u, 256u, 512u}, false, DataType::bf16)) {
      runs += run_tile(t, rng, failures);
    }
    check_runs("coopmat2 fast path, bf16", runs, failures);
  }

  // Its own case too (--test-case="*i8 and u8*"): coopmat2's int8 variants run on no device CI has.
  TEST_CASE("fast path for i8 and u8: every K step count, inside and edge tiles, one slice however long K") {
    for (const DataType t : {DataType::i8, DataType::u8}) {
      if (!runs_here(DataType::i32, false, t)) return;
    }
    auto rng = test::case_rng("coopmat2 fast path int8");
    int failures = 0, runs = 0;
    for (const TileProducts& t : prepared_tiles({32u, 64u, 96u, 128u, 192u, 256u, 512u}, false, DataType::i8)) {
      runs += run_tile(t, rng, failures);
    }
    for (const TileProducts& t : prepared_tiles({64u, 256u}, false, DataType::u8)) runs += run_tile(t, rng, failures);
    check_runs("coopmat2 fast path, i8 and u8", runs, failures);
  }
}
