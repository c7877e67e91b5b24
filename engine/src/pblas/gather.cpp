#include "pblas/gather.hpp"

#include <vector>

#include "pblas/messages.hpp"

namespace vkgemm::pblas {
namespace {

// One gather: the exchange (messages.hpp), then this process's own blocks copied into place.
template <class T, class Place>
Received gather(MPI_Comm comm, const std::vector<int>& peers, int me, const Axis& k_axis, const Piece<T>& own,
                const Place& place, bool direct) {
  const Received received = exchange<T>(comm, peers, me, k_axis, own, place, direct, [](int, const OwnedBlock&) {});
  for (const OwnedBlock& b : owned_blocks(k_axis, me)) copy(place.holder(b, own.base, own.ld), place.full(me, b));
  return received;
}

}  // namespace

template <class T>
Received gather_columns(const GridComm& grid, const GridShape& shape, const Axis& k_axis, int64_t rows, const T* local,
                    int64_t ld, T* full, bool direct) {
  if (rows == 0) return {};
  std::vector<int> peers;
  for (int c = 0; c < shape.cols; ++c) peers.push_back(grid.rank(shape.my_row, c, shape.cols));
  // Column blocks: a holder's block is `length` columns of `rows`, ld apart; in `full`, contiguous.
  struct {
    int64_t rows;
    T* dst;
    Region<const T> holder(const OwnedBlock& b, const T* base, int64_t ld) const {
      return {base + b.local * ld, b.length, rows, ld};
    }
    Region<T> full(int, const OwnedBlock& b) const { return {dst + b.global * rows, b.length, rows, rows}; }
  } place{rows, full};
  return gather<T>(grid.comm.get(), peers, shape.my_col, k_axis, Piece<T>{local, ld}, place, direct);
}

template <class T>
Received gather_rows(const GridComm& grid, const GridShape& shape, const Axis& k_axis, int64_t cols, const T* local,
                 int64_t ld, T* full, bool direct) {
  if (cols == 0) return {};
  std::vector<int> peers;
  for (int r = 0; r < shape.rows; ++r) peers.push_back(grid.rank(r, shape.my_col, shape.cols));
  // Row blocks: a holder's block is `cols` runs of `length` rows, ld apart; in `full`, k apart.
  struct {
    int64_t cols, k;
    T* dst;
    Region<const T> holder(const OwnedBlock& b, const T* base, int64_t ld) const {
      return {base + b.local, cols, b.length, ld};
    }
    Region<T> full(int, const OwnedBlock& b) const { return {dst + b.global, cols, b.length, k}; }
  } place{cols, k_axis.n, full};
  return gather<T>(grid.comm.get(), peers, shape.my_row, k_axis, Piece<T>{local, ld}, place, direct);
}

template Received gather_columns<float>(const GridComm&, const GridShape&, const Axis&, int64_t, const float*, int64_t,
                                    float*, bool);
template Received gather_columns<double>(const GridComm&, const GridShape&, const Axis&, int64_t, const double*, int64_t,
                                     double*, bool);
template Received gather_rows<float>(const GridComm&, const GridShape&, const Axis&, int64_t, const float*, int64_t,
                                 float*, bool);
template Received gather_rows<double>(const GridComm&, const GridShape&, const Axis&, int64_t, const double*, int64_t,
                                  double*, bool);

}  // namespace vkgemm::pblas
