// Cutting products into pieces within the device's limits (engine/src/partition.hpp): the partition
// itself against made-up limits (every element of C covered once per K element, offsets and bindings
// right, grids within the limits), then whole products end to end on engines whose limits are lowered
// with the VKGEMM_TEST_MAX_* knobs, so that small shapes go through many pieces, for every kernel, layout,
// op, batch and beta, each checked against the CPU reference with poisoned gaps and guards.
#include <doctest/doctest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "kernels/partition.hpp"
#include "support.hpp"
#include "vkgemm/vulkan.hpp"

using namespace vkgemm;
using detail::Blocking;
using detail::PartitionLimits;
using detail::Piece;
using detail::WholeProduct;

namespace {

uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// Checks one partition against everything its pieces promise; returns the piece count.
size_t check_partition(const WholeProduct& w, const Blocking& bl, const PartitionLimits& lim) {
  const std::vector<Piece> pieces = detail::partition(w, bl, lim);
  const uint64_t es = w.element_size;
  const uint64_t kk = std::max(w.k, 1u);
  // How often each (batch, row, column, k) term of the sum is computed: exactly once each.
  std::vector<uint8_t> seen(uint64_t{w.batch} * w.m * w.n * kk, 0);
  uint32_t next_k = 0;  // K chunks of one C block come in order
  for (const Piece& p : pieces) {
    REQUIRE(p.batch >= 1);
    REQUIRE(p.m >= 1);
    REQUIRE(p.n >= 1);
    CHECK(p.first_k == (p.k0 == 0));
    CHECK(p.k0 == (p.first_k ? 0u : next_k));
    next_k = p.k0 + p.k;
    if (w.k) CHECK(p.k >= 1);
    if (lim.max_k && w.k) CHECK(p.k <= lim.max_k);
    for (uint64_t b = p.b0; b < p.b0 + p.batch; ++b)
      for (uint64_t i = p.m0; i < p.m0 + p.m; ++i)
        for (uint64_t j = p.n0; j < p.n0 + p.n; ++j)
          for (uint64_t q = p.k0; q < p.k0 + std::max(p.k, w.k ? 0u : 1u); ++q) ++seen[((b * w.m + i) * w.n + j) * kk + q];
    // Grids: the main pass and the reduce pass within maxComputeWorkGroupCount.
    CHECK(ceil_div(p.n, bl.cols) <= lim.max_groups[0]);
    CHECK(ceil_div(p.m, bl.rows) <= lim.max_groups[1]);
    CHECK(uint64_t{p.batch} * bl.z_per_entry <= lim.max_groups[2]);
    if (bl.reduce_rows) {
      CHECK(ceil_div(p.n, bl.reduce_cols) <= lim.max_groups[0]);
      CHECK(ceil_div(p.m, bl.reduce_rows) <= lim.max_groups[1]);
      const uint64_t ws_es = std::max<uint64_t>(es, bl.workspace_element_size);
      CHECK(uint64_t{p.m} * p.n * bl.z_per_entry * p.batch * ws_es <= lim.max_range);
    }
    // Bindings: aligned, within the range, starting at the piece's first element and holding its last.
    const auto check_binding = [&](const detail::PieceBinding& bind, uint64_t start, uint64_t first, uint64_t last,
                                   const char* name) {
      INFO(name, " piece at b ", p.b0, " m ", p.m0, " n ", p.n0, " k ", p.k0);
      CHECK(bind.offset % lim.offset_alignment == 0);
      CHECK(bind.size <= lim.max_range);
      CHECK(bind.offset + uint64_t{bind.element_offset} * es == start + first * es);
      CHECK(bind.offset + bind.size >= start + (last + 1) * es);
    };
    const uint64_t bl0 = p.b0, bl1 = p.b0 + p.batch - 1;
    check_binding(p.c, w.c_start, bl0 * w.stride_c + p.m0 * w.ldc + p.n0,
                  bl1 * w.stride_c + (p.m0 + p.m - 1) * w.ldc + p.n0 + p.n - 1, "C");
    if (!w.k) continue;
    const uint64_t ka = p.k0 + p.k - 1, ma = p.m0 + p.m - 1, nb = p.n0 + p.n - 1;
    check_binding(p.a, w.a_start, bl0 * w.stride_a + (w.trans_a ? p.k0 * w.lda + p.m0 : p.m0 * w.lda + p.k0),
                  bl1 * w.stride_a + (w.trans_a ? ka * w.lda + ma : ma * w.lda + ka), "A");
    check_binding(p.b, w.b_start, bl0 * w.stride_b + (w.trans_b ? p.n0 * w.ldb + p.k0 : p.k0 * w.ldb + p.n0),
                  bl1 * w.stride_b + (w.trans_b ? nb * w.ldb + ka : ka * w.ldb + nb), "B");
  }
  uint64_t wrong = 0;
  for (uint8_t c : seen) wrong += c != 1;
  CHECK_MESSAGE(wrong == 0, wrong, " terms of the sum computed other than once");
  return pieces.size();
}

// An engine (validation on) whose limits are lowered by the testing knobs; 0 leaves a limit as it is.
bool contains(const std::string& s, const std::string& words) { return s.find(words) != std::string::npos; }

// The pieces a product was cut into, from the configuration GemmTiming reports ("..., 12 pieces").
uint64_t pieces_of(const GemmTiming& t) {
  const auto at = t.config.rfind(", ");
  return at != std::string::npos && contains(t.config, " pieces") ? std::stoull(t.config.substr(at + 2)) : 1;
}

// The BLAS calls every engine below runs: each kernel, both layouts, every op combination,
// a batch past the z limit with a broadcast B, padded lds, beta 0 and not.
void run_grid(Engine& e, const char* label, uint64_t& total_pieces, uint32_t& calls, uint32_t max_k = 0) {
  auto rng = test::case_rng(label);
  GemmOptions kernels[] = {{.kernel = Kernel::naive, .tile = 4},
                                 {.kernel = Kernel::tiled, .tile = 8},
                                 {.kernel = Kernel::blocked},
                                 {.kernel = Kernel::blocked, .blocked = {.bm = 64, .bn = 64, .bk = 8, .tm = 8, .tn = 4,
                                                                         .lanes_n = 8, .split_k = 3}},
                                 {}};
  for (GemmOptions& options : kernels) options.max_k_per_submission = max_k;
  // The quick tier runs one call in N of the 40 float calls (each through hundreds or thousands of pieces; 8 a
  // kernel, so N = 8 keeps one of each kernel) and one of the 4 integer calls, CI every one.
  const test::QuickSample quick = test::quick_sample(label);
  const uint64_t float_calls = std::size(kernels) * 8;
  uint64_t index = 0;
  for (const GemmOptions& options : kernels) {
    for (const Layout layout : {Layout::row_major, Layout::col_major}) {
      for (const Op op_a : {Op::n, Op::t}) {
        for (const Op op_b : {Op::n, Op::t}) {
          if (!quick.takes(index++, float_calls)) continue;
          GemmDesc d;
          d.layout = layout, d.op_a = op_a, d.op_b = op_b;
          d.m = 70 + 11 * (op_a == Op::t), d.n = 67, d.k = 40 + 13 * (op_b == Op::t);
          d.lda = (op_a == Op::n) == (layout == Layout::row_major) ? d.k + 3 : d.m + 1;
          d.batch = 3;
          d.stride_b = op_b == Op::t ? std::optional<int64_t>(0) : std::nullopt;  // B broadcast
          d.alpha = 1.5, d.beta = layout == Layout::row_major ? 0.0 : -0.5;
          const auto r = test::check_gemm_call(e, d, options, rng);
          INFO(label, ": ", r.detail);
          CHECK(r.passed);
          total_pieces += pieces_of(r.timing);
          ++calls;
        }
      }
    }
  }
  // i32 and i8 (naive and tiled only; tiled sums i8 through packed dot products, 4 x tile of K a step, where the
  // device has them): integer sums, compared exactly.
  uint64_t integer_index = 0;
  for (const Kernel kernel : {Kernel::naive, Kernel::tiled}) {
    for (const DataType type : {DataType::i32, DataType::i8}) {
      if (!quick.takes(integer_index++, 4) || (type == DataType::i8 && !e.device().storage8)) continue;
      GemmDesc d{.type = type, .layout = Layout::col_major, .op_a = Op::t, .m = 45, .n = 38, .k = 51,
                 .alpha = 2, .beta = 3, .batch = 4};
      const auto r = test::check_gemm_call(e, d, {.kernel = kernel, .tile = 4, .max_k_per_submission = max_k}, rng);
      INFO(label, ": ", r.detail);
      CHECK(r.passed);
      total_pieces += pieces_of(r.timing);
      ++calls;
    }
  }
}

}  // namespace

