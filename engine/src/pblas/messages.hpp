// The point-to-point messages of the gathers (gather.cpp, streamed.cpp): a strided region of a matrix, sent or
// received as messages of at most kMessageBytes, and a process's own piece copied into place.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/copy_workers.hpp"
#include "pblas/grid.hpp"

namespace vkgemm::pblas {

inline constexpr int64_t kMessageBytes = int64_t(1) << 30;

template <class T>
MPI_Datatype element_type();
template <>
inline MPI_Datatype element_type<float>() { return MPI_FLOAT; }
template <>
inline MPI_Datatype element_type<double>() { return MPI_DOUBLE; }

// `runs` runs of `length` elements each, `stride` elements apart, from `at`.
template <class T>
struct Region {
  T* at = nullptr;
  int64_t runs = 0, length = 0, stride = 0;
};

// The nonblocking messages of one gather and the datatypes they use, completed together (or one by one).
template <class T>
class Messages {
 public:
  explicit Messages(MPI_Comm comm) : comm_(comm) {}
  void send(const Region<const T>& r, int to) {
    post(const_cast<T*>(r.at), r.runs, r.length, r.stride, to, true);  // MPI_Isend takes const void*
  }
  void receive(const Region<T>& r, int from) { post(r.at, r.runs, r.length, r.stride, from, false); }
  // Each message carries this many whole runs (at least one) but the last of a region, which carries the rest.
  static int64_t runs_per_message(int64_t length) {
    return std::max<int64_t>(1, kMessageBytes / (length * int64_t(sizeof(T))));
  }
  // How many requests were posted so far (a request's index is its order).
  size_t posted() const noexcept { return requests_.size(); }
  // The index of one more completed request, or -1 when every one has completed.
  int wait_any() {
    int index = MPI_UNDEFINED;
    MPI_Waitany(static_cast<int>(requests_.size()), requests_.data(), &index, MPI_STATUS_IGNORE);
    return index == MPI_UNDEFINED ? -1 : index;
  }
  void wait() {
    MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
    requests_.clear();
    types_.clear();
  }

 private:
  static constexpr int kTag = 0x766b;  // the communicator is private: any fixed tag
  void post(T* at, int64_t runs, int64_t length, int64_t stride, int peer, bool out) {
    const int64_t per = runs_per_message(length);  // both sides cut alike
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
inline constexpr uint64_t kThreadedBytes = uint64_t(64) << 20;

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

}  // namespace vkgemm::pblas
