// The KHR cooperative-matrix kernel (shaders/coopmat.comp) on the device under test: every op combination,
// both layouts, C f32 and f16, fp16 sums, i8 and u8 (C i32, integer alpha and beta, wrapping), bf16 (C f32
// and bf16; where the device has bf16 matrices), batches (with a broadcast operand), alpha and beta, sizes across
// the fragment, warp and workgroup tiles and across the fast path's boundary (tiles inside C, K long enough
// for the unrolled loop), leading dimensions with gaps, operands at aligned and unaligned offsets, each
// checked against the CPU reference with poisoned gaps and guard regions.
//
// A device without VK_KHR_cooperative_matrix (Debian 12's lavapipe) cannot run it: each case is then a
// skip (test::skip). Where the kernel must run (tools/dev/coopmat-lavapipe.sh, on a lavapipe that has the
// extension), the support suite asserts it through VKGEMM_TEST_EXPECT and the script fails on any skip.
#include <doctest/doctest.h>

#include <array>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "kernels/registry.hpp"  // kernels::coopmat_launch: the tiles this device gets
#include "aligned_call.hpp"
#include "support.hpp"
#include "vkgemm/reference.hpp"

using namespace vkgemm;

namespace {

using test::padded_desc;
using test::Size;

// Whether this device runs the kernel at all (f16 inputs, C f32); the case's skip when it does not.
bool runs_here() {
  try {
    test::engine().check_supported(DataType::f16, DataType::f32, {.kernel = Kernel::coopmat});
    return true;
  } catch (const Error& err) {
    test::skip(err.what());
    return false;
  }
}

// The types of C: f32 and f16 with fp32 sums, f16 with fp16 sums.
struct CTypes {
  DataType c;
  bool f16_acc;
};
constexpr std::array<CTypes, 3> kCTypes = {CTypes{DataType::f32, false}, {DataType::f16, false}, {DataType::f16, true}};

// Whether the kernel takes these types here (a device may list no f16-accumulator shape): the rest of the
// suite still runs, so this is a message, not the suite's skip (where fp16 sums must run, the support
// suite's f16acc= expectation asserts it).
bool type_runs_here(const CTypes& ct) {
  try {
    test::engine().check_supported(DataType::f16, ct.c, {.kernel = Kernel::coopmat, .f16_accumulate = ct.f16_acc});
    return true;
  } catch (const Error& err) {
    MESSAGE("C ", to_string(ct.c), ct.f16_acc ? " with fp16 sums" : "", " not run here: ", err.what());
    return false;
  }
}

// The workgroup tiles this device gets (their side along N names them): the small one, then the large.
std::array<uint32_t, 2> device_tiles(DataType c_type, bool f16_acc, DataType input = DataType::f16) {
  const DeviceInfo& d = test::engine().device();
  const kernels::Types t{input, c_type, f16_acc};
  const auto small = kernels::coopmat_launch(d, t, {.kernel = Kernel::coopmat}, 1, 1, 1, 1);
  const auto large = kernels::coopmat_launch(d, t, {.kernel = Kernel::coopmat}, 1u << 14, 1u << 14, 4096, 1);
  return {small.tile[0], large.tile[0]};
}

// ---- The grid ----


constexpr std::array<std::pair<double, double>, 4> kScalars = {
    std::pair{1.0, 0.0}, {1.0, 1.0}, {-1.5, 0.0}, {0.75, -2.0}};

// A f16 call (aligned_call.hpp's padded_desc).
GemmDesc make_desc(Layout layout, Op op_a, Op op_b, const Size& s, int64_t pad, int64_t batch, char broadcast,
                   std::pair<double, double> scalars, DataType c_type) {
  return padded_desc({.input = DataType::f16, .c_type = c_type, .layout = layout, .op_a = op_a, .op_b = op_b,
                      .pad = pad, .batch = batch, .broadcast = broadcast},
                     s, scalars);
}

// A grid's verdict: how many products it checked (said on stdout too, which tools/dev/coopmat-lavapipe.sh shows),
// none failed, and at least one ran.
void report_grid(const std::string& name, int runs, int failures) {
  MESSAGE(runs, " products checked");
  fmt::print("coopmat {}: {} products checked, {} failed\n", name, runs, failures);
  CHECK(runs > 0);
  CHECK_MESSAGE(failures == 0, failures, " of ", runs, " calls failed (the first 5 are listed); seed ",
                test::run_seed());
}

// Every op combination and layout for each C type over `sizes` at `tile`: aligned calls (lds padded by 8,
// a multiple of 16 bytes, so that the fast path runs) and unaligned ones (offset 3 elements, lds padded by
// 3), the scalars and batch kinds taking turns so that each meets every size.
void run_grid(const std::vector<Size>& sizes, bool large_tile, const std::string& name) {
  auto rng = test::case_rng(name);
  int failures = 0, runs = 0;
  size_t turn = 0;
  if (!runs_here()) return;
  for (const CTypes& ct : kCTypes) {
    if (!type_runs_here(ct)) continue;
    const GemmOptions options{.kernel = Kernel::coopmat, .tile = device_tiles(ct.c, ct.f16_acc)[large_tile ? 1 : 0],
                              .f16_accumulate = ct.f16_acc};
    for (Layout layout : {Layout::row_major, Layout::col_major})
      for (Op op_a : {Op::n, Op::t})
        for (Op op_b : {Op::n, Op::t})
          for (const Size& s : sizes)
            for (bool aligned : {true, false}) {
              ++turn;
              const int64_t batch = turn % 3 == 0 ? 3 : 1;
              const char broadcast = turn % 6 == 0 ? 'A' : turn % 9 == 0 ? 'B' : ' ';
              const GemmDesc d = make_desc(layout, op_a, op_b, s, aligned ? 8 : 3, batch, broadcast,
                                           kScalars[turn % kScalars.size()], ct.c);
              const auto r = aligned ? test::check_aligned_call(d, options, rng) : test::check_gemm_call(d, options, rng);
              ++runs;
              if (!r.passed && ++failures <= 5) FAIL_CHECK("seed ", test::run_seed(), ": ", r.detail);
              if (r.passed && r.timing.kernel != Kernel::coopmat) FAIL_CHECK("ran ", to_string(r.timing.kernel));
            }
  }
  report_grid(name, runs, failures);
}

// Sizes in units of the device's tiles: fragments (TM = TN = TK = 8 on lavapipe, 16 on NVIDIA), the
// workgroup tile (small: 32 on lavapipe, 64 on NVIDIA), the K step (32), and the fast loop (UNROLL 4 steps,
// run while the step after them is whole: K >= 5 * 32 = 160 runs it once, 288 twice plus a remainder).
std::vector<Size> small_sizes() {
  return {{1, 1, 1}, {8, 8, 8}, {7, 9, 13}, {16, 16, 16}, {33, 31, 40}, {64, 64, 32}, {65, 66, 67}};
}

std::vector<Size> fast_sizes(uint32_t tile) {
  const int64_t t = tile;
  return {{2 * t, 2 * t, 160}, {2 * t + 8, 3 * t, 200}, {3 * t, 2 * t - 1, 288}, {t, t, 4 * 32 + 8}};
}

// Whether this device runs i8 and u8 on the kernel; a message, not the suite's skip, when it does not (where
// they must run, the support suite's int8= expectation asserts it).
bool int8_runs_here() {
  for (const DataType type : {DataType::i8, DataType::u8}) {
    try {
      test::engine().check_supported(type, DataType::i32, {.kernel = Kernel::coopmat});
    } catch (const Error& err) {
      MESSAGE(to_string(type), " not run here: ", err.what());
      return false;
    }
  }
  return true;
}

// i8 and u8 (C i32) over sizes around the fragment, the 16-byte chunk (16 int8), the tiles and the fast loop,
// aligned (lds padded by 16 bytes) and not, both layouts; integer scalars, the last overflowing int32 in
// both products (the sums wrap modulo 2^32). Sampled by pipeline, since each (type, transposes, tile) is one
// to compile, about 4 s on lavapipe: i8 with every op on the small tile, u8 (the unsigned shape and sums)
// and the large tile with op NN; a column-major call takes the transposes of the row-major call it becomes.
// One i8 or u8 product (C i32) of the int8 grids, the `turn`th: aligned (lds padded by 16 bytes) two turns
// in three, a batch of 2 every `batch_every` turns and a shared B every `shared_every`, integer scalars in
// turn, the last overflowing int32 in both products (the sums wrap modulo 2^32).
test::ProductCheck check_int8_call(DataType type, Layout layout, Op op_a, Op op_b, const Size& s, size_t turn,
                                   size_t batch_every, size_t shared_every, const GemmOptions& options,
                                   std::mt19937_64& rng) {
  constexpr std::array<std::pair<double, double>, 4> kIntScalars = {
      std::pair{1.0, 0.0}, {1.0, 1.0}, {-3.0, 0.0}, {double(1 << 20), double(3 << 29)}};
  const bool aligned = turn % 3 != 1;
  GemmDesc d = make_desc(layout, op_a, op_b, s, aligned ? 16 : 3, turn % batch_every == 0 ? 2 : 1,
                         turn % shared_every == 0 ? 'B' : ' ', kIntScalars[turn % kIntScalars.size()], DataType::i32);
  d.type = type;
  return aligned ? test::check_aligned_call(d, options, rng) : test::check_gemm_call(d, options, rng);
}

void run_int8_grid(DataType type, bool every_op, const std::vector<Size>& sizes, bool large_tile,
                   const std::string& name) {
  auto rng = test::case_rng(name);
  int failures = 0, runs = 0;
  size_t turn = 0;
  const GemmOptions options{.kernel = Kernel::coopmat,
                            .tile = device_tiles(DataType::i32, false, type)[large_tile ? 1 : 0]};
  const std::vector<std::pair<Op, Op>> ops =
      every_op ? std::vector<std::pair<Op, Op>>{{Op::n, Op::n}, {Op::n, Op::t}, {Op::t, Op::n}, {Op::t, Op::t}}
               : std::vector<std::pair<Op, Op>>{{Op::n, Op::n}};
  for (Layout layout : {Layout::row_major, Layout::col_major})
    for (const auto& [op_a, op_b] : ops)
      for (const Size& s : sizes) {
        const auto r = check_int8_call(type, layout, op_a, op_b, s, ++turn, 4, 8, options, rng);
        ++runs;
        if (!r.passed && ++failures <= 5) FAIL_CHECK("seed ", test::run_seed(), ": ", r.detail);
        if (r.passed && r.timing.kernel != Kernel::coopmat) FAIL_CHECK("ran ", to_string(r.timing.kernel));
      }
  report_grid(name, runs, failures);
}

// i8 and u8 products whose B the engine turns N x K into the workspace first (kernels/turn_b.cpp: the kernel's
// op(B) is B itself and its M at least 256): both layouts (a column-major call turns when its N is the
// kernel's M) and every op of A, ragged K and N across the turn's 128 x 128 blocks, its 16-byte pieces
// and the 16-byte row rounding, padded leading dimensions (16-byte loads) and odd ones (byte loads), batches with their own B and with B shared; beside them the
// same shapes whose B is not turned (op(B) transposed, M short). Each product says in its configuration
// whether B was turned, which must be what the rule says.
void run_turned_b(const std::string& name) {
  auto rng = test::case_rng(name);
  int failures = 0, runs = 0, turned = 0;
  size_t turn = 0;
  const std::vector<Size> sizes = {{256, 33, 45}, {600, 150, 131}, {40, 530, 64}, {255, 20, 16}};
  for (const DataType type : {DataType::i8, DataType::u8})
    for (const Layout layout : {Layout::row_major, Layout::col_major})
      for (const auto& [op_a, op_b] : {std::pair{Op::n, Op::n}, {Op::t, Op::n}, {Op::n, Op::t}})
        for (const Size& s : sizes) {
          const auto r = check_int8_call(type, layout, op_a, op_b, s, ++turn, 2, 4, {.kernel = Kernel::coopmat}, rng);
          const bool row = layout == Layout::row_major;
          const bool expect = (row ? s.m : s.n) >= 256 && (row ? op_b : op_a) == Op::n;
          ++runs;
          if (!r.passed && ++failures <= 5) FAIL_CHECK("seed ", test::run_seed(), ": ", r.detail);
          const bool says = r.timing.config.find("B turned") != std::string::npos;
          if (says != expect) {
            FAIL_CHECK(fmt::format("{} {}x{}x{} {} op_a {} op_b {}: B turned is {}, the rule says {}", to_string(type),
                                   s.m, s.n, s.k, row ? "row-major" : "column-major", op_a == Op::t ? "t" : "n",
                                   op_b == Op::t ? "t" : "n", says, expect));
          }
          turned += says;
        }
  CHECK(turned == 12);  // of the 48: NN and TN at the two tall row-major sizes, NN and NT at the wide column-major one
  report_grid(name, runs, failures);
}

// The fast path alone (the WHOLE constant, kernels/coopmat.cpp): a product of whole tiles and K steps, A and
// B 16-byte aligned, C stored directly, alone and in a batch; then the same with one of those off (K, M, N,
// A's, B's or C's rows, beta, a batch stride), which must take the checked pipeline. tests/test_coopmat_config.cpp
// checks which pipeline each gets; here each must be right.
// The products of run_whole_products on an m x n grid of whole tiles (m, n multiples of 8): whole ones,
// alone and batched, then each with one condition of the fast path alone broken.
std::vector<GemmDesc> whole_products(int64_t m, int64_t n) {
  GemmDesc whole;
  whole.type = DataType::f16, whole.c_type = DataType::f32;
  whole.m = m, whole.n = n, whole.k = 64, whole.lda = 64, whole.ldb = n, whole.ldc = n;
  GemmDesc batched = whole;
  batched.batch = 2, batched.stride_a = m * 64, batched.stride_b = 64 * n, batched.stride_c = m * n;
  std::vector<GemmDesc> descs = {whole, batched};
  const auto with = [&](auto change) {
    GemmDesc x = whole;
    change(x);
    descs.push_back(x);
  };
  with([](GemmDesc& x) { x.k = 60; });
  with([](GemmDesc& x) { x.m -= 8, x.ldc += 8; });
  with([](GemmDesc& x) { x.n -= 8; });
  with([](GemmDesc& x) { x.lda = 68; });
  with([](GemmDesc& x) { x.ldb += 4; });
  with([](GemmDesc& x) { x.ldc += 4; });
  with([](GemmDesc& x) { x.beta = 1.0; });
  with([&](GemmDesc& x) { x = batched, x.stride_a = m * 64 + 4; });
  with([&](GemmDesc& x) { x = batched, x.stride_c = m * n + 4; });
  with([](GemmDesc& x) { x.k = 256, x.lda = 256; });  // several K steps
  return descs;
}

// Why `e` cannot run bf16 on the kernel with C f32 and C bf16, or nothing where it can.
std::optional<std::string> bf16_missing(Engine& e) {
  try {
    for (const DataType c : {DataType::f32, DataType::bf16}) {
      e.check_supported(DataType::bf16, c, {.kernel = Kernel::coopmat});
    }
    return std::nullopt;
  } catch (const Error& err) {
    return std::string(err.what());
  }
}

// Each of whole_products(m, n) on `e` with `tile` (16: chosen by shape): f16 with fp32 and fp16 sums, and
// bf16 to bf16 (C through the staging area, 16 bytes at a time) where the device has it; returns the
// products checked.
int run_whole_products_on(Engine& e, int64_t m, int64_t n, uint32_t tile, std::mt19937_64& rng, int& failures) {
  struct Variant {
    DataType a, c;
    bool f16_acc;
  };
  std::vector<Variant> variants = {{DataType::f16, DataType::f32, false}, {DataType::f16, DataType::f16, true}};
  if (!bf16_missing(e)) variants.push_back({DataType::bf16, DataType::bf16, false});
  int runs = 0;
  for (const Variant& v : variants) {
    for (GemmDesc d : whole_products(m, n)) {
      d.type = v.a, d.c_type = v.c;
      const GemmOptions options{.kernel = Kernel::coopmat, .tile = tile, .f16_accumulate = v.f16_acc};
      const auto r = test::check_aligned_call(e, d, options, rng);
      ++runs;
      if (!r.passed && ++failures <= 5) FAIL_CHECK("seed ", test::run_seed(), ": ", r.detail);
    }
  }
  return runs;
}

// The KHR kernel's launch with `tile` for an f16 product on `device` (fp32 or fp16 sums), and its BUFFERS.
kernels::LaunchShape whole_launch(const DeviceInfo& device, bool f16_acc, uint32_t tile) {
  const kernels::Types t{DataType::f16, f16_acc ? DataType::f16 : DataType::f32, f16_acc};
  return kernels::coopmat_launch(device, t, {.kernel = Kernel::coopmat, .tile = tile, .f16_accumulate = f16_acc},
                                 4 * tile, 4 * tile, 64, 1);
}
uint32_t buffers_of(const kernels::LaunchShape& s) {
  uint32_t buffers = 0;
  for (const auto& c : s.constants) buffers = c.name == "BUFFERS" ? c.value : buffers;
  return buffers;
}

// The pipeline that holds the fast path alone (WHOLE), on a 64 x 128 grid of the device's tiles; then on
// an engine whose shared memory is lowered until the largest tile takes one buffer, on a grid of that tile:
// there, untransposed 16-bit products take the straight form (shaders/coopmat.comp STRAIGHT), which
// double-buffered tiles never run.
void run_whole_products(const std::string& name) {
  auto rng = test::case_rng(name);
  int failures = 0;
  int runs = run_whole_products_on(test::engine(), 64, 128, 16, rng, failures);
  const DeviceInfo& device = test::engine().device();
  const kernels::Types sums32{DataType::f16, DataType::f32, false}, sums16{DataType::f16, DataType::f16, true};
  const auto largest = kernels::coopmat_largest_launch(device, sums32, {.kernel = Kernel::coopmat});
  const auto largest16 =
      kernels::coopmat_largest_launch(device, sums16, {.kernel = Kernel::coopmat, .f16_accumulate = true});
  const uint32_t tile = largest.tile[0], m = 2 * largest.tile[1], n = 2 * largest.tile[0];
  const uint32_t limit = std::min(largest.shared_bytes, largest16.shared_bytes) - 1;
  if (buffers_of(whole_launch(device, false, tile)) == 2) {
    setenv("VKGEMM_TEST_MAX_SHARED_MEMORY", std::to_string(limit).c_str(), 1);
    auto one = test::make_engine();
    unsetenv("VKGEMM_TEST_MAX_SHARED_MEMORY");
    for (const bool f16_acc : {false, true}) REQUIRE(buffers_of(whole_launch(one->device(), f16_acc, tile)) == 1);
    runs += run_whole_products_on(*one, m, n, tile, rng, failures);
  }
  report_grid(name, runs, failures);
}

// Whether this device runs bf16 on the kernel (C f32 and bf16); the case's skip when it does not: bf16
// matrices need VK_KHR_shader_bfloat16 and a bf16 shape, which neither lavapipe has (where they must run,
// the support suite's bf16= expectation asserts it).
bool bf16_runs_here() {
  const std::optional<std::string> missing = bf16_missing(test::engine());
  if (missing) test::skip(fmt::format("the bf16 grid: {}", *missing));
  return !missing;
}

// bf16 (C f32 and C bf16, fp32 sums) over `sizes` at the small or large tile: every op and layout, aligned
// calls (lds padded by 8 elements, 16 bytes) and unaligned ones, the scalars and batch kinds taking turns.
void run_bf16_grid(const std::vector<Size>& sizes, bool large_tile, const std::string& name) {
  auto rng = test::case_rng(name);
  int failures = 0, runs = 0;
  size_t turn = 0;
  for (const DataType c : {DataType::f32, DataType::bf16}) {
    const GemmOptions options{.kernel = Kernel::coopmat, .tile = device_tiles(c, false, DataType::bf16)[large_tile ? 1 : 0]};
    for (Layout layout : {Layout::row_major, Layout::col_major})
      for (Op op_a : {Op::n, Op::t})
        for (Op op_b : {Op::n, Op::t})
          for (const Size& s : sizes) {
            ++turn;
            const bool aligned = turn % 3 != 1;
            GemmDesc d = make_desc(layout, op_a, op_b, s, aligned ? 8 : 3, turn % 3 == 0 ? 3 : 1,
                                   turn % 6 == 0 ? 'A' : turn % 9 == 0 ? 'B' : ' ', kScalars[turn % kScalars.size()], c);
            d.type = DataType::bf16;
            const auto r = aligned ? test::check_aligned_call(d, options, rng) : test::check_gemm_call(d, options, rng);
            ++runs;
            if (!r.passed && ++failures <= 5) FAIL_CHECK("seed ", test::run_seed(), ": ", r.detail);
            if (r.passed && r.timing.kernel != Kernel::coopmat) FAIL_CHECK("ran ", to_string(r.timing.kernel));
          }
  }
  report_grid(name, runs, failures);
}

}  // namespace

