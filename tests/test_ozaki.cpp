// The emulated f64 and f32 product on the device (Kernel::ozaki, docs/design/ozaki.md): the BLAS grid held to
// the native kernel's bound with poisoned gaps and guards (support.hpp's check_gemm_call); bit for bit the
// CPU model's integers and reconstruction (engine/src/ozaki/model.hpp); inputs the moduli cannot cover
// computed by the native kernel, with the plan saying so; the precision policy's choice.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <vector>

#include "ozaki/bound.hpp"
#include "ozaki/model.hpp"
#include "plan/schedule.hpp"
#include "tuning/tuning_table.hpp"
#include "described_devices.hpp"
#include "gemm_abi.h"
#include "ozaki_abi.h"
#include "ozaki_families.hpp"
#include "core/element_access.hpp"
#include "support.hpp"

using namespace vkgemm;

namespace {

GemmOptions emulated(uint32_t moduli = 0) {
  GemmOptions o;
  o.kernel = Kernel::ozaki;
  o.emulation_moduli = moduli;
  return o;
}

// The grid's call: the smallest lds plus `pad`, batch 1 or 3 with B broadcast.
GemmDesc make_desc(DataType type, Layout layout, Op op_a, Op op_b, int64_t m, int64_t n, int64_t k, int64_t pad,
                   bool batch, double alpha, double beta) {
  GemmDesc d;
  d.type = type, d.layout = layout, d.op_a = op_a, d.op_b = op_b, d.m = m, d.n = n, d.k = k;
  d.alpha = alpha, d.beta = beta;
  const bool row = layout == Layout::row_major;
  const auto inner = [&](int64_t rows, int64_t cols) { return row ? cols : rows; };
  d.lda = inner(op_a == Op::n ? m : k, op_a == Op::n ? k : m) + pad;
  d.ldb = inner(op_b == Op::n ? k : n, op_b == Op::n ? n : k) + pad;
  d.ldc = inner(m, n) + pad;
  if (batch) d.batch = 3, d.stride_b = 0;
  return d;
}

std::vector<std::byte> uniform(DataType type, uint64_t count, std::mt19937_64& rng) {
  return test::random_elements(type, count, rng);
}

void put(std::vector<std::byte>& v, DataType type, size_t i, double x) { detail::store_element(type, v.data(), i, x); }

}  // namespace

