// The cooperative-matrix kernels' choices, on a described device: what an NVIDIA H100/H200 reports (the
// shapes, scopes and limits its driver lists) and variations that lack one thing each. These run anywhere,
// so the tile and fragment choices and the refusals are checked even where the kernels cannot run.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <string>

#include <fmt/format.h>

#include "kernels/kernel_spec.hpp"  // find_spec: the kernels' pin rules
#include "kernels/push_constants.hpp"
#include "kernels/registry.hpp"
#include "plan/schedule.hpp"
#include "published_rows.hpp"
#include "spec_constant.hpp"
#include "described_devices.hpp"
#include "support.hpp"
#include "vkgemm/error.hpp"

using namespace vkgemm;
using kernels::Types;

namespace {

using test::nvidia;
using test::nvidia_bf16;
using test::nvidia_int8;
using test::shape;

using test::spec_constant;


template <typename F>
void expect_error(F&& f, const std::string& words) {
  try {
    f();
    FAIL("no error; expected one mentioning \"", words, "\"");
  } catch (const Error& e) {
    CHECK_MESSAGE(std::string(e.what()).find(words) != std::string::npos, std::string(e.what()));
  }
}

// coopmat2 for a type it runs in one slice (int8): f16's tiles at 4096^3 (256 x 128 workgroups), and
// 128 x 8192 x 4096, which f16 splits in 2, unsplit. `plan(m, n, k)` plans the product on coopmat2.
template <typename Plan>
void check_coopmat2_one_slice(const Plan& plan, const std::string& shader) {
  const auto big = plan(4096, 4096, 4096);
  CHECK(big.main.shader == shader);
  CHECK(big.main.tile == std::array<uint32_t, 2>{256, 128});
  const auto thin = plan(128, 8192, 4096);
  CHECK(thin.splits <= 1);
  CHECK(thin.reduce.shader.empty());
}

// coopmat2 for bf16 (`planned(device, c, kernel, m, n, k, beta_zero)` plans it): the bf16 main pass with fp32
// sums, split along K as f16 is (128 x 8192 x 4096 in 2); a C bf16 with beta 0 in one slice stored by the main
// pass itself, else (read for beta, or split) through the fp32 workspace and the bf16 reduce pass; a C f32
// through the workspace only when split.
template <typename Planned>
void check_coopmat2_bf16(const DeviceInfo& d, DataType c, const Planned& planned) {
  const bool bf16_c = c == DataType::bf16;
  const auto big = planned(d, c, Kernel::coopmat2, 4096, 4096, 4096, true);
  CHECK(big.main.shader == (bf16_c ? "coopmat2_bf16_bf16" : "coopmat2_bf16_f32"));
  CHECK(big.main.tile == std::array<uint32_t, 2>{256, 128});
  CHECK(big.splits == 1);
  CHECK(big.reduce.shader.empty());
  // A K bound's later chunks of a stored bf16 C go through the workspace: the pieces are cut with room for it.
  // Mutation (shown once by hand): coopmat2's pin without it fails here.
  const kernels::Pinning pinned = kernels::find_spec(Kernel::coopmat2)->pin(big, d, {.kernel = Kernel::coopmat2});
  CHECK(pinned.blocking.workspace_element_size == (bf16_c ? 4u : 0u));
  const std::string reduce = bf16_c ? "splitk_reduce_bf16_bf16" : "splitk_reduce_f16_f32";
  const auto with_beta = planned(d, c, Kernel::coopmat2, 4096, 4096, 4096, false);
  CHECK(with_beta.main.shader == "coopmat2_bf16_f32");
  CHECK(with_beta.reduce.shader == (bf16_c ? reduce : std::string()));
  for (const bool beta_zero : {true, false}) {
    const auto thin = planned(d, c, Kernel::coopmat2, 128, 8192, 4096, beta_zero);
    CHECK(thin.main.shader == "coopmat2_bf16_f32");
    CHECK(thin.splits == 2);
    CHECK(thin.reduce.shader == reduce);
    CHECK(thin.workspace_element_size == 4);  // fp32 sums, twice a bf16 C's bytes
  }
}

// The engine's schedule of a bf16 -> bf16 product on coopmat2: with beta 0 the main pass stores C itself and
// auto takes coopmat2, as for f16; with beta, C goes through the workspace. Under a K bound the later chunks
// add to what the first wrote (beta 1): the first stores C, the others go through the workspace. Mutation
// (shown once by hand): the whole product planned with beta_zero unset (schedule.cpp's turn) fails the kernel
// and the stored main pass.
void check_coopmat2_bf16_schedule(const DeviceInfo& d, const tuning::Table& table) {
  GemmDesc desc;
  desc.type = DataType::bf16, desc.c_type = DataType::bf16;
  desc.m = desc.n = desc.k = 1024, desc.lda = desc.ldb = desc.ldc = 1024;
  const detail::Schedule stored = detail::schedule_product(desc, {}, d, table);
  CHECK(stored.kernel == Kernel::coopmat2);
  CHECK(stored.config.find("C through fp32") == std::string::npos);
  REQUIRE(stored.pieces.size() == 1);
  CHECK(stored.pieces.front().main.shape.shader == "coopmat2_bf16_bf16");
  desc.beta = 0.5;
  const detail::Schedule read = detail::schedule_product(desc, {.kernel = Kernel::coopmat2}, d, table);
  CHECK(read.config.find("C through fp32") != std::string::npos);
  REQUIRE(read.pieces.size() == 1);
  CHECK(read.pieces.front().main.shape.shader == "coopmat2_bf16_f32");
  REQUIRE(read.pieces.front().reduce);
  CHECK(read.pieces.front().reduce->shape.shader == "splitk_reduce_bf16_bf16");
  desc.beta = 0.0;
  GemmOptions bounded{.kernel = Kernel::coopmat2};
  bounded.max_k_per_submission = 256;
  const detail::Schedule chunks = detail::schedule_product(desc, bounded, d, table);
  REQUIRE(chunks.pieces.size() == 4);
  CHECK(chunks.pieces.front().main.shape.shader == "coopmat2_bf16_bf16");
  for (size_t i = 1; i < chunks.pieces.size(); ++i) CHECK(chunks.pieces[i].main.shape.shader == "coopmat2_bf16_f32");
}

}  // namespace

