#include "pblas/gather.hpp"

#include "core/copy_workers.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

namespace vkgemm::pblas {
namespace {

template <class T>
MPI_Datatype element_type();
template <>
MPI_Datatype element_type<float>() { return MPI_FLOAT; }
template <>
MPI_Datatype element_type<double>() { return MPI_DOUBLE; }

// `runs` runs of `length` elements each, `stride` elements apart, from `at`.
template <class T>
struct Region {
  T* at = nullptr;
  int64_t runs = 0, length = 0, stride = 0;
};

// The nonblocking messages of one gather and the datatypes they use, completed together.
template <class T>
class Messages {
 public:
  explicit Messages(MPI_Comm comm) : comm_(comm) {}
  void send(const Region<const T>& r, int to) {
    post(const_cast<T*>(r.at), r.runs, r.length, r.stride, to, true);  // MPI_Isend takes const void*
  }
  void receive(const Region<T>& r, int from) { post(r.at, r.runs, r.length, r.stride, from, false); }
  void wait() {
    MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
    requests_.clear();
    types_.clear();
  }

 private:
  static constexpr int kTag = 0x766b;  // the communicator is private: any fixed tag
  void post(T* at, int64_t runs, int64_t length, int64_t stride, int peer, bool out) {
    // As many whole runs a message as kMessageBytes holds (at least one); both sides cut alike.
    const int64_t per = std::max<int64_t>(1, kMessageBytes / (length * int64_t(sizeof(T))));
    for (int64_t first = 0; first < runs; first += per) {
      const int64_t count = std::min(per, runs - first);
      T* start = at + first * stride;
      MPI_Request request;
      if (count == 1 || stride == length) {
        const int elements = static_cast<int>(count * length);
        if (out) MPI_Isend(start, elements, element_type<T>(), peer, kTag, comm_, &request);
        else MPI_Irecv(start, elements, element_type<T>(), peer, kTag, comm_, &request);
      } else {
        MPI_Datatype vector;
        MPI_Type_vector(static_cast<int>(count), static_cast<int>(length), static_cast<int>(stride), element_type<T>(),
                        &vector);
        MPI_Type_commit(&vector);
        types_.emplace_back(vector);
        if (out) MPI_Isend(start, 1, vector, peer, kTag, comm_, &request);
        else MPI_Irecv(start, 1, vector, peer, kTag, comm_, &request);
      }
      requests_.push_back(request);
    }
  }
  MPI_Comm comm_;
  std::vector<MPI_Request> requests_;
  std::vector<Datatype> types_;
};

// This process's own piece, copied into place: a contiguous region of at least kThreadedBytes by the copy
// threads (one core's memcpy moves a third of what the host's memory can: a rank's own columns of A are
// gigabytes at the sizes this library is for), anything else run by run.
constexpr uint64_t kThreadedBytes = uint64_t(64) << 20;

template <class T>
void copy(const Region<const T>& from, const Region<T>& to) {
  const uint64_t run_bytes = static_cast<uint64_t>(from.length) * sizeof(T);
  if ((from.runs == 1 || (from.stride == from.length && to.stride == to.length)) &&
      run_bytes * static_cast<uint64_t>(from.runs) >= kThreadedBytes) {
    static detail::CopyWorkers workers(detail::CopyWorkers::default_threads());
    workers.copy(to.at, from.at, run_bytes * static_cast<uint64_t>(from.runs));
    return;
  }
  for (int64_t r = 0; r < from.runs; ++r) std::memcpy(to.at + r * to.stride, from.at + r * from.stride, run_bytes);
}

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
