#include "pblas/direct_reads.hpp"

#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <string>
#include <thread>

namespace vkgemm::pblas {
namespace {

constexpr int kTagAddress = 0x766c, kTagVerdict = 0x766d;
constexpr uint64_t kSegment = uint64_t(64) << 20;  // bytes a read call moves at most
constexpr uint64_t kThreaded = uint64_t(64) << 20; // below this in all, one thread reads

// Whether this process lets its user's other processes read it: where Yama restricts reads to descendants,
// it opts in once; where Yama forbids them (ptrace_scope 2 or 3), not.
bool reads_allowed() {
  static const bool allowed = [] {
    std::ifstream yama("/proc/sys/kernel/yama/ptrace_scope");
    int scope = 0;
    if (!(yama >> scope)) return true;  // no Yama: the same user's processes may read each other
    if (scope == 1) return prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0) == 0;
    return scope == 0;
  }();
  return allowed;
}

// The machine (its boot) and the process-id namespace: two processes can address each other by pid only where
// both are equal.
void machine_key(uint64_t key[2]) {
  std::ifstream boot("/proc/sys/kernel/random/boot_id");
  std::string id;
  key[0] = key[1] = 0;
  if (!(boot >> id)) return;
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (char c : id) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  struct stat ns{};
  if (stat("/proc/self/ns/pid", &ns) != 0) return;
  key[0] = h, key[1] = uint64_t(ns.st_ino) ^ (uint64_t(ns.st_dev) << 32);
}

bool read_segment(int pid, uint64_t remote, char* local, uint64_t bytes) {
  while (bytes > 0) {
    iovec to{local, bytes}, from{reinterpret_cast<void*>(remote), bytes};
    const ssize_t got = process_vm_readv(pid, &to, 1, &from, 1, 0);
    if (got <= 0) return false;
    remote += uint64_t(got), local += got, bytes -= uint64_t(got);
  }
  return true;
}

}  // namespace

Routes agree_routes(MPI_Comm comm, const std::vector<int>& peers, int me, const void* base, int64_t ld,
                    const std::vector<char>& peer_has_piece, bool allowed) {
  const size_t n = peers.size();
  Routes r;
  r.peers.assign(n, {});
  r.i_read.assign(n, 0);
  r.they_read.assign(n, 0);
  PieceAddress mine;
  mine.pid = static_cast<int32_t>(getpid());
  mine.direct = allowed && reads_allowed();
  machine_key(mine.machine);
  mine.base = reinterpret_cast<uint64_t>(base), mine.ld = ld;
  std::vector<MPI_Request> requests;
  for (size_t c = 0; c < n; ++c) {
    if (static_cast<int>(c) == me) continue;
    requests.emplace_back();
    MPI_Irecv(&r.peers[c], sizeof(PieceAddress), MPI_BYTE, peers[c], kTagAddress, comm, &requests.back());
    requests.emplace_back();
    MPI_Isend(&mine, sizeof(PieceAddress), MPI_BYTE, peers[c], kTagAddress, comm, &requests.back());
  }
  MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
  requests.clear();
  for (size_t c = 0; c < n; ++c) {
    const PieceAddress& p = r.peers[c];
    if (static_cast<int>(c) == me || !peer_has_piece[c] || !mine.direct || !p.direct || !mine.machine[0] ||
        p.machine[0] != mine.machine[0] || p.machine[1] != mine.machine[1])
      continue;
    char probe = 0;  // one byte of the piece: the kernel lets this process read that one
    r.i_read[c] = read_segment(p.pid, p.base, &probe, 1);
  }
  for (size_t c = 0; c < n; ++c) {
    if (static_cast<int>(c) == me) continue;
    requests.emplace_back();
    MPI_Irecv(&r.they_read[c], 1, MPI_CHAR, peers[c], kTagVerdict, comm, &requests.back());
    requests.emplace_back();
    MPI_Isend(&r.i_read[c], 1, MPI_CHAR, peers[c], kTagVerdict, comm, &requests.back());
  }
  MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
  return r;
}

bool read_direct(int pid, uint64_t remote, uint64_t remote_stride, void* local, uint64_t local_stride, int64_t runs,
                 uint64_t bytes) {
  struct Segment {
    uint64_t remote;
    char* local;
    uint64_t bytes;
  };
  std::vector<Segment> segments;
  for (int64_t r = 0; r < runs; ++r)
    for (uint64_t at = 0; at < bytes; at += kSegment)
      segments.push_back({remote + uint64_t(r) * remote_stride + at,
                          static_cast<char*>(local) + uint64_t(r) * local_stride + at, std::min(kSegment, bytes - at)});
  const uint64_t total = bytes * uint64_t(runs);
  const unsigned threads = total < kThreaded ? 1u : std::clamp(std::thread::hardware_concurrency(), 1u, 16u);
  std::atomic<bool> ok{true};
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; ok && (i = next.fetch_add(1)) < segments.size();)
      if (!read_segment(pid, segments[i].remote, segments[i].local, segments[i].bytes)) ok = false;
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  return ok;
}

}  // namespace vkgemm::pblas
