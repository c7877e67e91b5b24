// The planner (engine/src/plan/schedule.hpp) on described devices, without Vulkan: the column-major turn,
// the reads-A-and-B rule, empty products, pieces within the limits, split-K and K chunks, each read off
// the plan and its push constants.
#include <doctest/doctest.h>

#include "gemm_abi.h"
#include "plan/schedule.hpp"
#include "spec_constant.hpp"
#include "support.hpp"
#include "vkgemm/error.hpp"

using namespace vkgemm;
using detail::schedule_product;
using detail::Schedule;

namespace {

// A plain device with the limits Vulkan guarantees at least, f64 and fp16.
DeviceInfo described() {
  DeviceInfo d;
  d.name = "described device";
  d.float16 = d.storage16 = d.float64 = true;
  d.max_shared_memory = 32 * 1024;
  d.max_workgroup_invocations = 1024;
  d.max_workgroup_size = {1024, 1024, 64};
  d.max_workgroup_count = {65535, 65535, 65535};
  d.max_storage_buffer_range = 1ull << 30;
  return d;
}

const tuning::Table kNoTable;

}  // namespace

TEST_SUITE("planner") {
  TEST_CASE("a launch's specialization constants reach the ids their shader declares, by name") {
    // The ids as the shaders write them (shaders/*.comp): the host never writes one.
    CHECK(kernels::specialization_id("naive_f32", "WG_X") == 0);
    CHECK(kernels::specialization_id("naive_f32", "WG_Y") == 1);
    CHECK(kernels::specialization_id("tiled_f64", "TILE") == 0);
    CHECK(kernels::specialization_id("blocked_f32", "GROUP_M") == 10);
    CHECK(kernels::specialization_id("blocked_f64", "B_PAD") == 14);
    CHECK(kernels::specialization_id("peak_fma_f32", "CHAINS") == 1);
    // A name the shader does not declare (a misspelling, a constant of another kernel) is refused, naming both.
    test::expect_error([] { kernels::specialization_id("tiled_f32", "BM"); }, ErrorCode::unsupported_config,
                       "shader tiled_f32 declares no specialization constant BM");
    test::expect_error([] { kernels::specialization_id("naive_f32", "WG"); }, ErrorCode::unsupported_config,
                       "no specialization constant WG");
  }

  TEST_CASE("the column-major turn swaps A with B and m with n; the kernel reads the row-major product") {
    GemmDesc desc{.m = 5, .n = 7, .k = 3};
    const GemmOptions tiled{.kernel = Kernel::tiled, .tile = 8};
    const Schedule row = schedule_product(desc, tiled, described(), kNoTable);
    REQUIRE(row.pieces.size() == 1);
    CHECK(row.source == std::array<uint32_t, 3>{0, 1, 2});
    CHECK(row.pieces[0].main.push.M == 5);
    CHECK(row.pieces[0].main.push.N == 7);
    desc.layout = Layout::col_major;
    desc.op_a = Op::t;
    const Schedule col = schedule_product(desc, tiled, described(), kNoTable);
    REQUIRE(col.pieces.size() == 1);
    CHECK(col.source == std::array<uint32_t, 3>{1, 0, 2});
    const auto& push = col.pieces[0].main.push;
    CHECK(push.M == 7);
    CHECK(push.N == 5);
    CHECK(push.K == 3);
    // op(A) = A^T moves to the second operand: trans_b, not trans_a.
    CHECK((push.flags & kernels::kTransB) != 0);
    CHECK((push.flags & kernels::kTransA) == 0);
    CHECK(col.pieces[0].main.grid == std::array<uint32_t, 3>{1, 1, 1});
  }

  TEST_CASE("A and B are read only when alpha != 0 and k != 0; otherwise C is bound in their place") {
    CHECK(detail::reads_ab({.m = 2, .n = 2, .k = 2}));
    CHECK_FALSE(detail::reads_ab({.m = 2, .n = 2, .k = 2, .alpha = 0.0}));
    CHECK_FALSE(detail::reads_ab({.m = 2, .n = 2, .k = 0}));
    for (const GemmDesc& desc : {GemmDesc{.m = 3, .n = 4, .k = 5, .alpha = 0.0, .beta = 2.0},
                                GemmDesc{.m = 3, .n = 4, .k = 0, .beta = 2.0}}) {
      const Schedule plan = schedule_product(desc, {.kernel = Kernel::tiled}, described(), kNoTable);
      REQUIRE(plan.pieces.size() == 1);
      CHECK(plan.source == std::array<uint32_t, 3>{2, 2, 2});
      CHECK(plan.pieces[0].main.push.K == 0);
      CHECK((plan.pieces[0].main.push.flags & kernels::kBetaZero) == 0);  // beta 2: C is read
    }
  }

  TEST_CASE("an empty product plans nothing (its kernel is checked at the door: the door suite)") {
    const Schedule plan = schedule_product({.m = 0, .n = 4, .k = 4}, {}, described(), kNoTable);
    CHECK(plan.pieces.empty());
    CHECK(plan.workspace_bytes == 0);
  }

  TEST_CASE("a grid past the device's workgroup count is cut into pieces that each fit") {
    DeviceInfo d = described();
    d.max_workgroup_count = {4, 4, 65535};
    const Schedule plan = schedule_product({.m = 100, .n = 90, .k = 10}, {.kernel = Kernel::tiled, .tile = 8}, d, kNoTable);
    REQUIRE(plan.pieces.size() > 1);
    CHECK(plan.config.find("pieces") != std::string::npos);
    uint64_t rows = 0;
    for (const auto& piece : plan.pieces) {
      for (size_t i = 0; i < 3; ++i) CHECK(piece.main.grid[i] <= d.max_workgroup_count[i]);
      CHECK(piece.main.push.M == piece.piece.m);
      CHECK(piece.main.push.N == piece.piece.n);
      if (piece.piece.n0 == 0) rows += piece.piece.m;
    }
    CHECK(rows == 100);  // the first column of pieces covers every row once
  }

  TEST_CASE("blocked split-K: a short grid with a long K plans a workspace and a reduce pass") {
    const Schedule plan = schedule_product({.m = 64, .n = 64, .k = 4096}, {.kernel = Kernel::blocked}, described(),
                                          kNoTable);
    CHECK(plan.kernel == Kernel::blocked);
    REQUIRE(plan.pieces.size() == 1);
    const auto& piece = plan.pieces[0];
    REQUIRE(piece.reduce.has_value());
    CHECK(plan.whole.splits > 1);
    CHECK(piece.reduce->push.K == plan.whole.splits);
    CHECK(piece.main.push.ldc == 64);  // the workspace's row stride
    CHECK(piece.main.push.split_stride == 64 * 64);
    CHECK(plan.workspace_bytes == uint64_t{64} * 64 * plan.whole.splits * 4);
    CHECK(piece.main.grid[2] == plan.whole.splits);
  }

  TEST_CASE("auto sends every op combination of f32 and f64 to the blocked kernel, the transposes as constants") {
    // The kernel's op is fixed when its pipeline is built; the row padding goes to each tile staged
    // scattered (its vec4s read along K): A untransposed, B transposed (64x64x8 fits either way in 32 KiB).
    for (const DataType type : {DataType::f32, DataType::f64}) {
      for (const Op op_a : {Op::n, Op::t}) {
        for (const Op op_b : {Op::n, Op::t}) {
          CAPTURE(to_string(type));
          CAPTURE(op_a == Op::t);
          CAPTURE(op_b == Op::t);
          const Schedule plan = schedule_product({.type = type, .op_a = op_a, .op_b = op_b, .m = 200, .n = 100, .k = 50},
                                                {}, described(), kNoTable);
          REQUIRE(plan.kernel == Kernel::blocked);
          const auto constant = [&](std::string_view name) { return test::spec_constant(plan.whole.main, name); };
          CHECK(constant("TRANS_A") == (op_a == Op::t ? 1u : 0u));
          CHECK(constant("TRANS_B") == (op_b == Op::t ? 1u : 0u));
          CHECK(constant("A_PAD") == (op_a == Op::n ? 1u : 0u));
          CHECK(constant("B_PAD") == (op_b == Op::t ? 1u : 0u));
          CHECK(((plan.pieces.at(0).main.push.flags & kernels::kTransA) != 0) == (op_a == Op::t));
        }
      }
    }
  }

  TEST_CASE("a K bound cuts K into chunks; only the first applies beta") {
    const GemmOptions options{.kernel = Kernel::tiled, .tile = 8, .max_k_per_submission = 64};
    const Schedule plan = schedule_product({.m = 8, .n = 8, .k = 200}, options, described(), kNoTable);
    REQUIRE(plan.pieces.size() == 4);  // 64 + 64 + 64 + 8
    uint32_t k = 0;
    for (size_t i = 0; i < plan.pieces.size(); ++i) {
      const auto& push = plan.pieces[i].main.push;
      CHECK(plan.pieces[i].piece.first_k == (i == 0));
      CHECK(((push.flags & kernels::kBetaZero) != 0) == (i == 0));  // beta 0 first, then 1: add to C
      k += push.K;
    }
    CHECK(k == 200);
  }
  TEST_CASE("the size check counts the batch, every operand and the split-K workspace, and names them") {
    DeviceInfo d = described();
    d.max_allocation_size = 2ull << 30;  // 2 GiB at once (as lavapipe), 8 GiB in all
    d.device_local_memory = 8ull << 30;
    const auto refusal = [&](const GemmDesc& desc, const GemmOptions& options = {}) -> std::string {
      try {
        detail::check_fits(desc, options, d, &kNoTable);
        return "";
      } catch (const Error& e) {
        CHECK(e.code() == ErrorCode::too_large);
        return e.what();
      }
    };
    const auto has = [](const std::string& text, const std::string& words) { return text.find(words) != std::string::npos; };
    // 128^3 in a batch of 65535: each operand 4294901760 bytes, past what one allocation may hold.
    const std::string batch = refusal({.m = 128, .n = 128, .k = 128, .batch = 65535});
    CHECK(has(batch, "a 128x128x128 product in a batch of 65535 needs A 4294901760 bytes, B 4294901760 bytes, "
                     "C 4294901760 bytes; described device allocates at most 2147483648 bytes at once"));
    // Each fits one allocation, all three not the device: 45000 x 64 KiB x 3 = 8.8 GB.
    d.max_allocation_size = 4ull << 30;
    CHECK(has(refusal({.m = 128, .n = 128, .k = 128, .batch = 45000}), "described device has 8589934592 bytes"));
    CHECK(refusal({.m = 128, .n = 128, .k = 128, .batch = 30000}).empty());
    // A and B are not read with alpha 0: only C counts.
    CHECK(refusal({.m = 128, .n = 128, .k = 128, .alpha = 0.0, .batch = 45000}).empty());
    // The workspace: operands of 68 MiB and a split in 8 slices of 32 MiB on a device of 100 MiB less a byte.
    d.max_allocation_size = 0;
    d.device_local_memory = (100ull << 20) - 1;
    GemmOptions split{.kernel = Kernel::blocked};
    split.blocked = kernels::fallback_blocked_config(DataType::f32);
    split.blocked.split_k = 8;
    const GemmDesc wide{.m = 1024, .n = 1024, .k = 8192};
    GemmOptions unsplit = split;
    unsplit.blocked.split_k = 1;
    CHECK(refusal(wide, unsplit).empty());
    const std::string workspace = refusal(wide, split);
    INFO(workspace);
    CHECK(has(workspace, "C 4194304 bytes, the split-K workspace 33554432 bytes); described device has"));
  }
}
