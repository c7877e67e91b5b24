#include "pblas/gather.hpp"

#include "pblas/messages.hpp"

#include <vector>

namespace vkgemm::pblas {
namespace {

// One gather along an axis of the grid: peers[c] is the rank at coordinate c, `me` this process's coordinate.
// place.local(block) is a block's region in its holder's local piece, place.full(block) its region in `full`.
template <class T, class Place>
void gather(MPI_Comm comm, const std::vector<int>& peers, int me, const Axis& k_axis, Place place) {
  Messages<T> messages(comm);
  const std::vector<OwnedBlock> mine = owned_blocks(k_axis, me);
  for (int c = 0; c < k_axis.procs; ++c) {
    if (c == me) continue;
    for (const OwnedBlock& b : owned_blocks(k_axis, c)) messages.receive(place.full(b), peers[static_cast<size_t>(c)]);
    for (const OwnedBlock& b : mine) messages.send(place.local(b), peers[static_cast<size_t>(c)]);
  }
  for (const OwnedBlock& b : mine) copy(place.local(b), place.full(b));
  messages.wait();
}

}  // namespace

template <class T>
void gather_columns(const GridComm& grid, const GridShape& shape, const Axis& k_axis, int64_t rows, const T* local,
                    int64_t ld, T* full) {
  if (rows == 0) return;
  std::vector<int> peers;
  for (int c = 0; c < shape.cols; ++c) peers.push_back(grid.rank(shape.my_row, c, shape.cols));
  struct {
    int64_t rows, ld;
    const T* src;
    T* dst;
    Region<const T> local(const OwnedBlock& b) const { return {src + b.local * ld, b.length, rows, ld}; }
    Region<T> full(const OwnedBlock& b) const { return {dst + b.global * rows, b.length, rows, rows}; }
  } place{rows, ld, local, full};
  gather<T>(grid.comm.get(), peers, shape.my_col, k_axis, place);
}

template <class T>
void gather_rows(const GridComm& grid, const GridShape& shape, const Axis& k_axis, int64_t cols, const T* local,
                 int64_t ld, T* full) {
  if (cols == 0) return;
  std::vector<int> peers;
  for (int r = 0; r < shape.rows; ++r) peers.push_back(grid.rank(r, shape.my_col, shape.cols));
  const int64_t k = k_axis.n;
  struct {
    int64_t cols, ld, k;
    const T* src;
    T* dst;
    Region<const T> local(const OwnedBlock& b) const { return {src + b.local, cols, b.length, ld}; }
    Region<T> full(const OwnedBlock& b) const { return {dst + b.global, cols, b.length, k}; }
  } place{cols, ld, k, local, full};
  gather<T>(grid.comm.get(), peers, shape.my_row, k_axis, place);
}

template void gather_columns<float>(const GridComm&, const GridShape&, const Axis&, int64_t, const float*, int64_t,
                                    float*);
template void gather_columns<double>(const GridComm&, const GridShape&, const Axis&, int64_t, const double*, int64_t,
                                     double*);
template void gather_rows<float>(const GridComm&, const GridShape&, const Axis&, int64_t, const float*, int64_t,
                                 float*);
template void gather_rows<double>(const GridComm&, const GridShape&, const Axis&, int64_t, const double*, int64_t,
                                  double*);

}  // namespace vkgemm::pblas