TEST_SUITE("ozaki") {
  TEST_CASE("the BLAS grid within the native kernel's bound") {
    std::mt19937_64 rng = test::case_rng("ozaki grid");
    const test::GridSample sample = test::grid_sample("ozaki grid");
    uint64_t index = 0, checked = 0;
    for (DataType type : {DataType::f64, DataType::f32})
      for (Layout layout : {Layout::row_major, Layout::col_major})
        for (Op op_a : {Op::n, Op::t})
          for (Op op_b : {Op::n, Op::t})
            for (auto [m, n, k] : {std::array<int64_t, 3>{1, 1, 1}, {7, 5, 3}, {33, 17, 64}, {67, 64, 129}})
              for (auto [alpha, beta] : {std::pair{1.0, 0.0}, {3.14, 2.5}, {0.0, 3.0}}) {
                if (!sample.takes(index++)) continue;
                const bool batch = (index % 2) == 0;
                const GemmDesc d = make_desc(type, layout, op_a, op_b, m, n, k, index % 3 == 0 ? 3 : 0, batch,
                                             alpha, beta);
                const test::ProductCheck r = test::check_gemm_call(d, emulated(), rng);
                CAPTURE(test::describe(d));
                CHECK_MESSAGE(r.passed, r.detail);
                if (alpha != 0.0) CHECK(r.timing.kernel == Kernel::ozaki);
                ++checked;
              }
    MESSAGE("checked " << checked << " calls");
  }

  TEST_CASE("bit for bit the CPU model's result, K across chunks and fewer moduli included") {
    std::mt19937_64 rng = test::case_rng("ozaki model agreement");
    for (DataType type : {DataType::f64, DataType::f32})
      for (uint32_t moduli : {0u, 5u, 20u}) {
        GemmDesc d = make_desc(type, Layout::row_major, Op::n, Op::t, 19, 23, 300, 1, true, -1.5, 0.75);
        const auto a = uniform(type, operand_extent(d, 'A').elements, rng);
        const auto b = uniform(type, operand_extent(d, 'B').elements, rng);
        const auto c0 = uniform(type, operand_extent(d, 'C').elements, rng);
        std::vector<std::byte> device = c0, model(c0.size());
        const GemmTiming t = test::engine().gemm(d, a.data(), b.data(), device.data(), emulated(moduli));
        ozaki::ModelOptions mo;
        mo.moduli = moduli;
        CHECK(ozaki::model_gemm(d, a.data(), b.data(), c0.data(), model.data(), mo));
        CAPTURE(type);
        CAPTURE(moduli);
        CHECK(t.kernel == Kernel::ozaki);
        // Where the device lists int8 matrices (Mesa 26's lavapipe, NVIDIA), the products are the matrix kernels'.
        const DeviceInfo& info = test::engine().device();
        const auto lists_i8 = [](const std::vector<CooperativeMatrixShape>& shapes) {
          return std::any_of(shapes.begin(), shapes.end(), [](const auto& shape) { return shape.a_type == "i8"; });
        };
        if (info.int8 && ((info.coopmat_khr && lists_i8(info.coopmat_shapes)) ||
                          (info.coopmat2 && lists_i8(info.coopmat2_shapes)))) {
          CHECK_MESSAGE(t.config.find("int8 products by coopmat") != std::string::npos, t.config);
        }
        size_t differ = 0, first = 0;
        const size_t size = element_size(type);
        for (size_t i = 0; i < device.size() / size; ++i) {
          if (std::memcmp(device.data() + i * size, model.data() + i * size, size) != 0 && differ++ == 0) first = i;
        }
        double got = 0, want = 0;
        if (differ) {
          if (type == DataType::f32) {
            float g, w;
            std::memcpy(&g, device.data() + first * 4, 4), std::memcpy(&w, model.data() + first * 4, 4);
            got = g, want = w;
          } else {
            std::memcpy(&got, device.data() + first * 8, 8), std::memcpy(&want, model.data() + first * 8, 8);
          }
        }
        CHECK_MESSAGE(differ == 0, differ << " elements differ, the first at " << first << ": " << got << " against "
                                          << want << ", relative " << (got - want) / want);
      }
  }

  TEST_CASE("int32 planes past one binding: the products and the merge in row blocks, bit for bit the model") {
    // maxStorageBufferRange read as 48 KiB: A, B, C and each plane region fit one binding, but the int32 planes
    // of the whole C (14 moduli x batch 2 x 100 x 20 x 4 bytes) do not, so they are made and merged 16 rows
    // at a time over one region; batch 2 places the second entry's exponents by the entry's full rows.
    auto limited = test::engine_with_limits(0, 48 << 10);
    std::mt19937_64 rng = test::case_rng("ozaki row blocks");
    for (DataType type : {DataType::f64, DataType::f32}) {
      GemmDesc d = make_desc(type, Layout::row_major, Op::n, Op::t, 100, 20, 8, 0, false, -1.5, 0.75);
      d.batch = 2;
      d.stride_a = d.m * d.lda, d.stride_b = d.n * d.ldb, d.stride_c = d.m * d.ldc;
      // Rows of A scaled by 2^-4 .. 2^4 in turn: each row's exponent its own, so a row read as another's fails.
      auto a = uniform(type, operand_extent(d, 'A').elements, rng);
      std::uniform_real_distribution<double> unit(-1.0, 1.0);
      for (size_t i = 0; i < operand_extent(d, 'A').elements; ++i) {
        put(a, type, i, std::ldexp(unit(rng), static_cast<int>((i / static_cast<size_t>(d.lda)) % 9) - 4));
      }
      const auto b = uniform(type, operand_extent(d, 'B').elements, rng);
      const auto c0 = uniform(type, operand_extent(d, 'C').elements, rng);
      std::vector<std::byte> device = c0, model(c0.size());
      const GemmTiming t = limited->gemm(d, a.data(), b.data(), device.data(), emulated());
      CAPTURE(type);
      CHECK(t.kernel == Kernel::ozaki);
      CHECK_MESSAGE(t.config.find(type == DataType::f64 ? "in 7 blocks of 16 rows" : "in 3 blocks of 40 rows") !=
                        std::string::npos, t.config);
      CHECK(ozaki::model_gemm(d, a.data(), b.data(), c0.data(), model.data()));
      CHECK(device == model);
      CHECK(compare_with_reference(d, a.data(), b.data(), c0.data(), device.data()).passed);
    }
  }

  TEST_CASE("int32 planes in an allocation of their own: one block where the workspace as one would need two") {
    // maxMemoryAllocationSize read as 600 KiB: f64 200 x 40 x 64 takes about 270 KiB of int8 planes, magnitude
    // sums and words, and up to 512 KiB of int32 planes (16 moduli, the guard's largest count); together they
    // pass the limit, each alone does not, so every count runs in one block of rows.
    auto limited = test::engine_with_limits(0, 0, 600 << 10);
    std::mt19937_64 rng = test::case_rng(test::current_case_name());
    const GemmDesc d = make_desc(DataType::f64, Layout::row_major, Op::n, Op::n, 200, 40, 64, 0, false, 1.0, 0.5);
    const auto a = uniform(DataType::f64, operand_extent(d, 'A').elements, rng);
    const auto b = uniform(DataType::f64, operand_extent(d, 'B').elements, rng);
    const auto c0 = uniform(DataType::f64, operand_extent(d, 'C').elements, rng);
    std::vector<std::byte> device = c0, model(c0.size());
    const GemmTiming t = limited->gemm(d, a.data(), b.data(), device.data(), emulated());
    CHECK(t.kernel == Kernel::ozaki);
    CHECK_MESSAGE(t.config.find("14 moduli (15 or 16 where the span guard") != std::string::npos, t.config);
    CHECK_MESSAGE(t.config.find("blocks of") == std::string::npos, t.config);
    CHECK(ozaki::model_gemm(d, a.data(), b.data(), c0.data(), model.data()));
    CHECK(device == model);
    CHECK(compare_with_reference(d, a.data(), b.data(), c0.data(), device.data()).passed);
  }

  TEST_CASE("a count the span guard chose, in row blocks: its products and merges by block, the model's") {
    // Elements spread 2^+-7 inside lines: refused at the default moduli, computed with more (the model suite
    // shows the margins). maxStorageBufferRange read as 1100 KiB: f64's int32 planes at 15 and 16 moduli (x 100 x
    // 200 x 4 bytes) take two blocks of rows where the default count's fit one.
    auto limited = test::engine_with_limits(0, 1100 << 10);
    std::mt19937_64 rng = test::case_rng(test::current_case_name());
    std::uniform_real_distribution<double> value(-1.0, 1.0), octave(-7.0, 7.0);
    for (DataType type : {DataType::f64, DataType::f32}) {
      const GemmDesc d = make_desc(type, Layout::row_major, Op::n, Op::n, 100, 200, 300, 0, false, 1.0, 0.0);
      auto a = uniform(type, operand_extent(d, 'A').elements, rng);
      auto b = uniform(type, operand_extent(d, 'B').elements, rng);
      for (auto* x : {&a, &b}) {
        for (size_t i = 0; i < x->size() / element_size(type); ++i) {
          put(*x, type, i, value(rng) * std::exp2(octave(rng)));
        }
      }
      const std::vector<std::byte> c0(static_cast<size_t>(d.m * d.n) * element_size(type));
      std::vector<std::byte> device = c0, model(c0.size());
      const GemmTiming t = limited->gemm(d, a.data(), b.data(), device.data(), emulated());
      CAPTURE(type);
      CHECK(t.kernel == Kernel::ozaki);
      CHECK_MESSAGE(t.config.find("the span guard's choice over") != std::string::npos, t.config);
      if (type == DataType::f64) {
        CHECK_MESSAGE(t.config.find("14 moduli (15 (in 2 blocks of 56 rows) or 16 (in 2 blocks of 56 rows) where") !=
                          std::string::npos, t.config);
      }
      CHECK(ozaki::model_gemm(d, a.data(), b.data(), c0.data(), model.data()));
      CHECK(device == model);
      CHECK(compare_with_reference(d, a.data(), b.data(), c0.data(), device.data()).passed);
    }
  }

  TEST_CASE("K past the int32 exactness limit: two K chunks, summed in the merge, bit for bit the model") {
    std::mt19937_64 rng = test::case_rng("ozaki K chunks");
    const GemmDesc d = make_desc(DataType::f64, Layout::row_major, Op::n, Op::t, 2, 3, 140000, 0, false, 1.0, 0.0);
    const auto a = uniform(DataType::f64, operand_extent(d, 'A').elements, rng);
    const auto b = uniform(DataType::f64, operand_extent(d, 'B').elements, rng);
    std::vector<std::byte> c0(6 * 8), device = c0, model = c0;
    const GemmTiming t = test::engine().gemm(d, a.data(), b.data(), device.data(), emulated());
    CHECK(t.config.find("2 K chunks") != std::string::npos);
    CHECK(ozaki::model_gemm(d, a.data(), b.data(), c0.data(), model.data()));
    CHECK(device == model);
    CHECK(compare_with_reference(d, a.data(), b.data(), c0.data(), device.data()).passed);
  }

  TEST_CASE("the merge's largest sums: rows and columns each constant, each int32 sum K r_A r_B, the model's") {
    // Every element of a constant line has one residue a modulus, so sum (i, j) is K r_A(i) r_B(j) with one
    // sign: up to about 2^30 a chunk (random residues' sums stay near sqrt(K) 2^13), and 16 x 16 of them a
    // modulus, so that a residue rule exact only for small sums (a reciprocal rounded to float) meets sums
    // whose quotients lie near a half-integer.
    for (DataType type : {DataType::f64, DataType::f32})
      for (int64_t k : {int64_t{4000}, int64_t{140000}}) {
        const GemmDesc d = make_desc(type, Layout::row_major, Op::n, Op::n, 16, 16, k, 0, false, 1.0, 0.0);
        std::vector<std::byte> a(operand_extent(d, 'A').elements * element_size(type));
        std::vector<std::byte> b(operand_extent(d, 'B').elements * element_size(type));
        for (int64_t i = 0; i < 16; ++i)
          for (int64_t p = 0; p < k; ++p) {
            put(a, type, static_cast<size_t>(i * k + p), 0.5 + 0.0311 * static_cast<double>(i));
            put(b, type, static_cast<size_t>(p * 16 + i), -0.4 - 0.0373 * static_cast<double>(i));
          }
        std::vector<std::byte> c0(16 * 16 * element_size(type)), device = c0, model = c0;
        const GemmTiming t = test::engine().gemm(d, a.data(), b.data(), device.data(), emulated());
        CAPTURE(type);
        CAPTURE(k);
        CHECK(t.kernel == Kernel::ozaki);
        CHECK(ozaki::model_gemm(d, a.data(), b.data(), c0.data(), model.data()));
        CHECK(device == model);
        CHECK(compare_with_reference(d, a.data(), b.data(), c0.data(), device.data()).passed);
      }
  }

  TEST_CASE("inputs the moduli cannot cover are computed by the native kernel, and the plan says so") {
    std::mt19937_64 rng = test::case_rng("ozaki fallback");
    for (DataType type : {DataType::f64, DataType::f32}) {
      const GemmDesc d = make_desc(type, Layout::row_major, Op::n, Op::n, 9, 7, 12, 0, false, 1.0, 0.0);
      const double tiny = type == DataType::f32 ? static_cast<double>(std::numeric_limits<float>::denorm_min())
                                                : std::numeric_limits<double>::denorm_min();
      for (int which = 0; which < 4; ++which) {
        auto a = uniform(type, operand_extent(d, 'A').elements, rng);
        auto b = uniform(type, operand_extent(d, 'B').elements, rng);
        if (which == 0) put(a, type, 5, std::numeric_limits<double>::quiet_NaN());
        if (which == 1) put(b, type, 3, std::numeric_limits<double>::infinity());
        if (which == 2) put(b, type, 4, -std::numeric_limits<double>::infinity());
        if (which == 3) for (int p = 0; p < 12; ++p) put(a, type, static_cast<size_t>(24 + p), tiny * (p + 1));
        std::vector<std::byte> emulated_c(operand_extent(d, 'C').elements * element_size(type));
        std::vector<std::byte> native_c = emulated_c;
        const GemmTiming t = test::engine().gemm(d, a.data(), b.data(), emulated_c.data(), emulated());
        test::engine().gemm(d, a.data(), b.data(), native_c.data(), GemmOptions{});
        CAPTURE(type);
        CAPTURE(which);
        // The timing names the native kernel that computed it, and why.
        CHECK(t.kernel != Kernel::ozaki);
        CHECK(t.config.find(which == 3 ? "subnormal" : "NaN or infinite") != std::string::npos);
        // The fallback is the native plan of the same call: the same bits, NaN and infinities included.
        CHECK(std::memcmp(emulated_c.data(), native_c.data(), native_c.size()) == 0);
      }
    }
  }

  TEST_CASE("the span guard on the device: each hostile family the model's way, computed or refused") {
    // Computed: bit for bit the CPU model (whose guard admitted it) and within the native bound; refused: the
    // native plan's bits. A device guard that admits what the model's refuses (or the reverse) fails here.
    namespace families = test::ozaki_families;
    std::mt19937_64 rng = test::case_rng("ozaki guard families");
    uint64_t computed = 0, refused = 0, by_levels = 0;
    for (DataType type : {DataType::f64, DataType::f32})
      for (int64_t k : {int64_t{64}, int64_t{300}})
        for (families::Family f : families::kFamilies) {
          const GemmDesc d = make_desc(type, Layout::row_major, Op::n, Op::n, 24, 20, k, 0, false, 1.0, 0.0);
          const families::Operands o = families::draw(f, type, d.m, d.n, k, rng);
          const size_t c_bytes = static_cast<size_t>(d.m * d.n) * element_size(type);
          std::vector<std::byte> device(c_bytes), native(c_bytes), model(c_bytes), c0(c_bytes);
          const GemmTiming t = test::engine().gemm(d, o.a.data(), o.b.data(), device.data(), emulated());
          const std::string family = families::name(f);
          CAPTURE(type);
          CAPTURE(k);
          CAPTURE(family);
          const bool admitted = ozaki::model_gemm(d, o.a.data(), o.b.data(), c0.data(), model.data());
          if (admitted) {
            CHECK(families::may_compute(f, type));
          } else {
            CHECK(families::refused(f));
          }
          // The timing says which ran: the emulation, or the native kernel the span guard fell back to.
          CHECK((t.kernel == Kernel::ozaki) == admitted);
          if (!admitted) CHECK(t.config.find("the span guard") != std::string::npos);
          // More moduli: the span guard chose a count past the default (bit for bit the model's).
          const bool by_default = families::outcome(f) == families::Outcome::computed;
          CHECK((t.config.find("the span guard's choice") != std::string::npos) == (admitted && !by_default));
          if (admitted) {
            // The timing names the guard's pass that decided the first count, where the model's did (guard.hpp).
            const ozaki::GuardPass pass = ozaki::deciding_pass(d, o.a.data(), o.b.data());
            CHECK((t.config.find("judged it by its magnitude product") != std::string::npos) ==
                  (pass == ozaki::GuardPass::magnitudes));
            CHECK((t.config.find("judged it by each pair of lines' levels") != std::string::npos) ==
                  (pass == ozaki::GuardPass::levels));
            by_levels += pass != ozaki::GuardPass::magnitudes ? 1 : 0;
            ++computed;
            CHECK(device == model);
            CHECK(compare_with_reference(d, o.a.data(), o.b.data(), c0.data(), device.data()).passed);
          } else {
            ++refused;
            test::engine().gemm(d, o.a.data(), o.b.data(), native.data(), GemmOptions{});
            CHECK(device == native);
          }
        }
    MESSAGE(computed << " family products computed by the emulation (" << by_levels << " judged without the product), "
                     << refused << " refused to the native kernel");
    CHECK(by_levels > 0);
    CHECK(by_levels < computed);  // both of the guard's ways ran
  }

  TEST_CASE("hostile inputs the moduli cover: zero rows, +-0, exponents near both ends, 1x1, beta over NaN") {
    std::mt19937_64 rng = test::case_rng("ozaki hostile");
    for (DataType type : {DataType::f64, DataType::f32}) {
      const int top = type == DataType::f32 ? 100 : 1000;
      GemmDesc d = make_desc(type, Layout::row_major, Op::n, Op::n, 6, 5, 8, 0, false, 1.0, 0.0);
      auto a = uniform(type, 48, rng), b = uniform(type, 40, rng);
      for (int p = 0; p < 8; ++p) put(a, type, static_cast<size_t>(8 + p), p % 2 ? 0.0 : -0.0);  // a zero row
      for (int p = 0; p < 8; ++p) {  // row 0 near the top of the range, row 2 near the bottom
        double v0, v2;
        if (type == DataType::f32) {
          float f0, f2;
          std::memcpy(&f0, a.data() + p * 4, 4), std::memcpy(&f2, a.data() + (16 + p) * 4, 4);
          v0 = f0, v2 = f2;
        } else {
          std::memcpy(&v0, a.data() + p * 8, 8), std::memcpy(&v2, a.data() + (16 + p) * 8, 8);
        }
        put(a, type, static_cast<size_t>(p), std::ldexp(v0, top / 4));
        put(a, type, static_cast<size_t>(16 + p), std::ldexp(v2, -top / 4));
      }
      std::vector<std::byte> c(30 * element_size(type));
      for (size_t i = 0; i < 30; ++i) put(c, type, i, std::numeric_limits<double>::quiet_NaN());  // beta 0: not read
      const GemmTiming t = test::engine().gemm(d, a.data(), b.data(), c.data(), emulated());
      CHECK(t.kernel == Kernel::ozaki);
      std::vector<std::byte> c0(c.size());
      for (size_t i = 0; i < 30; ++i) put(c0, type, i, std::numeric_limits<double>::quiet_NaN());
      CAPTURE(type);
      CHECK(compare_with_reference(d, a.data(), b.data(), c0.data(), c.data()).passed);
      const GemmDesc one = make_desc(type, Layout::col_major, Op::t, Op::t, 1, 1, 1, 0, false, 2.0, 0.0);
      CHECK(test::check_gemm_call(one, emulated(), rng).passed);
    }
  }

  TEST_CASE("the span guard's passes on the device: the lines' extremes, each pair's levels, the product") {
    // Uniform lines are admitted at the first count on the lines' extremes alone (no pass over C runs); a zero
    // row of A takes the extremes' fewest levels to 0, so they refuse and each pair of lines' levels decides
    // (the zero row's pairs have nothing to truncate); normal lines, most elements far below their largest,
    // need the product. Each the model's way, and the model's bits: a device whose extremes admitted what they
    // must not would skip the later passes.
    std::mt19937_64 rng = test::case_rng(test::current_case_name());
    enum class Draw { uniform, zero_row, normal };
    const std::pair<Draw, ozaki::GuardPass> cases[] = {{Draw::uniform, ozaki::GuardPass::extremes},
                                                       {Draw::zero_row, ozaki::GuardPass::levels},
                                                       {Draw::normal, ozaki::GuardPass::magnitudes}};
    const char* levels_said = "judged it by each pair of lines' levels";
    const char* product_said = "judged it by its magnitude product";
    for (DataType type : {DataType::f64, DataType::f32})
      for (const auto& c : cases) {
        const Draw draw = c.first;  // not a structured binding: CAPTURE's lambda takes it (clang 14)
        const ozaki::GuardPass pass = c.second;
        const int64_t m = 8, n = 6, k = 4096;
        const GemmDesc d = make_desc(type, Layout::row_major, Op::n, Op::n, m, n, k, 0, false, 1.0, 0.0);
        std::vector<std::byte> a = uniform(type, static_cast<uint64_t>(m * k), rng);
        std::vector<std::byte> b = uniform(type, static_cast<uint64_t>(k * n), rng);
        std::normal_distribution<double> normal;
        for (size_t i = 0; draw == Draw::normal && i < static_cast<size_t>(m * k); ++i) put(a, type, i, normal(rng));
        for (size_t i = 0; draw == Draw::normal && i < static_cast<size_t>(k * n); ++i) put(b, type, i, normal(rng));
        const size_t row3 = static_cast<size_t>(3 * k);
        for (size_t t = 0; draw == Draw::zero_row && t < static_cast<size_t>(k); ++t) put(a, type, row3 + t, 0.0);
        CAPTURE(type);
        CAPTURE(static_cast<int>(draw));
        REQUIRE(ozaki::deciding_pass(d, a.data(), b.data()) == pass);
        const size_t c_bytes = static_cast<size_t>(m * n) * element_size(type);
        std::vector<std::byte> device(c_bytes), model(c_bytes), c0(c_bytes);
        const GemmTiming t = test::engine().gemm(d, a.data(), b.data(), device.data(), emulated());
        CAPTURE(t.config);
        CHECK(t.kernel == Kernel::ozaki);
        CHECK((t.config.find(levels_said) != std::string::npos) == (pass == ozaki::GuardPass::levels));
        CHECK((t.config.find(product_said) != std::string::npos) == (pass == ozaki::GuardPass::magnitudes));
        REQUIRE(ozaki::model_gemm(d, a.data(), b.data(), c0.data(), model.data()));
        CHECK(device == model);
      }
  }

  TEST_CASE("the precision policy: auto emulates only where allowed and the device has int8 matrix units") {
    GemmOptions native;
    GemmOptions allowed;
    allowed.precision = Precision::emulated;
    std::vector<double> a(64 * 64, 0.5), b(64 * 64, 0.25), c(64 * 64);
    const GemmTiming t = test::engine().gemm(DataType::f64, 64, 64, 64, a.data(), b.data(), c.data(), native);
    CHECK(t.kernel != Kernel::ozaki);
    const GemmTiming u = test::engine().gemm(DataType::f64, 64, 64, 64, a.data(), b.data(), c.data(), allowed);
    // lavapipe has no int8 matrix units: auto keeps the native kernel even where emulation is allowed.
    const bool units = !test::engine().device().coopmat_shapes.empty() || test::engine().device().coopmat2;
    if (!units) CHECK(u.kernel != Kernel::ozaki);
    CHECK(c[0] == 64 * 0.125);
  }

  TEST_CASE("auto emulates where the device's cost model predicts a gain, and keeps native elsewhere") {
    // A described H200 with the built-in tables: its cost model (engine/tuning/nvidia-h200.json) against the
    // products it was fitted to (docs/design/ozaki.md, "Choosing it").
    tuning::Table table;
    for (const auto& [name, text] : tuning::builtin_tables()) table.add_json(text, name);
    DeviceInfo h200 = test::nvidia_int8();
    h200.name = "NVIDIA H200", h200.vendor_id = 0x10de, h200.driver_version = "580.159.4.0", h200.float64 = true;
    GemmOptions allowed;
    allowed.precision = Precision::emulated;
    const auto kernel = [&](DataType type, uint32_t m, uint32_t n, uint32_t k, const DeviceInfo& device) {
      const GemmDesc d{.type = type, .m = m, .n = n, .k = k};
      return detail::schedule_product(d, allowed, device, table).kernel;
    };
    CHECK(kernel(DataType::f64, 4096, 4096, 4096, h200) == Kernel::ozaki);
    CHECK(kernel(DataType::f64, 8192, 8192, 8192, h200) == Kernel::ozaki);
    CHECK(kernel(DataType::f32, 8192, 8192, 8192, h200) == Kernel::ozaki);
    CHECK(kernel(DataType::f64, 1024, 1024, 1024, h200) != Kernel::ozaki);  // measured 0.56 x native
    CHECK(kernel(DataType::f64, 127, 4096, 4096, h200) != Kernel::ozaki);   // 0.30 x
    CHECK(kernel(DataType::f64, 16384, 16384, 1024, h200) != Kernel::ozaki);  // 0.84 x
    CHECK(kernel(DataType::f32, 4096, 4096, 4096, h200) != Kernel::ozaki);    // predicted 0.92 x
    // A device without a measured model never emulates by itself; the native policy never does.
    DeviceInfo other = h200;
    other.name = "described GPU", other.vendor_id = 0x1234;
    CHECK(kernel(DataType::f64, 8192, 8192, 8192, other) != Kernel::ozaki);
    allowed.precision = Precision::native;
    CHECK(kernel(DataType::f64, 8192, 8192, 8192, h200) != Kernel::ozaki);
  }

  TEST_CASE("the arms: one pass a condition, before every dispatch it arms, each command armed once") {
    // A described H200, f64 4096^3: the clear, then one arm pass for each condition (the levels' pass; the
    // magnitude products and their pass; the native kernel's dispatches; each of the three candidate counts'
    // splits, products and merges): 7 arm passes for 14 commands (the native kernel one dispatch there).
    tuning::Table table;
    for (const auto& [name, text] : tuning::builtin_tables()) table.add_json(text, name);
    DeviceInfo h200 = test::nvidia_int8();
    h200.name = "NVIDIA H200", h200.vendor_id = 0x10de, h200.float64 = true;
    const GemmDesc d{.type = DataType::f64, .m = 4096, .n = 4096, .k = 4096};
    const detail::Schedule plan = detail::schedule_product(d, emulated(), h200, table);
    std::map<uint32_t, size_t> armed_at;  // command word -> the arm pass's index
    size_t arms = 0, commands = 0;
    for (size_t i = 0; i < plan.sequence.size(); ++i) {
      const detail::SequencePass& pass = plan.sequence[i];
      if (pass.pass.shape.shader == "ozaki_arm_i32") {
        ++arms;
        std::array<uint32_t, GEMM_PUSH_BYTES / 4> w{};
        std::memcpy(w.data(), &pass.pass.push, sizeof(w));
        if (w[OZAKI_ARM_WORD_MODE] & OZAKI_ARM_CLEAR) continue;
        CHECK(w[OZAKI_ARM_WORD_SLOTS] >= 1);
        for (uint32_t s = 0; s < w[OZAKI_ARM_WORD_SLOTS]; ++s) {
          CHECK(armed_at.emplace(w[OZAKI_ARM_WORD_SLOT + 4 * s], i).second);  // armed once
        }
      } else if (pass.indirect) {
        ++commands;
        const auto found = armed_at.find(static_cast<uint32_t>(*pass.indirect / 4));
        CHECK_MESSAGE(found != armed_at.end(), pass.pass.shape.shader << " at " << i << " is armed before it");
      }
    }
    CHECK(commands == armed_at.size());
    CHECK(arms == 7);
    CHECK(commands == 14);
  }

  TEST_CASE("a bad moduli count is refused before any work, naming the option") {
    std::vector<double> a(4), b(4), c(4);
    test::expect_error([&] { test::engine().gemm(DataType::f64, 2, 2, 1, a.data(), b.data(), c.data(), emulated(1)); },
                       ErrorCode::invalid_argument, "emulation_moduli");
    test::expect_error([&] { test::engine().gemm(DataType::f64, 2, 2, 1, a.data(), b.data(), c.data(), emulated(21)); },
                       ErrorCode::invalid_argument, "emulation_moduli");
    std::vector<int32_t> ai(4), bi(4), ci(4);
    test::expect_error([&] { test::engine().gemm(DataType::i32, 2, 2, 1, ai.data(), bi.data(), ci.data(), emulated()); },
                       ErrorCode::unsupported_type, "ozaki");
  }

  TEST_CASE("fewer moduli on the device: --verify's rule holds C to the emulation's bound, full and sampled") {
    // What vkgemm run --kernel ozaki --moduli 5 --verify judges by (reference.hpp, emulation_moduli_to_judge):
    // the device's C within the emulation's own bound and outside the native kernel's; one element moved
    // past its allowance fails the full comparison, and past the row sums' catch the sampled check.
    std::mt19937_64 rng = test::case_rng("ozaki verify rule");
    for (Layout layout : {Layout::row_major, Layout::col_major}) {
      const GemmDesc d = make_desc(DataType::f64, layout, Op::n, Op::t, 70, 45, 96, 2, false, 1.25, -0.5);
      const auto a = uniform(DataType::f64, operand_extent(d, 'A').elements, rng);
      const auto b = uniform(DataType::f64, operand_extent(d, 'B').elements, rng);
      const auto c0 = uniform(DataType::f64, operand_extent(d, 'C').elements, rng);
      std::vector<std::byte> c = c0;
      const GemmOptions five = emulated(5);
      const GemmTiming t = test::engine().gemm(d, a.data(), b.data(), c.data(), five);
      CAPTURE(test::describe(d));
      REQUIRE(t.kernel == Kernel::ozaki);
      const uint32_t judged = emulation_moduli_to_judge(d, five, t.kernel);
      CHECK(judged == 5u);
      CHECK(emulation_moduli_to_judge(d, emulated(), t.kernel) == 0u);
      const CompareOptions own{.emulation_moduli = judged};
      const SampleOptions sample{.seed = 5, .tile_m = 8, .tile_n = 8, .budget = 1, .vectors = 2};
      const Comparison full = compare_with_reference(d, a.data(), b.data(), c0.data(), c.data(), own);
      const Comparison sampled = check_sampled(d, a.data(), b.data(), c0.data(), c.data(), own, sample);
      CHECK_MESSAGE(full.passed, full.summary());
      CHECK(full.emulation_moduli == 5u);
      CHECK_MESSAGE(sampled.passed, sampled.summary());
      CHECK_FALSE(compare_with_reference(d, a.data(), b.data(), c0.data(), c.data()).passed);
      CHECK_FALSE(check_sampled(d, a.data(), b.data(), c0.data(), c.data(), {}, sample).passed);
      const CompareOptions six{.emulation_moduli = 6};  // the wrong count handed to the bound
      CHECK_FALSE(compare_with_reference(d, a.data(), b.data(), c0.data(), c.data(), six).passed);
      // Element (3, 4) moved by more than the bound allows it: |C - C_ref| there at least the allowance of an
      // element whose |A||B| is k (every |a|, |b| <= 1) and whose C0 is 1, times 4.
      const ozaki::EmulationBound bound(d, a.data(), b.data(), 5);
      const size_t at = static_cast<size_t>(layout == Layout::row_major ? 3 * d.ldc + 4 : 4 * d.ldc + 3);
      std::vector<std::byte> moved = c;
      const double v = detail::load_element(DataType::f64, c.data(), at);
      put(moved, DataType::f64, at, v + 4.0 * bound.allowed(0, 3, 4, double(d.k), 1.0, 2.0 * double(d.k)));
      CHECK_FALSE(compare_with_reference(d, a.data(), b.data(), c0.data(), moved.data(), own).passed);
      put(moved, DataType::f64, at, v + 2.0 * sampled.sampled->row_sum_catch);
      const Comparison caught = check_sampled(d, a.data(), b.data(), c0.data(), moved.data(), own, sample);
      CHECK_FALSE(caught.passed);
      CHECK(caught.sampled->bad_rows == 1u);
    }
  }
}