TEST_SUITE("coopmat config") {
  TEST_CASE("KHR coopmat on an NVIDIA-like device: 16x16x16 fragments, subgroups of 32, within 48 KiB") {
    const DeviceInfo d = nvidia();
    for (bool acc16 : {false, true}) {
      const Types t{DataType::f16, acc16 ? DataType::f16 : DataType::f32, acc16};
      CHECK_NOTHROW(kernels::check_matrix_kernel(d, Kernel::coopmat, t));
      // fp32 sums: the wide tile (128x256, UNROLL 2) where the wave model expects it first (on the H200's 132
      // SMs: 2048^3, one wave of 128 tiles against two of 128x128; 1536^3; 8 x 1024^3; not 4096 x 512 x 14336,
      // 64 wide tiles against 128 large); fp16 sums: the wide tile (256x256, subgroups of 128x64 standing 2 high,
      // single-buffered, UNROLL 4) where it still gives 256 workgroups; 128x128 where that gives 128 (batch
      // entries counted); else 64x64; each also by name. Columns: m, n, k, batch, tile, then the tile's rows
      // and columns with fp32 sums, and with fp16 sums. Mutations (shown once by hand): the batch left out of the
      // count, the wide tile everywhere, or the wide tile modelled with the large one's figures, each fail a row.
      for (const std::array<uint32_t, 9>& row :
           {std::array<uint32_t, 9>{4096, 4096, 4096, 1, 16, 128, 256, 256, 256},
            {2048, 2048, 2048, 1, 16, 128, 256, 128, 128},
            {1536, 1536, 1536, 1, 16, 128, 256, 128, 128},
            {4096, 512, 14336, 1, 16, 128, 128, 128, 128},
            {1024, 1024, 1024, 8, 16, 128, 256, 128, 128},
            {1024, 1024, 1024, 1, 16, 64, 64, 64, 64},
            {256, 256, 256, 1, 16, 64, 64, 64, 64},
            {4096, 4096, 4096, 1, 64, 64, 64, 64, 64},
            {100, 100, 100, 1, 128, 128, 128, 128, 128},
            {100, 100, 100, 1, 256, 128, 256, 256, 256}}) {
        const auto [m, n, k, batch, tile, bm32, bn32, bm16, bn16] = row;
        const uint32_t bm = acc16 ? bm16 : bm32, bn = acc16 ? bn16 : bn32;
        CAPTURE(row[0]);  // m, n, k, batch and the tile option: CAPTURE captures, not a binding (clang 14)
        CAPTURE(row[1]);
        CAPTURE(row[2]);
        CAPTURE(row[3]);
        CAPTURE(row[4]);
        const auto s = kernels::coopmat_launch(d, t, {.kernel = Kernel::coopmat, .tile = tile}, m, n, k, batch);
        const uint32_t wg = spec_constant(s, "WG"), bk = spec_constant(s, "BK");
        const uint32_t wm = spec_constant(s, "WM"), wn = spec_constant(s, "WN");
        CHECK(spec_constant(s, "BM") == bm);
        CHECK(spec_constant(s, "BN") == bn);
        CHECK(s.tile[0] == bn);
        CHECK(s.tile[1] == bm);
        CHECK(spec_constant(s, "UNROLL") == (bn == 256 && !acc16 ? 2u : 4u));
        if (acc16 && bm == 256) {
          CHECK(spec_constant(s, "WM") == 128);
          CHECK(spec_constant(s, "WN") == 64);
          CHECK(spec_constant(s, "BUFFERS") == 1);
        }
        CHECK(spec_constant(s, "TM") == 16);
        CHECK(spec_constant(s, "TN") == 16);
        CHECK(spec_constant(s, "TK") == 16);
        CHECK(spec_constant(s, "SG") == 32);
        CHECK(s.required_subgroup_size == 32);
        CHECK(s.workgroup_size[0] == wg);
        CHECK(wg == (bm / wm) * (bn / wn) * 32);
        // The shader's loads: whole 16-byte chunks per invocation, for A and for B.
        CHECK((bm * bk / 8) % wg == 0);
        CHECK((bk * bn / 8) % wg == 0);
        CHECK(s.shared_bytes <= 48u * 1024u);
        const auto grid = kernels::dispatch_grid(d, s, m, n);
        CHECK(grid[0] == (n + bn - 1) / bn);
        CHECK(grid[1] == (m + bm - 1) / bm);
      }
    }
  }

  TEST_CASE("KHR coopmat takes each vendor's shapes and subgroup sizes") {
    // lavapipe 26: 8x8x8 at subgroup 8, 32 KiB, a CPU; AMD RDNA3 wave64: 16x16x16 at 64; Intel: 8x8x16 at 16.
    struct Case {
      const char* vendor;
      uint32_t sg, tm, tn, tk, shared_kib;
      uint32_t large_bm, large_bn, small_bn, wm, wn, buffers;
    };
    // wave64's 128x256 tile double-buffered needs 68 KiB with fp32 sums: one buffer within 64 KiB (two with
    // fp16 sums, whose staging fragments take half).
    for (const Case& c : {Case{"lavapipe", 8, 8, 8, 8, 32, 32, 64, 32, 16, 16, 2},
                          Case{"wave64", 64, 16, 16, 16, 64, 128, 256, 64, 64, 64, 1},
                          Case{"intel", 16, 8, 8, 16, 64, 64, 128, 32, 32, 32, 2}}) {
      CAPTURE(c.vendor);
      DeviceInfo d = nvidia();
      d.name = c.vendor;
      if (std::string(c.vendor) == "lavapipe") d.type = DeviceType::cpu;  // small warp tiles (compile time)
      d.min_subgroup_size = std::min(c.sg, 8u);
      d.max_subgroup_size = std::max(c.sg, 32u);
      d.subgroup_size = c.sg;
      d.max_shared_memory = c.shared_kib * 1024;
      d.coopmat_shapes.clear();
      for (const char* acc : {"f16", "f32"}) d.coopmat_shapes.push_back(shape(c.tm, c.tn, c.tk, acc, "subgroup"));
      for (bool acc16 : {false, true}) {
        const Types t{DataType::f16, acc16 ? DataType::f16 : DataType::f32, acc16};
        CHECK_NOTHROW(kernels::check_matrix_kernel(d, Kernel::coopmat, t));
        const auto large = kernels::coopmat_launch(d, t, {.kernel = Kernel::coopmat}, 1u << 14, 1u << 14, 4096, 1);
        const auto small = kernels::coopmat_launch(d, t, {.kernel = Kernel::coopmat}, 64, 64, 64, 1);
        CHECK(large.required_subgroup_size == c.sg);
        CHECK(spec_constant(large, "SG") == c.sg);
        CHECK(spec_constant(large, "TM") == c.tm);
        CHECK(spec_constant(large, "TN") == c.tn);
        CHECK(spec_constant(large, "TK") == c.tk);
        CHECK(spec_constant(large, "BM") == c.large_bm);
        CHECK(spec_constant(large, "BN") == c.large_bn);
        CHECK(spec_constant(large, "WM") == c.wm);
        CHECK(spec_constant(large, "WN") == c.wn);
        CHECK(large.workgroup_size[0] == 8 * c.sg);
        CHECK(small.tile[0] == c.small_bn);
        CHECK(small.workgroup_size[0] == 4 * c.sg);
        CHECK(spec_constant(large, "BUFFERS") == (acc16 ? 2u : c.buffers));
        CHECK(large.shared_bytes <= d.max_shared_memory);
        // The tile is named by its columns: each name gives its tile back (the engine pins it so).
        CHECK(kernels::coopmat_launch(d, t, {.kernel = Kernel::coopmat, .tile = c.small_bn}, 1u << 14, 1u << 14, 4096, 1)
                  .tile[0] == c.small_bn);
      }
    }
  }

  TEST_CASE("KHR coopmat refusals name what the device lists") {
    DeviceInfo d = nvidia();
    d.coopmat_shapes = {shape(16, 16, 16, "f32", "subgroup")};
    expect_error([&] { kernels::check_matrix_kernel(d, Kernel::coopmat, {DataType::f16, DataType::f16, true}); },
                 "lists 16x16x16 f16*f16+f32->f32 subgroup");
    d.coopmat_shapes = {shape(16, 16, 16, "f32", "workgroup"), shape(6, 6, 6, "f32", "subgroup")};
    expect_error([&] { kernels::check_matrix_kernel(d, Kernel::coopmat, {DataType::f16, DataType::f32, false}); },
                 "6x6x6");
    d = nvidia();
    d.subgroup_size_control = false;
    d.subgroup_size = 24;
    expect_error([&] { kernels::check_matrix_kernel(d, Kernel::coopmat, {DataType::f16, DataType::f32, false}); },
                 "power of two");
    // Too little shared memory for two buffers: one.
    d = nvidia();
    d.max_shared_memory = 32 * 1024;
    const auto s = kernels::coopmat_launch(d, {DataType::f16, DataType::f32, false}, {.kernel = Kernel::coopmat},
                                           1u << 14, 1u << 14, 4096, 1);
    CHECK(spec_constant(s, "BUFFERS") == 1);
    CHECK(s.shared_bytes <= 32u * 1024u);
  }

  TEST_CASE("coopmat2 on an NVIDIA-like device: tiles by shape") {
    const DeviceInfo d = nvidia();
    CHECK_NOTHROW(kernels::check_matrix_kernel(d, Kernel::coopmat2, Types{DataType::f16, DataType::f32, false}));
    // m, n, k (0: unknown), tile option, fp16 sums; then the tile chosen: bm, bn, bk, invocations, pipelining.
    struct Case {
      uint32_t m, n, k, tile;
      bool acc16;
      uint32_t bm, bn, bk, wg, prefetch;
    };
    for (const Case& c : {Case{4096, 4096, 4096, 16, false, 128, 256, 64, 256, 0},
                          // 8192^3: the model has 192x128 8 % ahead, less than its margin: 128x256 stays.
                          Case{8192, 8192, 8192, 16, false, 128, 256, 64, 256, 0},
                          Case{4096, 4096, 4096, 16, true, 256, 256, 32, 256, 0},
                          // Too few large tiles unless split along K: large when K allows 2048 per slice;
                          // else the model, where 128x128 fills one wave (128 tiles).
                          Case{4096, 512, 1024, 16, false, 128, 128, 64, 256, 0},
                          // Where 128x256 would need slices under 2048 deep, 128x128 split along K.
                          Case{128, 8192, 4096, 16, false, 128, 128, 64, 256, 0},
                          Case{4096, 512, 14336, 16, false, 128, 256, 64, 256, 0},
                          Case{4096, 512, 14336, 16, true, 256, 256, 32, 256, 0},
                          Case{2048, 2048, 2048, 16, true, 128, 128, 64, 256, 0},
                          Case{100, 100, 100, 16, false, 64, 64, 64, 128, 0},
                          // Narrower than 128 x 128: 64x64 (a batch of 256 of 64^3 below), not the model's.
                          Case{4096, 96, 4096, 16, false, 64, 64, 64, 128, 0},
                          // Exactly 64 wide and long enough for two 256-row tiles an SM: 256x64 (a network layer
                          // over a frame's pixels); narrower (an edge tile), too short, or 65 wide: 64x64.
                          Case{2073600, 64, 64, 16, false, 256, 64, 64, 128, 0},
                          Case{65536, 64, 64, 16, true, 256, 64, 64, 128, 0},
                          Case{2073600, 48, 64, 16, false, 64, 64, 64, 128, 0},
                          Case{65536, 33, 64, 16, true, 64, 64, 64, 128, 0},
                          Case{2073600, 32, 64, 16, false, 64, 64, 64, 128, 0},
                          Case{2073600, 4, 64, 16, false, 64, 64, 64, 128, 0},
                          Case{65280, 64, 64, 16, false, 64, 64, 64, 128, 0},
                          Case{2073600, 65, 64, 16, false, 64, 64, 64, 128, 0},
                          Case{64, 64, 64, 512, false, 256, 64, 64, 128, 0},
                          // The wave model among the measured tiles (fp32 sums): 128x256 leaves 3072^3's
                          // third wave 18% full; 128x128 fills 87% of its fifth, 192x128 90% of its third.
                          Case{3072, 3072, 3072, 16, false, 192, 128, 64, 256, 0},
                          // 1536^3: one wave of 72 tiles of 128x256, 96 of 192x128 or 128 of 96x192.
                          Case{1536, 1536, 1536, 16, false, 96, 192, 64, 256, 0},
                          Case{2560, 2560, 2560, 16, false, 96, 192, 64, 256, 0},
                          Case{5000, 5000, 5000, 16, false, 192, 128, 64, 256, 0},
                          // K-light: each tile's fixed cost against 4 to 8 K steps; 128x128's is less. 64x64
                          // is not modelled (level with 128x128 in the model at 8192^2 x 256, 14 % slower).
                          Case{8192, 8192, 256, 16, false, 128, 128, 64, 256, 0},
                          Case{4096, 14336, 512, 16, false, 128, 128, 64, 256, 0},
                          Case{4096, 4096, 512, 16, false, 128, 128, 64, 256, 0},
                          Case{64, 64, 64, 192, false, 192, 128, 64, 256, 0},
                          // At most 32 rows: 32 x 64 (a 64-row tile would lie half outside C).
                          Case{32, 4096, 8192, 16, false, 32, 64, 64, 128, 0},
                          Case{7, 100, 100, 16, true, 32, 64, 64, 128, 0},
                          Case{33, 4096, 8192, 16, false, 64, 64, 64, 128, 0},
                          Case{4096, 4096, 4096, 32, false, 32, 64, 64, 128, 0},
                          Case{4096, 4096, 4096, 64, false, 64, 64, 64, 128, 0},
                          Case{64, 64, 64, 256, false, 128, 256, 64, 256, 0},
                          Case{64, 64, 64, 256, true, 256, 256, 32, 256, 0}}) {
      CAPTURE(c.m);
      CAPTURE(c.n);
      CAPTURE(c.k);
      CAPTURE(c.tile);
      CAPTURE(c.acc16);
      const Types t{DataType::f16, c.acc16 ? DataType::f16 : DataType::f32, c.acc16};
      const auto s = kernels::coopmat2_launch(d, t, {.kernel = Kernel::coopmat2, .tile = c.tile}, c.m, c.n, c.k);
      CHECK(spec_constant(s, "WG") == c.wg);
      CHECK(s.workgroup_size[0] == c.wg);
      CHECK(spec_constant(s, "BM") == c.bm);
      CHECK(spec_constant(s, "BN") == c.bn);
      CHECK(spec_constant(s, "BK") == c.bk);
      CHECK(spec_constant(s, "PREFETCH") == c.prefetch);
      // The fast loop unrolled 16 K steps at the fp32-sum 128x256, 192x128 and 96x192 tiles and at 256x64 with
      // either sums, 8 at every other.
      const bool long_run =
          (c.bm == 256 && c.bn == 64) ||
          (!c.acc16 && ((c.bm == 128 && c.bn == 256) || (c.bm == 192 && c.bn == 128) || (c.bm == 96 && c.bn == 192)));
      CHECK(spec_constant(s, "UNROLL") == (long_run ? 16u : 8u));
      CHECK(s.tile[0] == c.bn);
      CHECK(s.tile[1] == c.bm);
      CHECK(s.required_subgroup_size == 0);
    }
  }

  TEST_CASE("coopmat2: a batch of products narrower than 128 x 128 runs 64x64, however many it fills") {
    // 256 x 64^3 fills the device with 128x128 tiles too, where the model would choose them; measured, 64x64
    // runs it far faster (docs/design/coopmat2.md).
    const Types t{DataType::f16, DataType::f16, false};
    const auto s = kernels::coopmat2_launch(nvidia(), t, {.kernel = Kernel::coopmat2}, 64, 64, 64, 256);
    CHECK(s.tile[0] == 64);
    CHECK(s.tile[1] == 64);
  }

  TEST_CASE("coopmat2: 128 x 8192 x 4096 runs 128x128 in 2 slices along K") {
    kernels::Problem p;
    p.types = {DataType::f16, DataType::f16, false};
    p.m = 128, p.n = 8192, p.k = 4096;
    p.trans_b = true;
    p.lda = p.ldb = 4096, p.ldc = 8192;
    const kernels::KernelLaunch plan = kernels::plan(nvidia(), tuning::Table{}, {.kernel = Kernel::coopmat2}, p);
    CHECK(plan.description.find("128x128 split 2") != std::string::npos);
    CHECK(plan.splits == 2);
  }

  TEST_CASE("coopmat2's pieces keep the whole product's tile: 192x128 pins as 192, 96x192 as 96, 32x64 as 32, 256x64 as 512") {
    const DeviceInfo d = nvidia();
    const tuning::Table table;
    kernels::Problem p;
    p.types = {DataType::f16, DataType::f16, false};
    p.m = p.n = p.k = p.lda = p.ldb = p.ldc = 1536;
    for (const uint32_t tile : {16u, 32u, 64u, 96u, 128u, 192u, 256u, 512u}) {
      CAPTURE(tile);
      const kernels::KernelLaunch whole = kernels::plan(d, table, {.kernel = Kernel::coopmat2, .tile = tile}, p);
      const kernels::Pinning pinned = kernels::find_spec(Kernel::coopmat2)->pin(whole, d, {.kernel = Kernel::coopmat2});
      const kernels::KernelLaunch piece = kernels::plan(d, table, pinned.options, p);
      CHECK(piece.description == whole.description);
      CHECK(pinned.blocking.rows == whole.main.tile[1]);
      CHECK(pinned.blocking.cols == whole.main.tile[0]);
    }
    // 16 x 64 pins as 32, the thin tiles' name, and comes back 16 x 64 on the same rows.
    p.m = 16, p.n = p.k = p.ldb = p.ldc = 4096, p.lda = 4096;
    const kernels::KernelLaunch whole = kernels::plan(d, table, {.kernel = Kernel::coopmat2}, p);
    const kernels::Pinning pinned = kernels::find_spec(Kernel::coopmat2)->pin(whole, d, {.kernel = Kernel::coopmat2});
    CHECK(pinned.options.tile == 32);
    CHECK(kernels::plan(d, table, pinned.options, p).description.find("16x64") == 0);
  }

  TEST_CASE("each missing piece is named") {
    const Types t{DataType::f16, DataType::f32, false};
    DeviceInfo d = nvidia();
    d.vulkan_memory_model = false;
    expect_error([&] { kernels::check_matrix_kernel(d, Kernel::coopmat, t); }, "vulkanMemoryModel");
    expect_error([&] { kernels::check_matrix_kernel(d, Kernel::coopmat2, t); }, "vulkanMemoryModel");
    d = nvidia();
    d.min_subgroup_size = d.max_subgroup_size = 64;
    expect_error([&] { kernels::check_matrix_kernel(d, Kernel::coopmat, t); }, "subgroups of 32");
    d = nvidia();
    d.coopmat_shapes.clear();
    expect_error([&] { kernels::check_matrix_kernel(d, Kernel::coopmat, t); }, "lists none");
    d = nvidia();
    d.coopmat2_shapes.clear();
    expect_error([&] { kernels::check_matrix_kernel(d, Kernel::coopmat2, t); }, "lists none");
    d = nvidia();
    d.coopmat_khr = d.coopmat2 = false;
    expect_error([&] { kernels::check_matrix_kernel(d, Kernel::coopmat, t); }, "VK_KHR_cooperative_matrix");
    expect_error([&] { kernels::check_matrix_kernel(d, Kernel::coopmat2, t); }, "VK_NV_cooperative_matrix2");
    d = nvidia();
    expect_error([&] { kernels::coopmat_launch(d, t, {.kernel = Kernel::coopmat, .tile = 512}, 64, 64, 64, 1); },
                 "64, 128 or 256");
    expect_error([&] { kernels::coopmat2_launch(d, t, {.kernel = Kernel::coopmat2, .tile = 48}, 64, 64); },
                 "32, 64, 96, 128, 192, 256 or 512");
    // Only 16x8 fragments (no 16x16): still a valid configuration, with 16x8 fragments.
    d.coopmat_shapes.erase(d.coopmat_shapes.begin() + 2);
    d.coopmat_shapes.erase(d.coopmat_shapes.begin() + 4);
    const auto s = kernels::coopmat_launch(d, t, {.kernel = Kernel::coopmat}, 4096, 4096, 4096, 1);
    CHECK(spec_constant(s, "TM") == 16);
    CHECK(spec_constant(s, "TN") == 8);
    CHECK(spec_constant(s, "TK") == 16);
    CHECK(s.shared_bytes <= 48u * 1024u);
  }

  TEST_CASE("auto for f16 plans coopmat2, then coopmat, then tiled; blocked never takes f16") {
    const tuning::Table table;  // f16 is never tuned
    const auto planned = [&](const DeviceInfo& d, DataType type, bool f16_acc = false) {
      kernels::Problem p;
      p.types = {type, f16_acc ? DataType::f16 : default_output_type(type), f16_acc};
      p.m = p.n = p.k = 4096;
      p.lda = p.ldb = p.ldc = 4096;
      return kernels::plan(d, table, {.kernel = Kernel::automatic}, p);
    };
    DeviceInfo d = nvidia();
    d.float64 = true;
    const bool khr = VKGEMM_EXPECT_COOPMAT, nv2 = VKGEMM_EXPECT_COOPMAT2;  // what this build compiled
    const Kernel best = nv2 ? Kernel::coopmat2 : khr ? Kernel::coopmat : Kernel::tiled;
    CHECK(planned(d, DataType::f16).kernel == best);
    const kernels::KernelLaunch acc16 = planned(d, DataType::f16, true);
    CHECK(acc16.kernel == best);
    if (best != Kernel::tiled) CHECK(acc16.main.shader == fmt::format("{}_f16_acc16", to_string(best)));
    kernels::Problem empty_sum;  // k = 0 with an f16 C the fill cannot zero: the tiled kernel writes the zeros
    empty_sum.types = {DataType::f16, DataType::f16, false};
    empty_sum.m = empty_sum.n = empty_sum.lda = empty_sum.ldb = empty_sum.ldc = 3;
    CHECK(kernels::plan(d, table, {.kernel = Kernel::automatic}, empty_sum).kernel == Kernel::tiled);
    d.coopmat2 = false;
    const kernels::KernelLaunch khr_plan = planned(d, DataType::f16);
    CHECK(khr_plan.kernel == (khr ? Kernel::coopmat : Kernel::tiled));
    if (khr) {
      CHECK(khr_plan.main.shader == "coopmat_f16_f32");
      CHECK(khr_plan.main.required_subgroup_size == 32);
      CHECK(khr_plan.grid[0] == 4096 / 256);  // the wide 128x256 tile at 4096^2
    }
    d.coopmat_khr = false;
    const kernels::KernelLaunch simt = planned(d, DataType::f16);
    CHECK(simt.kernel == Kernel::tiled);
    CHECK(simt.main.shader == "tiled_f16_f32");
    // The other types keep their ranking: never a cooperative-matrix kernel.
    d = nvidia();
    d.float64 = true;
    for (const DataType type : {DataType::f32, DataType::f64}) CHECK(planned(d, type).kernel == Kernel::blocked);
    CHECK(planned(d, DataType::i32).kernel == Kernel::tiled);
    kernels::Problem p;
    p.types = DataType::f16;
    p.m = p.n = p.k = p.lda = p.ldb = p.ldc = 64;
    expect_error([&] { kernels::plan(d, table, {.kernel = Kernel::blocked}, p); }, "blocked kernel computes f32 and f64");
  }

  TEST_CASE("i8 and u8: the device's int8 shapes, no split along K, auto ranks coopmat2, coopmat, tiled") {
    // What the H100 lists besides f16: 16x16x32 and 16x8x32 i8*i8+i32 and u8*u8+u32 at subgroup scope, and
    // workgroup-scope flexible int8 shapes for coopmat2.
    DeviceInfo d = nvidia_int8();
    const tuning::Table table;
    const auto planned = [&](const DeviceInfo& dev, DataType type, Kernel kernel, uint32_t m, uint32_t n, uint32_t k) {
      kernels::Problem p;
      p.types = {type, DataType::i32, false};
      p.m = m, p.n = n, p.k = k;
      p.lda = k, p.ldb = p.ldc = n;
      return kernels::plan(dev, table, {.kernel = kernel}, p);
    };
    const bool khr = VKGEMM_EXPECT_COOPMAT, nv2 = VKGEMM_EXPECT_COOPMAT2;
    for (const DataType type : {DataType::i8, DataType::u8}) {
      CAPTURE(to_string(type));
      const Types t{type, DataType::i32, false};
      CHECK_NOTHROW(kernels::check_matrix_kernel(d, Kernel::coopmat, t));
      CHECK_NOTHROW(kernels::check_matrix_kernel(d, Kernel::coopmat2, t));
      // KHR: the largest int8 fragment, a K step of 64 (64 bytes a row, as f16's 32), within 48 KiB.
      const auto large = kernels::coopmat_launch(d, t, {.kernel = Kernel::coopmat}, 1u << 14, 1u << 14, 4096, 1);
      CHECK(spec_constant(large, "TM") == 16);
      CHECK(spec_constant(large, "TN") == 16);
      CHECK(spec_constant(large, "TK") == 32);
      CHECK(spec_constant(large, "BK") == 64);
      CHECK(large.shared_bytes <= d.max_shared_memory);
      if (nv2) {
        // coopmat2: f16's tiles with twice the K step (the same bytes a step), but 96x192's (measured slower).
        const Types f16{DataType::f16, DataType::f32, false};
        for (const uint32_t tile : {32u, 64u, 96u, 128u, 192u, 256u}) {
          CAPTURE(tile);
          const GemmOptions o{.kernel = Kernel::coopmat2, .tile = tile};
          const auto int8 = kernels::coopmat2_launch(d, t, o, 4096, 4096), half = kernels::coopmat2_launch(d, f16, o, 4096, 4096);
          CHECK(int8.tile == half.tile);
          CHECK(spec_constant(int8, "BK") == (tile == 96 ? 1 : 2) * spec_constant(half, "BK"));
          CHECK(spec_constant(int8, "UNROLL") == spec_constant(half, "UNROLL"));
        }
        CHECK(spec_constant(kernels::coopmat2_launch(d, t, {.kernel = Kernel::coopmat2}, 4096, 4096), "BK") == 128);
        check_coopmat2_one_slice([&](uint32_t m, uint32_t n, uint32_t k) { return planned(d, type, Kernel::coopmat2, m, n, k); },
                                 fmt::format("coopmat2_{}", to_string(type)));
      }
      const Kernel best = nv2 ? Kernel::coopmat2 : khr ? Kernel::coopmat : Kernel::tiled;
      CHECK(planned(d, type, Kernel::automatic, 4096, 4096, 4096).kernel == best);
      DeviceInfo no2 = d;
      no2.coopmat2 = false;
      const auto second = planned(no2, type, Kernel::automatic, 4096, 4096, 4096);
      CHECK(second.kernel == (khr ? Kernel::coopmat : Kernel::tiled));
      if (khr) CHECK(second.main.shader == fmt::format("coopmat_{}", to_string(type)));
      no2.coopmat_khr = false;
      CHECK(planned(no2, type, Kernel::automatic, 4096, 4096, 4096).main.shader ==
            fmt::format("tiled_{}", to_string(type)));
      // Without shaderInt8 (the matrices' 8-bit component type): refused naming it; auto takes tiled.
      DeviceInfo bare = d;
      bare.int8 = false;
      expect_error([&] { kernels::check_matrix_kernel(bare, Kernel::coopmat, t); }, "need the shaderInt8 feature");
      expect_error([&] { kernels::check_matrix_kernel(bare, Kernel::coopmat2, t); }, "need the shaderInt8 feature");
      CHECK(planned(bare, type, Kernel::automatic, 256, 256, 256).kernel == Kernel::tiled);
    }
    // Without int8 shapes: the refusal names the shape wanted and what the device lists.
    const DeviceInfo f16_only = [] {
      DeviceInfo n = nvidia();
      n.int8 = n.storage8 = true;
      return n;
    }();
    expect_error([&] { kernels::check_matrix_kernel(f16_only, Kernel::coopmat, {DataType::i8, DataType::i32, false}); },
                 "needs a subgroup-scope cooperative matrix shape i8 x i8 + i32 -> i32");
    expect_error([&] { kernels::check_matrix_kernel(f16_only, Kernel::coopmat, {DataType::u8, DataType::i32, false}); },
                 "described H200 lists 16x8x16 f16*f16+f16->f16 subgroup");
    const Types u8{DataType::u8, DataType::i32, false};
    expect_error([&] { kernels::check_matrix_kernel(f16_only, Kernel::coopmat2, u8); },
                 "workgroup-scope flexible shape u8 x u8 + u32 -> u32");
    // u8 never takes an i8 shape (255 would read as -1).
    DeviceInfo signed_only = d;
    std::erase_if(signed_only.coopmat_shapes, [](const CooperativeMatrixShape& s) { return s.a_type == "u8"; });
    CHECK_NOTHROW(kernels::check_matrix_kernel(signed_only, Kernel::coopmat, {DataType::i8, DataType::i32, false}));
    expect_error([&] { kernels::check_matrix_kernel(signed_only, Kernel::coopmat, u8); },
                 "u8 x u8 + u32 -> u32");
    // lavapipe 26: 8x8x8 at subgroup 8 on a CPU: tiles in whole 16-byte chunks (16 int8), a K step of 16.
    DeviceInfo lvp = d;
    lvp.type = DeviceType::cpu;
    lvp.subgroup_size = lvp.min_subgroup_size = 8;
    lvp.max_shared_memory = 32 * 1024;
    lvp.coopmat_shapes.clear();
    for (const auto& [ab, acc] : {std::pair{"i8", "i32"}, {"u8", "u32"}}) {
      CooperativeMatrixShape s = shape(8, 8, 8, acc, "subgroup");
      s.a_type = s.b_type = ab;
      lvp.coopmat_shapes.push_back(s);
    }
    const Types t8{DataType::i8, DataType::i32, false};
    const auto lvp_large = kernels::coopmat_launch(lvp, t8, {.kernel = Kernel::coopmat}, 1u << 14, 1u << 14, 4096, 1);
    const auto lvp_small = kernels::coopmat_launch(lvp, t8, {.kernel = Kernel::coopmat}, 16, 16, 16, 1);
    CHECK(spec_constant(lvp_large, "BK") == 16);
    CHECK(spec_constant(lvp_large, "BM") == 32);
    CHECK(spec_constant(lvp_large, "BN") == 64);
    CHECK(lvp_small.tile == std::array<uint32_t, 2>{32, 16});
    CHECK(lvp_large.shared_bytes <= lvp.max_shared_memory);
  }

  // bf16 has f16's bytes per element, so every tile rule (written in bytes, coopmat_config.cpp) gives it f16's
  // tiles from its own shapes. Mutation (shown once by hand): bf16 counted as one byte an element takes the
  // int8 K step (64) and fails the first checks below.
  TEST_CASE("fragment sides are multiples of the kernel's shared-memory unit (8 elements)") {
    if (!VKGEMM_EXPECT_COOPMAT) return;
    DeviceInfo d = nvidia();
    d.coopmat_shapes.clear();
    for (const char* acc : {"f16", "f32"}) d.coopmat_shapes.push_back(shape(12, 12, 12, acc, "subgroup"));
    const Types f16{DataType::f16, DataType::f32, false};
    expect_error([&] { kernels::check_matrix_kernel(d, Kernel::coopmat, f16); }, "with sides that are multiples of 8");
    for (const char* acc : {"f16", "f32"}) d.coopmat_shapes.push_back(shape(8, 8, 8, acc, "subgroup"));
    CHECK_NOTHROW(kernels::check_matrix_kernel(d, Kernel::coopmat, f16));
  }

  TEST_CASE("i8 and u8: B turned N x K into the workspace first where M is at least 256 and op(B) is B") {
    const DeviceInfo d = nvidia_int8();
    const tuning::Table table;
    const auto schedule = [&](DataType type, Kernel kernel, int64_t m, int64_t n, int64_t k, Op op_b, int64_t batch,
                              int64_t stride_b) {
      GemmDesc desc;
      desc.type = type, desc.c_type = type == DataType::f16 ? DataType::f32 : DataType::i32, desc.op_b = op_b;
      desc.m = m, desc.n = n, desc.k = k;
      desc.lda = k, desc.ldb = op_b == Op::n ? n : k, desc.ldc = n;
      desc.batch = batch, desc.stride_a = m * k, desc.stride_b = stride_b, desc.stride_c = m * n;
      return detail::schedule_product(desc, {.kernel = kernel}, d, table);
    };
    for (const Kernel kernel : {Kernel::coopmat, Kernel::coopmat2}) {
      if (!(kernel == Kernel::coopmat ? VKGEMM_EXPECT_COOPMAT : VKGEMM_EXPECT_COOPMAT2)) continue;
      CAPTURE(to_string(kernel));
      // 256 x 300 x 100 in a batch of 3: the workspace holds 3 entries of 300 rows of 112 bytes (100 rounded
      // up to 16); the turn covers 3 x 1 blocks of 128 x 128 per entry; the product reads it as op(B) = W^T.
      const detail::Schedule s = schedule(DataType::u8, kernel, 256, 300, 100, Op::n, 3, 100 * 300);
      REQUIRE(s.pieces.size() == 1);
      const detail::PiecePasses& piece = s.pieces.front();
      REQUIRE(piece.turn_b);
      CHECK(piece.turn_b->shape.shader == "turn_b8_u8");
      CHECK(piece.turn_b->grid == std::array<uint32_t, 3>{3, 1, 3});
      CHECK(piece.turn_b->push.ldb == 300);
      CHECK(piece.turn_b->push.stride_b == 30000);
      CHECK(piece.turn_b->push.ldc == 112);
      CHECK(piece.turn_b->push.stride_c == 300 * 112);
      CHECK(piece.workspace_bytes == 3 * 300 * 112);
      CHECK(s.workspace_bytes == 3 * 300 * 112);
      CHECK((piece.main.push.flags & kernels::kTransB) != 0);
      CHECK(piece.main.push.ldb == 112);
      CHECK(piece.main.push.b_offset == 0);
      CHECK(piece.main.push.stride_b == 300 * 112);
      CHECK(spec_constant(piece.main.shape, "TRANS_B") == 1);
      CHECK(s.config.find("B turned") != std::string::npos);
      // B shared by the batch: one entry turned, read by every entry.
      const detail::Schedule shared = schedule(DataType::i8, kernel, 4096, 4096, 4096, Op::n, 2, 0);
      REQUIRE(shared.pieces.front().turn_b);
      CHECK(shared.pieces.front().turn_b->grid == std::array<uint32_t, 3>{32, 32, 1});
      CHECK(shared.workspace_bytes == 4096ull * 4096);
      CHECK(shared.pieces.front().main.push.stride_b == 0);
      // The size check counts the turned B and names it.
      GemmDesc big;
      big.type = DataType::i8, big.c_type = DataType::i32;
      big.m = big.n = big.k = 4096, big.lda = big.ldb = big.ldc = 4096;
      DeviceInfo small = d;
      small.device_local_memory = 7 * 4096ull * 4096 - 1;  // A and B (i8), C (i32), W, less a byte
      expect_error([&] { detail::check_fits(big, {.kernel = kernel}, small, &table); },
                   "the turned B's workspace 16777216 bytes");
      small.device_local_memory += 1;
      CHECK_NOTHROW(detail::check_fits(big, {.kernel = kernel}, small, &table));
      // A product cut into pieces (here K chunks) is not turned: the workspace holds one B whole.
      GemmOptions chunked{.kernel = kernel};
      chunked.max_k_per_submission = 1024;
      const detail::Schedule pieces = detail::schedule_product(big, chunked, d, table);
      CHECK(pieces.pieces.size() > 1);
      for (const auto& cut_piece : pieces.pieces) CHECK_FALSE(cut_piece.turn_b);
      // Not turned: M under 256, op(B) transposed, 16-bit inputs.
      for (const auto& plain : {schedule(DataType::i8, kernel, 255, 300, 100, Op::n, 1, 0),
                                schedule(DataType::i8, kernel, 4096, 4096, 4096, Op::t, 1, 0),
                                schedule(DataType::f16, kernel, 4096, 4096, 4096, Op::n, 1, 0)}) {
        CHECK_FALSE(plain.pieces.front().turn_b);
        CHECK(plain.config.find("B turned") == std::string::npos);
      }
    }
  }
  TEST_CASE("coopmat: the fast path alone (WHOLE) exactly where every tile, K step, operand and C allows it") {
    if (!VKGEMM_EXPECT_COOPMAT) return;
    const DeviceInfo d = nvidia_bf16();
    const tuning::Table table;
    // 256 x 512 x 256 f16 -> f32, row-major NN, beta 0: whole tiles of every size the kernel takes, K steps of 32.
    GemmDesc whole;
    whole.type = DataType::f16, whole.c_type = DataType::f32;
    whole.m = 256, whole.n = 512, whole.k = 256, whole.lda = 256, whole.ldb = 512, whole.ldc = 512;
    const auto whole_constant = [&](const GemmDesc& desc) {
      const detail::Schedule s = detail::schedule_product(desc, {.kernel = Kernel::coopmat}, d, table);
      REQUIRE(s.pieces.size() == 1);
      return spec_constant(s.pieces.front().main.shape, "WHOLE");
    };
    CHECK(whole_constant(whole) == 1);
    GemmDesc batched = whole;
    batched.batch = 2, batched.stride_a = 256 * 256, batched.stride_b = 0, batched.stride_c = 256 * 512;
    CHECK(whole_constant(batched) == 1);
    GemmDesc bf16_f32 = whole;
    bf16_f32.type = DataType::bf16;
    CHECK(whole_constant(bf16_f32) == 1);
    GemmDesc bf16_bf16 = bf16_f32;  // C bf16: through the staging area, 16 bytes at a time
    bf16_bf16.c_type = DataType::bf16;
    CHECK(whole_constant(bf16_bf16) == 1);
    // One condition off at a time: the checked pipeline.
    std::vector<std::pair<const char*, GemmDesc>> off;
    const auto with = [&](const char* what, auto change) {
      GemmDesc x = whole;
      change(x);
      off.emplace_back(what, x);
    };
    with("K not whole steps", [](GemmDesc& x) { x.k = 248; });
    with("M not whole tiles", [](GemmDesc& x) { x.m = 248; });
    with("N not whole tiles", [](GemmDesc& x) { x.n = 504; });
    with("A rows off 16 bytes", [](GemmDesc& x) { x.lda = 260; });
    with("B rows off 16 bytes", [](GemmDesc& x) { x.ldb = 516; });
    with("C rows off 8 elements", [](GemmDesc& x) { x.ldc = 516; });
    with("beta not 0", [](GemmDesc& x) { x.beta = 1.0; });
    with("C bf16, rows off 8 elements",
         [](GemmDesc& x) { x.type = DataType::bf16, x.c_type = DataType::bf16, x.ldc = 516; });
    with("A's batch stride off 16 bytes", [&](GemmDesc& x) { x = batched, x.stride_a = 256 * 256 + 4; });
    with("C's batch stride off 8 elements", [&](GemmDesc& x) { x = batched, x.stride_c = 256 * 512 + 4; });
    for (const auto& condition : off) {
      const char* what = condition.first;  // not a structured binding: clang 14's CAPTURE cannot take one
      CAPTURE(what);
      CHECK(whole_constant(condition.second) == 0);
    }
  }
  TEST_CASE("bf16: its own shapes, f16's tiles, coopmat2's C stored or through fp32, auto ranks coopmat2, coopmat, tiled") {
    // What the H100 lists for bf16: 16x16x16 bf16*bf16+f32 at subgroup scope; workgroup-scope flexible
    // bf16 shapes for coopmat2 are described here as the f16 ones are (whether the driver has them is the GPU's
    // to tell: its coopmat2 suite).
    DeviceInfo d = nvidia_bf16();
    for (const uint32_t inv : {128u, 256u}) {
      CooperativeMatrixShape s = shape(16, 16, 16, "f32", "workgroup", inv, true);
      s.a_type = s.b_type = "bf16";
      d.coopmat2_shapes.push_back(s);
    }
    const tuning::Table table;
    const auto planned = [&](const DeviceInfo& dev, DataType c, Kernel kernel, uint32_t m, uint32_t n, uint32_t k,
                             bool beta_zero = true) {
      kernels::Problem p;
      p.types = {DataType::bf16, c, false};
      p.m = m, p.n = n, p.k = k;
      p.lda = k, p.ldb = p.ldc = n;
      p.beta_zero = beta_zero;
      return kernels::plan(dev, table, {.kernel = kernel}, p);
    };
    const bool khr = VKGEMM_EXPECT_COOPMAT && VKGEMM_EXPECT_BF16_MATRICES;
    const bool nv2 = VKGEMM_EXPECT_COOPMAT2 && VKGEMM_EXPECT_BF16_MATRICES;
    const Types f16{DataType::f16, DataType::f32, false};
    for (const DataType c : {DataType::f32, DataType::bf16}) {
      CAPTURE(to_string(c));
      const Types t{DataType::bf16, c, false};
      CHECK_NOTHROW(kernels::check_matrix_kernel(d, Kernel::coopmat, t));
      CHECK_NOTHROW(kernels::check_matrix_kernel(d, Kernel::coopmat2, t));
      // KHR: the bf16 fragment, f16's K step (32: 64 bytes a row), f16's tiles and shared memory.
      for (const uint32_t side : {64u, 1u << 14}) {
        const auto b = kernels::coopmat_launch(d, t, {.kernel = Kernel::coopmat}, side, side, side, 1);
        const auto h = kernels::coopmat_launch(d, f16, {.kernel = Kernel::coopmat}, side, side, side, 1);
        CHECK(spec_constant(b, "TK") == 16);
        CHECK(spec_constant(b, "BK") == 32);
        for (const char* name : {"BM", "BN", "BK", "WM", "WN", "TM", "TN", "UNROLL", "BUFFERS"}) {
          CAPTURE(name);
          CHECK(spec_constant(b, name) == spec_constant(h, name));
        }
        CHECK(b.shared_bytes == h.shared_bytes);
        CHECK(b.shared_bytes <= d.max_shared_memory);
      }
      if (khr) CHECK(planned(d, c, Kernel::coopmat, 256, 256, 256).main.shader == fmt::format("coopmat_bf16_{}", to_string(c)));
      if (nv2) check_coopmat2_bf16(d, c, planned);
      // auto: coopmat2 for C f32. For C bf16 stored by the main pass (beta 0, one slice), coopmat2 but on its
      // 128x256 tile with B untransposed, where coopmat takes it; for a C bf16 read for beta, coopmat2 where it
      // splits or its waves took 192x128 or 96x192, else coopmat; else tiled. Mutations (shown once by hand):
      // coopmat2 first for every bf16 C with beta fails 4096^3; for every stored one, 2048^3, 4096^3 and
      // 8192^3; the rule blind to B's op, the NT product.
      const Kernel second = khr ? Kernel::coopmat : Kernel::coopmat2;
      CHECK(planned(d, c, Kernel::automatic, 4096, 4096, 4096).kernel ==
            (nv2 ? (c == DataType::f32 ? Kernel::coopmat2 : second) : khr ? Kernel::coopmat : Kernel::tiled));
      if (nv2 && c == DataType::bf16) {
        // m, n, k (not a structured binding: clang 14's CAPTURE cannot take one)
        for (const auto& s : {std::array<uint32_t, 3>{3072, 3072, 3072}, {64, 4096, 4096}, {4096, 512, 14336}}) {
          CAPTURE(s[0]);
          CHECK(planned(d, c, Kernel::automatic, s[0], s[1], s[2], false).kernel == Kernel::coopmat2);
          CHECK(planned(d, c, Kernel::automatic, s[0], s[1], s[2], true).kernel == Kernel::coopmat2);
        }
        for (const auto& s : {std::array<uint32_t, 3>{2048, 2048, 2048}, {8192, 8192, 8192}, {1024, 1024, 1024}}) {
          CAPTURE(s[0]);
          CHECK(planned(d, c, Kernel::automatic, s[0], s[1], s[2], false).kernel == second);
          CHECK(planned(d, c, Kernel::automatic, s[0], s[1], s[2], true).kernel ==
                (s[0] == 1024 ? Kernel::coopmat2 : second));
        }
        // K-light with beta 0 (coopmat2's 128x128 and 192x128 tiles, K up to 768): the KHR kernel; K 1024 on
        // 192x128 stays. Mutation (shown once by hand): the rule without its K-light clause fails the first
        // three and the batched NT product.
        for (const auto& s : {std::array<uint32_t, 3>{4096, 4096, 512}, {4096, 3072, 768}, {8192, 3072, 768}}) {
          CAPTURE(s[1]);
          CAPTURE(s[2]);
          CHECK(planned(d, c, Kernel::automatic, s[0], s[1], s[2], true).kernel == second);
        }
        CHECK(planned(d, c, Kernel::automatic, 3072, 3072, 1024, true).kernel == Kernel::coopmat2);
        kernels::Problem nt;
        nt.types = {DataType::bf16, DataType::bf16, false};
        nt.m = nt.n = nt.lda = nt.ldb = nt.ldc = 2048;
        nt.k = 128, nt.batch = 12;
        nt.trans_b = nt.beta_zero = true;
        CHECK(kernels::plan(d, table, {}, nt).kernel == second);
        nt.m = nt.n = nt.k = nt.lda = nt.ldb = nt.ldc = 4096;
        nt.batch = 1;
        CHECK(kernels::plan(d, table, {}, nt).kernel == Kernel::coopmat2);
        check_coopmat2_bf16_schedule(d, table);
      }
      DeviceInfo no2 = d;
      no2.coopmat2 = false;
      CHECK(planned(no2, c, Kernel::automatic, 4096, 4096, 4096).kernel == (khr ? Kernel::coopmat : Kernel::tiled));
      // Without shaderBFloat16CooperativeMatrix: refused naming it and the device; auto takes tiled.
      DeviceInfo bare = d;
      bare.bfloat16_coopmat = false;
      for (const Kernel k : {Kernel::coopmat, Kernel::coopmat2}) {
        expect_error([&] { kernels::check_matrix_kernel(bare, k, t); },
                     "need the shaderBFloat16CooperativeMatrix feature (VK_KHR_shader_bfloat16); described H200");
      }
      CHECK(planned(bare, c, Kernel::automatic, 256, 256, 256).kernel == Kernel::tiled);
    }
    // Without bf16 shapes: the refusal names the shape wanted (bf16 sums in f32) and what the device lists.
    DeviceInfo f16_only = nvidia();
    f16_only.bfloat16 = f16_only.bfloat16_coopmat = true;
    const Types t{DataType::bf16, DataType::bf16, false};
    expect_error([&] { kernels::check_matrix_kernel(f16_only, Kernel::coopmat, t); },
                 "needs a subgroup-scope cooperative matrix shape bf16 x bf16 + f32 -> f32");
    expect_error([&] { kernels::check_matrix_kernel(f16_only, Kernel::coopmat, t); },
                 "described H200 lists 16x8x16 f16*f16+f16->f16 subgroup");
    expect_error([&] { kernels::check_matrix_kernel(f16_only, Kernel::coopmat2, {DataType::bf16, DataType::f32, false}); },
                 "workgroup-scope flexible shape bf16 x bf16 + f32 -> f32");
  }

  TEST_CASE("coopmat2 splits K for a short grid with a long K, through an fp32 workspace") {
    if (!VKGEMM_EXPECT_COOPMAT2) {
      test::skip("this build has no coopmat2 kernel");
      return;
    }
    const tuning::Table table;
    const DeviceInfo d = nvidia();
    const auto planned = [&](uint32_t m, uint32_t n, uint32_t k, DataType out, bool acc16, uint32_t batch = 1) {
      kernels::Problem p;
      p.types = {DataType::f16, out, acc16};
      p.m = m, p.n = n, p.k = k, p.batch = batch;
      p.lda = k, p.ldb = n, p.ldc = n;
      return kernels::plan(d, table, {.kernel = Kernel::coopmat2}, p);
    };
    for (const DataType out : {DataType::f32, DataType::f16}) {
      CAPTURE(to_string(out));
      // 4096x512 in 128x256 tiles is 64 workgroups: two slices of K, each a multiple of 256 (whole 64-deep
      // steps, and a K start the shader's fast path takes).
      const kernels::KernelLaunch split = planned(4096, 512, 14336, out, false);
      CHECK(split.splits == 2);
      CHECK(split.main.tile[0] == 256);
      CHECK(split.k_split % 256 == 0);
      CHECK(uint64_t{split.k_split} * split.splits >= 14336);
      CHECK(split.main.shader == "coopmat2_f16_f32");  // partial sums in fp32, whatever C is
      CHECK(split.reduce.shader == fmt::format("splitk_reduce_f16_{}", to_string(out)));
      CHECK_NOTHROW(kernels::spirv(split.reduce.shader));
      CHECK(split.grid[2] == 2);
      CHECK(split.reduce_grid[2] == 1);
      CHECK(planned(4096, 512, 14336, out, false, 3).grid[2] == 3 * planned(4096, 512, 14336, out, false, 3).splits);
    }
    // fp16 sums: 256x256 tiles, 32 of them, four slices; each slice's fp16 sums go to the fp32 workspace.
    const kernels::KernelLaunch acc16 = planned(4096, 512, 14336, DataType::f16, true);
    CHECK(acc16.splits == 4);
    CHECK(acc16.k_split % 256 == 0);
    CHECK(acc16.main.shader == "coopmat2_f16_acc16_f32");
    CHECK_NOTHROW(kernels::spirv(acc16.main.shader));
    CHECK(acc16.reduce.shader == "splitk_reduce_f16_f16");
    CHECK(planned(4096, 4096, 4096, DataType::f32, false).splits == 1);  // enough workgroups already
    CHECK(planned(4096, 512, 1024, DataType::f32, false).splits == 1);   // K too short to share
    // The 32-row tile's workgroups run two to an SM: 64 of them at 32 x 4096 split in 4, not 2.
    CHECK(planned(32, 4096, 8192, DataType::f16, false).splits == 4);
    CHECK(planned(32, 4096, 8192, DataType::f16, false).description == "32x64 split 4");
    // Its products are bound by reading B: 17 x 4096 x 4096 takes four slices of 1024, not two of 2048;
    // 17 x 4096 x 2048 (slices of 512) runs one; 64 x 4096 x 16384's 128 workgroups take 2 slices.
    CHECK(planned(17, 4096, 4096, DataType::f16, false).description == "32x64 split 4");
    CHECK(planned(17, 4096, 2048, DataType::f16, false).splits == 1);
    // At most 16 rows: 16 x 64 at 64 invocations, split to 512 workgroups in slices of at least 512 (16 x 4096 x
    // 4096: 8; 16 x 16384 x 4096: 2), only where it splits (the reduce pass then applies beta and the
    // epilogue); with K too short to split, or tiles enough unsplit, the 32-row tile as before; fp16 sums
    // keep it too.
    CHECK(planned(16, 4096, 4096, DataType::f16, false).description == "16x64 split 8");
    CHECK(planned(8, 4096, 4096, DataType::f32, false).description == "16x64 split 8");
    CHECK(planned(16, 16384, 4096, DataType::f16, false).description == "16x64 split 2");
    CHECK(planned(16, 4096, 4096, DataType::f16, false, 7).description == "16x64 split 2");  // 448 tiles
    // Its K loop unrolled 4 steps (8, the other tiles' default, and 16 streamed the long rows slower).
    CHECK(spec_constant(planned(16, 16384, 4096, DataType::f16, false).main, "UNROLL") == 4u);
    CHECK(spec_constant(planned(1, 4096, 4096, DataType::f16, false).main, "UNROLL") == 4u);
    CHECK(planned(16, 32768, 4096, DataType::f16, false).description == "32x64");  // 512 tiles: no split
    CHECK(planned(16, 4096, 2048, DataType::f16, false).description == "32x64");
    CHECK(planned(16, 4096, 4096, DataType::f16, true).description.find("32x64") == 0);
    // A pinned split count (the whole product's, for its pieces) is kept.
    kernels::Problem p;
    p.types = {DataType::f16, DataType::f32, false};
    p.m = 4096, p.n = 512, p.k = 14336, p.lda = 14336, p.ldb = p.ldc = 512, p.splits = 3;
    CHECK(kernels::plan(d, table, {.kernel = Kernel::coopmat2}, p).splits == 3);
    // Rounding slices to 256 never leaves one empty: K = 600 pinned to 3 slices is 2 of 256 and 1 of 88.
    p.k = p.lda = 600;
    const kernels::KernelLaunch short_k = kernels::plan(d, table, {.kernel = Kernel::coopmat2}, p);
    CHECK(short_k.k_split == 256);
    CHECK(short_k.splits == 3);
  }

  TEST_CASE("the tuning table refuses f16 entries: f16 is not tuned") {
    tuning::Table table;
    const std::string f16_entry = R"({"format": "vkgemm-tuning-1", "devices": [{"vendor_id": 4318, "device": "X",
        "driver": "1", "entries": [{"type": "f16", "m": 64, "n": 64, "k": 64, "kernel": "tiled", "tile": 16}]}]})";
    expect_error([&] { table.add_json(f16_entry, "f16.json"); }, "f16.json: an f16 entry; f16 is not tuned");
    std::string f32_entry = f16_entry;
    f32_entry.replace(f32_entry.find("f16"), 3, "f32");
    CHECK_NOTHROW(table.add_json(f32_entry, "f32.json"));
  }
}

TEST_SUITE("coopmat config") {
  TEST_CASE("the published H200 f16 results describe this tree: auto plans each case as it was measured") {
    GemmDesc f16;  // the published f16 rows: C f16 with fp32 sums
    f16.type = DataType::f16, f16.c_type = DataType::f16;
    test::check_published_rows(VKGEMM_PUBLISHED_F16, f16, nvidia());
  }
}
