// vkgemm's distributed GEMM's arithmetic (engine/src/pblas/): the block-cyclic distribution of an axis and of
// a submatrix of it, checked against an enumeration of every index on many axes (first blocks of their own
// size, every source process), and the rule that takes a P?GEMM call or hands it to ScaLAPACK's. The
// gathers and the local GEMM run under MPI in the distributed.pblas test (ScaLAPACK's own tester).
#include <array>
#include <cstdint>
#include <random>
#include <string>
#include <variant>
#include <vector>

#include <doctest/doctest.h>

#include "pblas/block_cyclic.hpp"
#include "pblas/gather_plan.hpp"

namespace vkgemm::pblas {
namespace {

// Owner and local position of every global index, by walking the blocks one by one.
struct Walked {
  std::vector<int> owner;
  std::vector<int64_t> local;
};
Walked walk(const Axis& axis) {
  Walked w;
  std::vector<int64_t> next(static_cast<size_t>(axis.procs), 0);
  int64_t block = 0, end = axis.first;
  for (int64_t i = 0; i < axis.n; ++i) {
    while (i >= end) ++block, end += axis.block;
    const int p = static_cast<int>((axis.src + block) % axis.procs);
    w.owner.push_back(p);
    w.local.push_back(next[static_cast<size_t>(p)]++);
  }
  return w;
}

// A number in 0 .. below - 1.
int64_t pick(std::mt19937& rng, int64_t below) { return static_cast<int64_t>(rng() % static_cast<uint64_t>(below)); }

std::vector<Axis> axes(uint32_t seed, int count) {
  std::mt19937 rng(seed);
  std::vector<Axis> out;
  for (int i = 0; i < count; ++i) {
    Axis a;
    a.procs = 1 + static_cast<int>(pick(rng, 5));
    a.src = static_cast<int>(pick(rng, a.procs));
    a.block = 1 + pick(rng, 7);
    a.first = pick(rng, 3) == 0 ? a.block : 1 + pick(rng, 9);
    a.n = pick(rng, 70);
    out.push_back(a);
  }
  return out;
}

// What a failure names: the axis.
std::string describe(const Axis& a) {
  return "n " + std::to_string(a.n) + ", first " + std::to_string(a.first) + ", block " + std::to_string(a.block) +
         ", src " + std::to_string(a.src) + " of " + std::to_string(a.procs);
}

TEST_SUITE("pblas plan") {
  TEST_CASE("each index's owner and local position, and each process's blocks, match the walk") {
    const uint32_t seed = std::random_device{}();
    INFO("seed " << seed);
    for (const Axis& a : axes(seed, 400)) {
      INFO("axis: " << describe(a));
      REQUIRE(valid(a));
      const Walked w = walk(a);
      for (int64_t i = 0; i < a.n; ++i) {
        REQUIRE(owner(a, i) == w.owner[static_cast<size_t>(i)]);
        REQUIRE(count_below(a, w.owner[static_cast<size_t>(i)], i) == w.local[static_cast<size_t>(i)]);
      }
      for (int p = 0; p < a.procs; ++p) {
        int64_t held = 0;
        std::vector<int64_t> mine;
        for (int64_t i = 0; i < a.n; ++i)
          if (w.owner[static_cast<size_t>(i)] == p) mine.push_back(i), ++held;
        REQUIRE(local_extent(a, p) == held);
        std::vector<int64_t> listed;
        for (const OwnedBlock& b : owned_blocks(a, p)) {
          REQUIRE(b.length > 0);
          REQUIRE(b.local == static_cast<int64_t>(listed.size()));
          for (int64_t j = 0; j < b.length; ++j) listed.push_back(b.global + j);
        }
        REQUIRE(listed == mine);
      }
    }
  }

  TEST_CASE("a submatrix's axis puts each index where the whole matrix has it") {
    const uint32_t seed = std::random_device{}();
    INFO("seed " << seed);
    std::mt19937 rng(seed);
    for (const Axis& whole : axes(seed + 1, 400)) {
      if (whole.n == 0) continue;
      const int64_t offset = pick(rng, whole.n);
      const int64_t n = pick(rng, whole.n - offset + 1);
      const Axis sub = sub_axis(whole, offset, n);
      INFO("whole: " << describe(whole) << "; offset " << offset << ", n " << n);
      REQUIRE(valid(sub));
      const Walked w = walk(whole);
      for (int64_t s = 0; s < n; ++s) {
        const int p = w.owner[static_cast<size_t>(offset + s)];
        REQUIRE(owner(sub, s) == p);
        REQUIRE(count_below(whole, p, offset) + count_below(sub, p, s) == w.local[static_cast<size_t>(offset + s)]);
      }
    }
  }

  TEST_CASE("two axes have the same layout exactly when every index has the same owner and local position") {
    const uint32_t seed = std::random_device{}();
    INFO("seed " << seed);
    std::mt19937 rng(seed);
    const std::vector<Axis> pool = axes(seed + 2, 300);
    int same = 0;
    for (const Axis& x : pool) {
      for (int t = 0; t < 20; ++t) {
        Axis y = pool[static_cast<size_t>(pick(rng, static_cast<int64_t>(pool.size())))];
        // Often the same extent and processes, so that the layouts are close calls.
        if (pick(rng, 2)) y.n = x.n, y.procs = x.procs, y.src = x.src % y.procs;
        if (pick(rng, 3) == 0) y.first = x.first;
        bool equal = x.n == y.n && x.procs == y.procs;
        if (equal) {
          const Walked wx = walk(x), wy = walk(y);
          equal = wx.owner == wy.owner && wx.local == wy.local;
        }
        INFO("x: " << describe(x) << "; y: " << describe(y));
        REQUIRE(same_layout(x, y) == equal);
        same += equal;
      }
    }
    CHECK(same > 100);  // the comparison saw many equal pairs, not only different ones
  }

  TEST_CASE("descriptors of type 1 and 2 are read; others are not") {
    const std::array<int, 9> one = {1, 7, 100, 90, 8, 6, 1, 0, 52};
    const auto d1 = read_descriptor(one.data());
    REQUIRE(d1);
    CHECK((d1->context == 7 && d1->m == 100 && d1->n == 90 && d1->first_rows == 8 && d1->first_cols == 6));
    CHECK((d1->mb == 8 && d1->nb == 6 && d1->rsrc == 1 && d1->csrc == 0 && d1->lld == 52));
    const std::array<int, 11> two = {2, 7, 100, 90, 3, 5, 8, 6, 1, 2, 52};
    const auto d2 = read_descriptor(two.data());
    REQUIRE(d2);
    CHECK((d2->first_rows == 3 && d2->first_cols == 5 && d2->mb == 8 && d2->nb == 6 && d2->rsrc == 1 && d2->csrc == 2));
    const std::array<int, 11> other = {501, 7, 100, 90, 3, 5, 8, 6, 1, 2, 52};
    CHECK_FALSE(read_descriptor(other.data()));
  }

  TEST_CASE("the rule takes plain products whose operands line up, and says why it hands on the others") {
    // A 2 x 3 grid; A 40 x 30, B 30 x 50, C 40 x 50, blocks 4 x 3 (A's columns and B's rows alike or not).
    std::array<int, 9> a = {1, 0, 40, 30, 4, 3, 0, 0, 20};
    std::array<int, 9> b = {1, 0, 30, 50, 5, 3, 0, 0, 15};
    std::array<int, 9> c = {1, 0, 40, 50, 4, 3, 0, 0, 20};
    PgemmCall call{'N', 'n', 40, 50, 30, false, 1, 1, 1, 1, 1, 1, a.data(), b.data(), c.data()};
    auto reason = [&](const PgemmCall& x) {
      const auto plan = plan_gather(x, 2, 3);
      return plan.index() == 0 ? std::string() : std::get<std::string>(plan);
    };
    CHECK(reason(call).empty());
    const GatherPlan plan = std::get<GatherPlan>(plan_gather(call, 2, 3));
    CHECK((plan.m == 40 && plan.n == 50 && plan.k == 30 && plan.a.local_offset(1, 2) == 0));
    PgemmCall t = call;
    t.transa = 't';
    CHECK(reason(t) == "a transposed operand");
    PgemmCall z = call;
    z.alpha_zero = true;
    CHECK(reason(z) == "nothing to multiply");
    z = call, z.k = 0;
    CHECK(reason(z) == "nothing to multiply");
    PgemmCall out = call;
    out.ia = 2;  // rows 2 .. 41 of a 40-row A
    CHECK(reason(out) == "an argument ScaLAPACK refuses");
    std::array<int, 9> other_context = c;
    other_context[1] = 3;
    PgemmCall ctx = call;
    ctx.descc = other_context.data();
    CHECK(reason(ctx) == "operands on different contexts");
    std::array<int, 9> a_shifted = a;
    a_shifted[6] = 1;  // A's first row block on process row 1, C's on 0
    PgemmCall rows = call;
    rows.desca = a_shifted.data();
    CHECK(reason(rows) == "sub(A)'s rows distributed unlike sub(C)'s");
    std::array<int, 9> b_blocks = b;
    b_blocks[5] = 4;  // B's column blocks of 4, C's of 3
    PgemmCall cols = call;
    cols.descb = b_blocks.data();
    CHECK(reason(cols) == "sub(B)'s columns distributed unlike sub(C)'s");
    // Offsets that keep the layouts alike are taken: rows 5 .. 40 of A and C (offset 4: whole blocks), and the
    // submatrix starts where the whole matrix has its row 4 on each process.
    PgemmCall sub = call;
    sub.m = 36, sub.ia = 5, sub.ic = 5;
    REQUIRE(reason(sub).empty());
    const GatherPlan sp = std::get<GatherPlan>(plan_gather(sub, 2, 3));
    CHECK(sp.a.local_offset(0, 0) == 4);  // process row 0 holds rows 0-3, 8-11: the submatrix from its local 4 (row 8)
    CHECK(sp.a.local_offset(1, 0) == 0);  // process row 1 holds rows 4-7 first
    PgemmCall skew = call;
    skew.m = 36, skew.ia = 5, skew.ic = 3;  // A from row 4, C from row 2: different blocks on different rows
    CHECK(reason(skew) == "sub(A)'s rows distributed unlike sub(C)'s");
  }
}

}  // namespace
}  // namespace vkgemm::pblas