TEST_SUITE("coopmat") {
  TEST_CASE("grid small: every op, layout and C type at sizes around the fragment and tile sides") {
    run_grid(small_sizes(), false, "coopmat small");
  }
  TEST_CASE("grid fast path: interior aligned tiles, K through the unrolled loop, small tile") {
    if (!runs_here()) return;
    run_grid(fast_sizes(device_tiles(DataType::f32, false)[0]), false, "coopmat fast small");
  }
  TEST_CASE("grid fast path: large tile") {
    if (!runs_here()) return;
    const uint32_t tile = device_tiles(DataType::f32, false)[1];
    // The large tile's rows are twice its warp rows, its columns four warp columns: these cross both.
    run_grid({{tile, tile, 160}, {tile + 8, 2 * tile - 8, 200}, {33, 70, 40}}, true, "coopmat fast large");
  }
  TEST_CASE("the fast path alone where the whole product allows it, the checked pipeline beside it") {
    if (!runs_here()) return;
    run_whole_products("coopmat whole products");
  }
  TEST_CASE("grid i8 and u8: ops, layouts, tiles, across chunks, fragments and the fast loop (sampled)") {
    if (!runs_here() || !int8_runs_here()) return;
    const std::vector<Size> small = {{1, 1, 1}, {8, 8, 16}, {7, 9, 13}, {33, 31, 40}, {17, 40, 33}};
    run_int8_grid(DataType::i8, true, small, false, "coopmat i8 small");
    run_int8_grid(DataType::u8, false, small, false, "coopmat u8 small");
    const uint32_t tile = device_tiles(DataType::i32, false, DataType::i8)[1];
    run_int8_grid(DataType::i8, false, {{tile, tile, 80}, {tile + 8, 2 * tile - 8, 112}}, true, "coopmat i8 large");
  }
  TEST_CASE("i8 and u8 with B turned N x K first: layouts, ops, ragged K and N, batches") {
    if (!runs_here() || !int8_runs_here()) return;
    run_turned_b("coopmat turned B");
  }
  // Its own case (--test-case="*bf16*"): no device CI has runs it; a skip there (tools/dev/coopmat-lavapipe.sh
  // accepts this one skip, which names the missing feature or shape).
  TEST_CASE("grid bf16: C f32 and bf16, every op and layout, across fragments, tiles and the fast loop") {
    if (!runs_here() || !bf16_runs_here()) return;
    run_bf16_grid(small_sizes(), false, "coopmat bf16 small");
    const std::array<uint32_t, 2> tiles = device_tiles(DataType::f32, false, DataType::bf16);
    run_bf16_grid(fast_sizes(tiles[0]), false, "coopmat bf16 fast small");
    const int64_t t = tiles[1];
    run_bf16_grid({{t, t, 160}, {t + 8, 2 * t - 8, 200}, {33, 70, 40}}, true, "coopmat bf16 fast large");
  }
  TEST_CASE("K = 0 and alpha = 0: C = beta C, A and B never read") {
    if (!runs_here()) return;
    auto rng = test::case_rng("coopmat empty sum");
    for (const CTypes& ct : kCTypes) {
      if (!type_runs_here(ct)) continue;
      for (const auto& [k, alpha] : {std::pair<int64_t, double>{0, 1.0}, {40, 0.0}}) {
        const GemmDesc d = make_desc(Layout::row_major, Op::n, Op::n, {40, 40, k}, 8, 1, ' ', {alpha, 0.5}, ct.c);
        const auto r = test::check_aligned_call(d, {.kernel = Kernel::coopmat, .f16_accumulate = ct.f16_acc}, rng);
        CHECK_MESSAGE(r.passed, r.detail);
      }
    }
  }
  TEST_CASE("transposed f16 calls plan the coopmat kernel where coopmat2 cannot run") {
    if (!runs_here()) return;
    const Engine& e = test::engine();
    if (e.device().coopmat2) {
      MESSAGE("coopmat2 runs here and takes auto first");
      return;
    }
    auto rng = test::case_rng("coopmat auto");
    const GemmDesc d = make_desc(Layout::col_major, Op::t, Op::t, {40, 50, 60}, 8, 1, ' ', {1.0, 0.0}, DataType::f32);
    const auto r = test::check_aligned_call(d, {}, rng);
    CHECK_MESSAGE(r.passed, r.detail);
    CHECK(r.timing.kernel == Kernel::coopmat);
  }
}
