// How the gathers (gather.cpp, streamed.cpp) move pieces between the processes of a grid's row or column:
// read directly where both run on one machine (direct_reads.hpp), else as point-to-point messages of at most
// kMessageBytes (a strided region a message, int counts); and a process's own piece copied into place.
#pragma once

#include "pblas/mpi.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/copy_workers.hpp"
#include "pblas/block_cyclic.hpp"
#include "pblas/direct_reads.hpp"
#include "pblas/gather.hpp"
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

// A process's own piece of the matrix being gathered: where it starts and its leading dimension.
template <class T>
struct Piece {
  const T* base = nullptr;
  int64_t ld = 0;
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


// After the direct reads: each reader's word to each holder (done, or failed: then the holder sends its
// blocks again, as messages, and the reader receives them all).
template <class T, class Place>
void settle_direct_reads(MPI_Comm comm, const std::vector<int>& peers, int me, const Routes& routes,
                         const std::vector<std::vector<OwnedBlock>>& blocks, std::vector<char>& failed,
                         const Piece<T>& own, const Place& place) {
  constexpr int kTagStatus = 0x766e;
  const auto at = [](int c) { return static_cast<size_t>(c); };
  const int n = static_cast<int>(peers.size());
  std::vector<char> status(at(n), 0);
  std::vector<MPI_Request> words;
  for (int c = 0; c < n; ++c) {
    if (c == me) continue;
    if (routes.i_read[at(c)]) {
      words.emplace_back();
      MPI_Isend(&failed[at(c)], 1, MPI_CHAR, peers[at(c)], kTagStatus, comm, &words.back());
    }
    if (routes.they_read[at(c)]) {
      words.emplace_back();
      MPI_Irecv(&status[at(c)], 1, MPI_CHAR, peers[at(c)], kTagStatus, comm, &words.back());
    }
  }
  MPI_Waitall(static_cast<int>(words.size()), words.data(), MPI_STATUSES_IGNORE);
  Messages<T> again(comm);
  for (int c = 0; c < n; ++c) {
    if (c == me) continue;
    if (failed[at(c)])
      for (const OwnedBlock& b : blocks[at(c)]) again.receive(place.full(c, b), peers[at(c)]);
    if (status[at(c)])
      for (const OwnedBlock& b : blocks[at(me)]) again.send(place.holder(b, own.base, own.ld), peers[at(c)]);
  }
  again.wait();
}

// One gather's exchange along an axis of the grid: peers[c] is the rank at coordinate c, `me` this process's.
// Every other process's blocks land where place.full(c, block) says, read directly or received; this
// process's blocks (place.holder(block, own.base, own.ld): a block's region in a holder's piece) go to every
// other process that does not read them. arrived(c, block) is called as each of peer c's blocks lands, in their
// order. A direct read that fails is made good by messages: the reader tells the holder, which sends its
// blocks again. Returns once every peer that reads this process's piece has said it is done: how many peers'
// pieces came each way.
template <class T, class Place, class Arrived>
Received exchange(MPI_Comm comm, const std::vector<int>& peers, int me, const Axis& k_axis, const Piece<T>& own,
                  const Place& place, bool direct, Arrived&& arrived) {
  const int n = k_axis.procs;
  const auto at = [](int c) { return static_cast<size_t>(c); };
  std::vector<std::vector<OwnedBlock>> blocks(at(n));
  std::vector<char> has(at(n));
  for (int c = 0; c < n; ++c) blocks[at(c)] = owned_blocks(k_axis, c), has[at(c)] = !blocks[at(c)].empty();
  const Routes routes = agree_routes(comm, peers, me, own.base, own.ld, has, direct);
  Messages<T> messages(comm);
  struct Pending {
    int c;
    size_t block;
  };
  std::vector<Pending> pending;
  std::vector<std::vector<int64_t>> remaining(at(n));
  for (int c = 0; c < n; ++c) {
    if (c == me || routes.i_read[at(c)]) continue;
    remaining[at(c)].assign(blocks[at(c)].size(), 0);
    for (size_t i = 0; i < blocks[at(c)].size(); ++i) {
      const size_t before = messages.posted();
      messages.receive(place.full(c, blocks[at(c)][i]), peers[at(c)]);
      remaining[at(c)][i] = int64_t(messages.posted() - before);
      for (size_t j = before; j < messages.posted(); ++j) pending.push_back({c, i});
    }
  }
  const size_t receives = messages.posted();
  for (int c = 0; c < n; ++c)
    if (c != me && !routes.they_read[at(c)])
      for (const OwnedBlock& b : blocks[at(me)]) messages.send(place.holder(b, own.base, own.ld), peers[at(c)]);
  // The direct reads, peer after peer from the next coordinate on, each block as a whole.
  std::vector<char> failed(at(n), 0);
  for (int step = 1; step < n; ++step) {
    const int c = (me + step) % n;
    if (!routes.i_read[at(c)]) continue;
    const PieceAddress& p = routes.peers[at(c)];
    for (const OwnedBlock& b : blocks[at(c)]) {
      const Region<const T> from = place.holder(b, reinterpret_cast<const T*>(p.base), p.ld);
      const Region<T> to = place.full(c, b);
      if (!read_direct(p.pid, reinterpret_cast<uint64_t>(from.at), uint64_t(from.stride) * sizeof(T), to.at,
                       uint64_t(to.stride) * sizeof(T), from.runs, uint64_t(from.length) * sizeof(T))) {
        failed[at(c)] = 1;
        break;
      }
      arrived(c, b);
    }
  }
  // The messages, each peer's blocks announced in order as they complete.
  std::vector<size_t> next(at(n), 0);
  for (int i; (i = messages.wait_any()) >= 0;) {
    if (static_cast<size_t>(i) >= receives) continue;
    const Pending& done = pending[static_cast<size_t>(i)];
    --remaining[at(done.c)][done.block];
    for (size_t& k = next[at(done.c)]; k < blocks[at(done.c)].size() && remaining[at(done.c)][k] == 0; ++k)
      arrived(done.c, blocks[at(done.c)][k]);
  }
  settle_direct_reads<T>(comm, peers, me, routes, blocks, failed, own, place);
  Received received;
  for (int c = 0; c < n; ++c) {
    if (failed[at(c)])
      for (const OwnedBlock& b : blocks[at(c)]) arrived(c, b);
    if (c != me && has[at(c)]) ++(routes.i_read[at(c)] && !failed[at(c)] ? received.direct : received.messages);
  }
  return received;
}

}  // namespace vkgemm::pblas