TEST_SUITE("partition") {
  TEST_CASE("pieces cover C once per K element, with right offsets, bindings and grids, under made-up limits") {
    auto rng = test::case_rng("partition unit");
    std::uniform_int_distribution<uint32_t> dim(1, 40), small(1, 6), coin(0, 1);
    size_t total = 0, cut = 0;
    for (int round = 0; round < 400; ++round) {
      WholeProduct w;
      w.element_size = coin(rng) ? 4 : 8;
      w.m = dim(rng), w.n = dim(rng), w.k = round % 17 == 0 ? 0 : dim(rng), w.batch = small(rng);
      w.trans_a = coin(rng), w.trans_b = coin(rng);
      w.lda = (w.trans_a ? w.m : w.k) + small(rng) - 1, w.ldb = (w.trans_b ? w.k : w.n) + small(rng) - 1;
      w.ldc = w.n + small(rng) - 1;
      w.stride_a = coin(rng) ? 0 : (w.trans_a ? w.k : w.m) * w.lda + small(rng);
      w.stride_b = (w.trans_b ? w.n : w.k) * w.ldb;
      w.stride_c = uint64_t{w.m} * w.ldc + small(rng) - 1;
      w.a_start = w.element_size * small(rng), w.b_start = 0, w.c_start = w.element_size * 37;
      Blocking bl;
      bl.rows = small(rng), bl.cols = small(rng), bl.k_step = small(rng);
      if (coin(rng)) bl.z_per_entry = 2, bl.reduce_rows = 4, bl.reduce_cols = 8;
      if (bl.reduce_rows && coin(rng)) bl.workspace_element_size = 8;  // wider than C's (as fp32 sums of f16)
      PartitionLimits lim;
      lim.max_groups = {small(rng), small(rng), 2 + small(rng)};
      lim.offset_alignment = coin(rng) ? 16 : 64;
      lim.max_range = lim.offset_alignment + w.element_size * (std::uniform_int_distribution<uint32_t>(1, 600)(rng));
      lim.max_k = coin(rng) ? small(rng) * 3 : 0;
      lim.device = "a made-up device";
      INFO("round ", round, ": m ", w.m, " n ", w.n, " k ", w.k, " batch ", w.batch, " trans ", w.trans_a, w.trans_b,
           " range ", lim.max_range, " groups ", lim.max_groups[0], ",", lim.max_groups[1], ",", lim.max_groups[2]);
      const size_t n = check_partition(w, bl, lim);
      total += n, cut += n > 1;
    }
    MESSAGE("400 partitions: ", total, " pieces, ", cut, " of them cut");
    // Unlimited: one piece.
    WholeProduct w{.m = 300, .n = 200, .k = 100, .batch = 7, .lda = 100, .ldb = 200, .ldc = 200,
                   .stride_a = 30000, .stride_b = 20000, .stride_c = 60000};
    CHECK(detail::partition(w, {}, {.max_groups = {65535, 65535, 65535}, .max_range = 1ull << 30}).size() == 1);
  }

  TEST_CASE("what cannot be cut is too_large, naming the limit and the device") {
    const WholeProduct w{.m = 8, .n = 8, .k = 8, .lda = 8, .ldb = 8, .ldc = 8};
    test::expect_error([&] { (void)detail::partition(w, {}, {.max_groups = {9, 9, 9}, .max_range = 12,
                                                             .offset_alignment = 16, .device = "dev X"}); },
                       ErrorCode::too_large, "dev X's maxStorageBufferRange = 12 bytes");
    // A piece of one element each is 8 x 8 x 8 = 512 pieces; more than kMaxPieces is refused.
    const WholeProduct big{.m = 1u << 16, .n = 1u << 16, .k = 1, .lda = 1, .ldb = 1u << 16, .ldc = 1u << 16};
    test::expect_error([&] { (void)detail::partition(big, {}, {.max_groups = {16, 16, 1}, .max_range = 1ull << 40}); },
                       ErrorCode::too_large, "maxComputeWorkGroupCount = (16, 16, 1)");
    // On an engine: a storage range below one f32 past an unaligned start.
    auto e = test::engine_with_limits(0, 4);
    std::vector<float> a(4, 1.0f), c(4);
    test::expect_error([&] { e->gemm(DataType::f32, 2, 2, 1, a.data(), a.data(), c.data()); }, ErrorCode::too_large,
                       "maxStorageBufferRange = 4 bytes");
  }

  TEST_CASE("maxComputeWorkGroupCount lowered to 2: every kernel, layout, op, batch 3 and beta, right") {
    auto e = test::engine_with_limits(2, 0);
    REQUIRE(e->device().max_workgroup_count[2] == 2);
    uint64_t pieces = 0;
    uint32_t calls = 0;
    run_grid(*e, "groups 2", pieces, calls);
    MESSAGE(calls, " calls in ", pieces, " pieces");
    CHECK(pieces > 4 * calls);
  }

  TEST_CASE("maxStorageBufferRange lowered to 4 KiB: every kernel, layout, op, batch 3 and beta, right") {
    auto e = test::engine_with_limits(0, 4096);
    REQUIRE(e->device().max_storage_buffer_range == 4096);
    uint64_t pieces = 0;
    uint32_t calls = 0;
    run_grid(*e, "range 4096", pieces, calls);
    MESSAGE(calls, " calls in ", pieces, " pieces");
    CHECK(pieces > 4 * calls);
  }

  TEST_CASE("both lowered and a K bound of 16: right") {
    auto e = test::engine_with_limits(3, 2048);
    uint64_t pieces = 0;
    uint32_t calls = 0;
    run_grid(*e, "groups 3, range 2048, k 16", pieces, calls, 16);
    MESSAGE(calls, " calls in ", pieces, " pieces (of the first K submission each)");
  }

  TEST_CASE("a K bound: separate submissions from Engine::gemm, one command buffer from submit_gemm, beta once") {
    Engine& e = test::engine();
    auto rng = test::case_rng("k bound");
    // Engine::gemm: each chunk its own submission; beta != 0 proves beta is applied once, alpha too.
    for (const GemmOptions& options : {GemmOptions{.kernel = Kernel::tiled, .tile = 16, .max_k_per_submission = 64},
                                       GemmOptions{.kernel = Kernel::blocked, .max_k_per_submission = 50},
                                       GemmOptions{.max_k_per_submission = 7}}) {
      for (const DataType type : {DataType::f32, DataType::i32, DataType::i8}) {
        if (type != DataType::f32 && options.kernel != Kernel::tiled) continue;
        if (type == DataType::i8 && !e.device().storage8) continue;
        GemmDesc d{.type = type, .m = 33, .n = 20, .k = 300, .alpha = 2, .beta = -3, .batch = 2};
        const auto r = test::check_gemm_call(e, d, options, rng);
        INFO(r.detail);
        CHECK(r.passed);
        const uint64_t chunks = (300 + options.max_k_per_submission - 1) / options.max_k_per_submission;
        CHECK(contains(r.timing.config, fmt::format("{} submissions of K <= {}", chunks, options.max_k_per_submission)));
      }
    }
    // Timed repeats with beta = 0: each product is all its chunks again (not chunk 0 repeated).
    {
      GemmDesc d{.m = 40, .n = 24, .k = 100};
      const auto r = test::check_gemm_call(e, d, {.repeat = 3, .warmup = 1, .max_k_per_submission = 30}, rng);
      INFO(r.detail);
      CHECK(r.passed);
      if (e.device().timestamps) CHECK(r.timing.gpu_ms.size() == 3);
    }
    // submit_gemm: the chunks are consecutive dispatches of one command buffer; i32, so the result must
    // equal the unbounded product's exactly.
    const GemmDesc d{.type = DataType::i32, .m = 29, .n = 31, .k = 250, .alpha = 3, .beta = 2};
    std::uniform_int_distribution<int32_t> v(-8, 8);
    std::vector<int32_t> a(29 * 250), b(250 * 31), c0(29 * 31);
    for (auto* x : {&a, &b, &c0})
      for (auto& y : *x) y = v(rng);
    Buffer ba = e.create_buffer(a.size() * 4), bb = e.create_buffer(b.size() * 4), bc = e.create_buffer(c0.size() * 4);
    e.write(ba, 0, a.data(), a.size() * 4);
    e.write(bb, 0, b.data(), b.size() * 4);
    std::vector<int32_t> bounded(c0.size()), plain(c0.size());
    for (const uint32_t bound : {0u, 16u}) {
      e.write(bc, 0, c0.data(), c0.size() * 4);
      const GemmTiming t = submit_gemm(e, d, vulkan_range(ba), vulkan_range(bb), vulkan_range(bc),
                                       {.kernel = Kernel::tiled, .tile = 8, .max_k_per_submission = bound});
      e.read(bc, 0, (bound ? bounded : plain).data(), c0.size() * 4);
      if (bound) CHECK(pieces_of(t) == (250 + 15) / 16);
    }
    CHECK(bounded == plain);
    const Comparison cmp = compare_with_reference(d, a.data(), b.data(), c0.data(), bounded.data());
    INFO(cmp.summary());
    CHECK(cmp.passed);
  }

  // One command buffer cuts K at multiples of the kernel's K step where the bound holds one: tiled 16 steps 16
  // deep, or 64 through packed dot products (i8 where the device has them), so a bound of 40 cuts K 300 into
  // 10 chunks of up to 32, or 8 of up to 40.
  TEST_CASE("a K bound in one command buffer: chunks at the kernel's K step, packed dot products too") {
    Engine& e = test::engine();
    if (!e.device().storage8) {
      test::skip(e.device().name + " has no storageBuffer8BitAccess (i8)");
      return;
    }
    const GemmDesc d{.type = DataType::i8, .m = 33, .n = 20, .k = 300, .alpha = 2, .beta = 0};
    std::vector<int8_t> a(33 * 300), b(300 * 20);
    for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<int8_t>(i * 37 % 255);
    for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<int8_t>(i * 11 % 253);
    Buffer ba = e.create_buffer(a.size()), bb = e.create_buffer(b.size()), bc = e.create_buffer(33 * 20 * 4);
    e.write(ba, 0, a.data(), a.size());
    e.write(bb, 0, b.data(), b.size());
    const GemmTiming t = submit_gemm(e, d, vulkan_range(ba), vulkan_range(bb), vulkan_range(bc),
                                     {.kernel = Kernel::tiled, .tile = 16, .max_k_per_submission = 40});
    const bool dot = contains(t.config, "packed dot products");
    CHECK(dot == (e.device().integer_dot && VKGEMM_EXPECT_INTEGER_DOT));
    CHECK(pieces_of(t) == (dot ? 8u : 10u));
    std::vector<int32_t> c(33 * 20);
    e.read(bc, 0, c.data(), c.size() * 4);
    const Comparison cmp = compare_with_reference(d, a.data(), b.data(), nullptr, c.data());
    INFO(cmp.summary());
    CHECK(cmp.passed);
  }

  TEST_CASE("a 16-bit C cut along K: its chunks sum in fp32 and C is rounded once, with beta and the epilogue") {
    // A plan's K bound cuts K = 300 into chunks of 16 (19 of them): stored in C's type between chunks, C would
    // be rounded 19 times, past the bound of one rounding (the mutation: sums_chunks_in_fp32 false fails it).
    Engine& e = test::engine();
    auto rng = test::case_rng(test::current_case_name());
    uint32_t ran = 0;
    for (const DataType type : {DataType::f16, DataType::bf16}) {
      if (!missing_feature(e.device(), type).empty()) continue;
      for (const Kernel kernel : {Kernel::naive, Kernel::tiled, Kernel::gemv, Kernel::automatic}) {
        for (const Layout layout : {Layout::row_major, Layout::col_major}) {
          GemmDesc d{.type = type, .c_type = type, .layout = layout, .op_b = Op::t,
                     .m = kernel == Kernel::gemv ? 1 : 37, .n = 70, .k = 300, .alpha = 1.5, .beta = -0.5, .batch = 2};
          if (kernel == Kernel::tiled) d.epilogue = {.bias = BiasAxis::per_row, .activation = Activation::gelu_erf};
          CAPTURE(to_string(type));
          CAPTURE(to_string(kernel));
          CAPTURE(layout == Layout::row_major);
          const uint64_t na = uint64_t(d.m * d.k * d.batch), nb = uint64_t(d.k * d.n * d.batch);
          const uint64_t nc = uint64_t(d.m * d.n * d.batch);
          const auto a = test::random_elements(type, na, rng), b = test::random_elements(type, nb, rng);
          const auto c0 = test::random_elements(type, nc, rng);
          const auto bias = test::random_elements(DataType::f32, uint64_t(d.m), rng);
          Buffer ba = e.create_buffer(a.size()), bb = e.create_buffer(b.size()), bc = e.create_buffer(c0.size());
          Buffer bbias = e.create_buffer(bias.size());
          e.write(ba, 0, a.data(), a.size()), e.write(bb, 0, b.data(), b.size()), e.write(bc, 0, c0.data(), c0.size());
          e.write(bbias, 0, bias.data(), bias.size());
          GemmPlan plan = e.plan(d, {.gemm = {.kernel = kernel, .max_k_per_submission = 16}});
          CHECK(contains(plan.config(), "K chunks summed in fp32"));
          e.run(plan, {&ba, 0}, {&bb, 0}, {&bc, 0}, {&bbias, 0});
          std::vector<std::byte> c(c0.size());
          e.read(bc, 0, c.data(), c.size());
          const Comparison cmp = compare_with_reference(d, a.data(), b.data(), c0.data(), c.data(),
                                                        {.random_inputs = true}, bias.data());
          INFO(plan.config(), ": ", cmp.summary());
          CHECK(cmp.passed);
          ++ran;
        }
      }
    }
    if (ran == 0) test::skip("the device has neither f16 nor bf16");
  }
}
