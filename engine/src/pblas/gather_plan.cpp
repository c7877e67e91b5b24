#include "pblas/gather_plan.hpp"

#include <algorithm>
#include <cctype>

namespace vkgemm::pblas {
namespace {

constexpr int kBlockCyclic = 1;     // BLOCK_CYCLIC_2D: 9 integers
constexpr int kBlockCyclicInb = 2;  // BLOCK_CYCLIC_2D_INB: 11 integers, first blocks of their own size

char upper(char c) { return static_cast<char>(std::toupper(static_cast<unsigned char>(c))); }

// The operand's axes, or nothing where the descriptor or the submatrix (rows x cols from row0, col0) is not
// one PBLAS would accept.
std::optional<Operand> operand(const Descriptor& d, int64_t row0, int64_t col0, int64_t rows, int64_t cols,
                               int grid_rows, int grid_cols) {
  Operand op;
  op.whole_rows = {d.m, d.first_rows, d.mb, d.rsrc, grid_rows};
  op.whole_cols = {d.n, d.first_cols, d.nb, d.csrc, grid_cols};
  if (!valid(op.whole_rows) || !valid(op.whole_cols)) return std::nullopt;
  if (row0 < 0 || col0 < 0 || row0 + rows > d.m || col0 + cols > d.n) return std::nullopt;
  op.row0 = row0, op.col0 = col0, op.lld = d.lld;
  op.rows = sub_axis(op.whole_rows, row0, rows);
  op.cols = sub_axis(op.whole_cols, col0, cols);
  return op;
}

}  // namespace

std::optional<Descriptor> read_descriptor(const int* desc) {
  Descriptor d;
  d.type = desc[0];
  if (d.type == kBlockCyclic) {
    d.context = desc[1], d.m = desc[2], d.n = desc[3];
    d.mb = desc[4], d.nb = desc[5], d.first_rows = d.mb, d.first_cols = d.nb;
    d.rsrc = desc[6], d.csrc = desc[7], d.lld = desc[8];
    return d;
  }
  if (d.type == kBlockCyclicInb) {
    d.context = desc[1], d.m = desc[2], d.n = desc[3];
    d.first_rows = desc[4], d.first_cols = desc[5], d.mb = desc[6], d.nb = desc[7];
    d.rsrc = desc[8], d.csrc = desc[9], d.lld = desc[10];
    return d;
  }
  return std::nullopt;
}

int64_t Operand::local_offset(int r, int c) const {
  return count_below(whole_rows, r, row0) + count_below(whole_cols, c, col0) * lld;
}

std::variant<GatherPlan, std::string> plan_gather(const PgemmCall& call, int rows, int cols) {
  if (upper(call.transa) != 'N' || upper(call.transb) != 'N') return std::string("a transposed operand");
  if (call.m <= 0 || call.n <= 0 || call.k <= 0 || call.alpha_zero) return std::string("nothing to multiply");
  const auto da = read_descriptor(call.desca), db = read_descriptor(call.descb), dc = read_descriptor(call.descc);
  if (!da || !db || !dc) return std::string("a descriptor of a type other than 1 or 2");
  if (da->context != dc->context || db->context != dc->context) return std::string("operands on different contexts");
  const auto a = operand(*da, call.ia - 1, call.ja - 1, call.m, call.k, rows, cols);
  const auto b = operand(*db, call.ib - 1, call.jb - 1, call.k, call.n, rows, cols);
  const auto c = operand(*dc, call.ic - 1, call.jc - 1, call.m, call.n, rows, cols);
  if (!a || !b || !c) return std::string("an argument ScaLAPACK refuses");
  if (!same_layout(a->rows, c->rows)) return std::string("sub(A)'s rows distributed unlike sub(C)'s");
  if (!same_layout(b->cols, c->cols)) return std::string("sub(B)'s columns distributed unlike sub(C)'s");
  return GatherPlan{*a, *b, *c, call.m, call.n, call.k, dc->context};
}

}  // namespace vkgemm::pblas
