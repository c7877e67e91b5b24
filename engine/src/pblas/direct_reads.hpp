// A process's pieces read straight from the memory of the process that holds them, where both run on one
// machine: Linux's cross-memory attach (process_vm_readv), spread over threads. One copy, at the host
// memory's speed, where MPI's shared-memory transport copies each message twice on one core (Open MPI's
// vader without a single-copy mechanism: about 1 GB/s each way between two ranks on the H200 host; 30 GB/s
// read this way, 16 threads).
//
// Each pair of processes agrees first (agree_routes): each sends the other where its piece lies (process id,
// machine, address, leading dimension); the reader tries one element and tells the holder whether it will
// read (then the holder sends nothing) or needs messages. A holder whose piece others read waits for their
// word that they are done before its P?GEMM returns (the program may then change the piece).
// Where the kernel's Yama module restricts such reads to a process's descendants (ptrace_scope 1), every
// process of the grid allows them from any of its user's processes (PR_SET_PTRACER), as Open MPI does for
// its own single copy; VKGEMM_PBLAS_TRANSPORT=mpi sends every piece as messages instead.
#pragma once

#include "pblas/mpi.hpp"

#include <cstdint>
#include <vector>

namespace vkgemm::pblas {

// Where a process's piece lies, as it tells the others on its axis.
struct PieceAddress {
  int32_t pid = 0;
  int32_t direct = 0;              // it allows direct reads (VKGEMM_PBLAS_TRANSPORT, the kernel)
  uint64_t machine[2] = {0, 0};    // its machine and process namespace: equal where a direct read can work
  uint64_t base = 0;               // the piece's first element
  int64_t ld = 0;                  // its leading dimension
};

// Per peer coordinate: whether this process reads that peer's piece directly, and whether the peer reads this
// process's piece directly (neither for this process itself). Collective over the peers.
struct Routes {
  std::vector<PieceAddress> peers;
  std::vector<char> i_read, they_read;
};
Routes agree_routes(MPI_Comm comm, const std::vector<int>& peers, int me, const void* base, int64_t ld,
                    const std::vector<char>& peer_has_piece, bool allowed);

// Reads `runs` runs of `bytes` bytes, `remote_stride` and `local_stride` bytes apart, from process `pid` into
// this process, over threads where there is much; false where a read fails (`local` then holds some of it).
bool read_direct(int pid, uint64_t remote, uint64_t remote_stride, void* local, uint64_t local_stride, int64_t runs,
                 uint64_t bytes);

}  // namespace vkgemm::pblas
