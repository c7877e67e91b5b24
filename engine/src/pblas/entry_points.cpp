// vkgemm's PDGEMM and PSGEMM for ScaLAPACK programs (docs/distributed.md): preloaded before ScaLAPACK, these
// pdgemm_ and psgemm_ take the calls gather_plan.hpp's rule takes (each process gathers its rows of op(A) and
// columns of op(B) whole, then one local GEMM through vkgemm's drop-in BLAS, or streams them: streamed.hpp)
// and hand every other call to ScaLAPACK's own, the next definition in the program (RTLD_NEXT).
//
// Its settings: settings.hpp. VKGEMM_BLAS_VERBOSE=1 prints at exit how many calls were taken and why the others
// were not, 2 also a line for each call taken (its parts' seconds).
#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "pblas/gather.hpp"
#include "pblas/gather_plan.hpp"
#include "pblas/grid.hpp"
#include "pblas/mpi.hpp"
#include "pblas/settings.hpp"
#include "pblas/stopwatch.hpp"
#include "pblas/streamed.hpp"

#define VKGEMM_PBLAS_EXPORT extern "C" __attribute__((visibility("default")))

namespace vkgemm::pblas {
namespace {

template <class T>
using Pgemm = void (*)(const char*, const char*, const int*, const int*, const int*, const T*, const T*, const int*,
                       const int*, const int*, const T*, const int*, const int*, const int*, const T*, T*, const int*,
                       const int*, const int*);

// What the library did, printed at exit with VKGEMM_BLAS_VERBOSE=1.
class Summary {
 public:
  void streamed(const StreamOutcome& o) {
    std::lock_guard lock(mutex_);
    ++streamed_, products_ += uint64_t(o.products), checked_ += o.checked, kept_ += o.buffers_kept;
    add(o.received);
    if (!o.streamed && !o.why.empty()) {
      ++failed_;
      if (failure_.empty()) failure_ = o.why;
      std::fprintf(stderr, "vkgemm-pblas: a streamed product fell back to products block by block: %s\n", o.why.c_str());
    }
  }
  void assembled(const Received& a, const Received& b) {
    std::lock_guard lock(mutex_);
    ++assembled_;
    add(a), add(b);
  }
  void forwarded(const std::string& why) {
    std::lock_guard lock(mutex_);
    ++forwarded_[why];
  }
  ~Summary() {
    if (settings().verbose < 1) return;
    uint64_t total = 0;
    std::string reasons;
    for (const auto& [why, count] : forwarded_) {
      total += count;
      reasons += (reasons.empty() ? ": " : ", ") + std::to_string(count) + " " + why;
    }
    const std::string checked = settings().check ? "; " + std::to_string(checked_) + " streamed results checked on "
                                                   "the host" : "";
    const std::string failed = failed_ ? "; " + std::to_string(failed_) + " streamed calls fell back to products block "
                                             "by block (the first: " + failure_ + ")" : "";
    const std::string pieces = "; peers' pieces " + std::to_string(direct_) + " read directly, " +
                               std::to_string(messages_) + " as messages";
    const std::string kept = streamed_ ? "; " + std::to_string(kept_) + " streamed calls on the device buffers of "
                                         "the call before" : "";
    std::fprintf(stderr,
                 "vkgemm-pblas: %llu P?GEMM calls taken (%llu streamed in %llu device products, %llu assembled), "
                 "%llu forwarded to ScaLAPACK's%s%s%s%s%s\n",
                 static_cast<unsigned long long>(streamed_ + assembled_), static_cast<unsigned long long>(streamed_),
                 static_cast<unsigned long long>(products_), static_cast<unsigned long long>(assembled_),
                 static_cast<unsigned long long>(total), reasons.c_str(), pieces.c_str(), kept.c_str(), checked.c_str(),
                 failed.c_str());
  }

 private:
  std::mutex mutex_;
  void add(const Received& r) { direct_ += uint64_t(r.direct), messages_ += uint64_t(r.messages); }
  uint64_t streamed_ = 0, products_ = 0, assembled_ = 0, failed_ = 0, checked_ = 0, direct_ = 0, messages_ = 0;
  uint64_t kept_ = 0;
  std::string failure_;
  std::map<std::string, uint64_t> forwarded_;
};
Summary summary;

// A symbol of vkgemm's drop-in BLAS (this library's dependency, so loaded), or null.
void* drop_in_symbol(const char* name) {
  void* blas = dlopen("libvkgemm_blas.so.0", RTLD_NOW | RTLD_NOLOAD);
  void* f = blas ? dlsym(blas, name) : nullptr;
  if (blas) dlclose(blas);
  return f;
}

// The local GEMM: the drop-in BLAS's, else the program's.
template <class T>
Gemm<T> local_gemm(const char* name) {
  void* f = drop_in_symbol(name);
  return reinterpret_cast<Gemm<T>>(f ? f : dlsym(RTLD_DEFAULT, name));
}

// The drop-in BLAS's engine (vkgemm_blas_engine: one device a process, created at its first use) for a local
// product of `work` = m·n·k, or null where the drop-in would keep that product on the CPU (its threshold) or
// has no device.
vkgemm_engine* drop_in_engine(double work) {
  const auto get = reinterpret_cast<vkgemm_engine* (*)(double)>(drop_in_symbol("vkgemm_blas_engine"));
  return get ? get(work) : nullptr;
}

// This node's available memory over the grid's processes on it; 0 where it cannot be read (no limit).
uint64_t node_share(MPI_Comm comm) {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  uint64_t kib = 0;
  while (meminfo >> key >> kib)
    if (key == "MemAvailable:") break;
  if (key != "MemAvailable:") return 0;
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  const Communicator owned(node);
  int here = 1;
  MPI_Comm_size(node, &here);
  return kib * 1024 / static_cast<uint64_t>(here);
}

enum Refusal : int { kNone = 0, kGrid, kLeadingDimension, kMemory, kAllocation };
const char* refusal_name(int code) {
  switch (code) {
    case kGrid: return "a grid whose processes could not be placed";
    case kLeadingDimension: return "a local leading dimension ScaLAPACK refuses";
    case kMemory: return "gathered panels past a process's share of its node's available memory";
    default: return "gathered panels that could not be allocated";
  }
}

template <class T>
std::unique_ptr<T[]> allocate(int64_t elements) {
  return std::unique_ptr<T[]>(elements > 0 ? new (std::nothrow) T[static_cast<size_t>(elements)] : nullptr);
}

template <class T>
struct Local;

// VKGEMM_BLAS_VERBOSE=2's line for a call taken.
template <class T>
void report(const GatherPlan& plan, const Local<T>& x, int64_t m_local, int64_t n_local, const std::string& how,
            double seconds) {
  std::fprintf(stderr, "vkgemm-pblas: %s %lld x %lld x %lld on %d x %d, here %lld x %lld: %s, %.3f s\n",
               x.gemm_name[0] == 'd' ? "pdgemm_" : "psgemm_", static_cast<long long>(plan.m),
               static_cast<long long>(plan.n), static_cast<long long>(plan.k), x.g.rows, x.g.cols,
               static_cast<long long>(m_local), static_cast<long long>(n_local), how.c_str(), seconds);
}

// What one process needs besides the plan: its place, the operands, the scalars.
template <class T>
struct Local {
  const GridShape& g;
  const char* gemm_name;
  const T *alpha, *a, *b, *beta;
  T* c;
};

// The host memory a process takes, and its refusal where that is not there; collective over the grid.
template <class T>
struct Workspace {
  std::vector<std::unique_ptr<T[]>> pieces;  // streamed: the other processes' pieces of A
  std::unique_ptr<T[]> a_full, b_full;       // assembled: A's rows and B's columns whole
};

// The call on the plan: streamed where this process can (streamed.hpp), else its panels gathered whole and
// one local GEMM; or (before any of it, on every process alike) why not. Collective over the grid.
template <class T>
std::string run(const GatherPlan& plan, const Local<T>& x) {
  const GridShape& g = x.g;
  const GridComm grid = grid_comm(plan.context, g);
  const int r = g.my_row, q = g.my_col;
  const int64_t m_local = plan.c.local_rows(r), n_local = plan.c.local_cols(q), k = plan.k;
  const bool gather_a = g.cols > 1, gather_b = g.rows > 1;
  const StreamCall<T> call{plan.a.cols, m_local, n_local, x.a + plan.a.local_offset(r, q),
                           x.b + plan.b.local_offset(r, q), plan.b.lld, x.c + plan.c.local_offset(r, q), *x.alpha,
                           *x.beta};
  vkgemm_engine* engine =
      gather_a && !gather_b ? drop_in_engine(double(m_local) * double(n_local) * double(k)) : nullptr;
  const bool stream = engine && can_stream(call, g, plan.a.lld, plan.c.lld, engine, settings());
  const int64_t a_elements = gather_a ? m_local * (stream ? k - local_extent(plan.a.cols, q) : k) : 0;
  const int64_t b_elements = gather_b ? k * n_local : 0;
  const uint64_t share = node_share(grid.comm.get());  // collective: before any process may refuse
  int refusal = kNone;
  if (!grid.complete()) refusal = kGrid;
  for (const Operand* op : {&plan.a, &plan.b, &plan.c})
    if (op->lld < std::max<int64_t>(1, local_extent(op->whole_rows, r))) refusal = std::max<int>(refusal, kLeadingDimension);
  if (share && uint64_t(a_elements + b_elements) * sizeof(T) > share / 10 * 8) refusal = std::max<int>(refusal, kMemory);
  Workspace<T> w;
  if (refusal == kNone) {
    if (stream) w.pieces = allocate_pieces(call, g);
    else w.a_full = allocate<T>(a_elements), w.b_full = allocate<T>(b_elements);
    if (stream ? w.pieces.empty() : (a_elements && !w.a_full) || (b_elements && !w.b_full)) refusal = kAllocation;
  }
  MPI_Allreduce(MPI_IN_PLACE, &refusal, 1, MPI_INT, MPI_MAX, grid.comm.get());
  if (refusal != kNone) return refusal_name(refusal);
  Stopwatch clock;
  const auto gemm = local_gemm<T>(x.gemm_name);
  if (stream) {
    const StreamOutcome outcome = stream_product(call, grid, g, engine, settings(), gemm, w.pieces);
    summary.streamed(outcome);
    if (settings().verbose >= 2) {
      char how[300];
      std::snprintf(how, sizeof how, "streamed in %d products (buffers %.3f s%s, writes %.3f, products %.3f, "
                    "writes beside them %.3f, not hidden at most %.3f in %d, waits for A %.3f, C's read %.3f)",
                    outcome.products, outcome.buffers_s, outcome.buffers_kept ? " (kept)" : "", outcome.write_s,
                    outcome.multiply_s, outcome.beside_s, outcome.not_hidden_s, outcome.not_hidden, outcome.wait_s,
                    outcome.read_s);
      report(plan, x, m_local, n_local, how, clock.lap());
    }
    return {};
  }
  const bool direct = settings().direct;
  Received from_a, from_b;
  if (gather_a) from_a = gather_columns(grid, g, plan.a.cols, m_local, call.a, plan.a.lld, w.a_full.get(), direct);
  if (gather_b) from_b = gather_rows(grid, g, plan.b.rows, n_local, call.b, plan.b.lld, w.b_full.get(), direct);
  const double gathered_s = clock.lap();
  if (m_local > 0 && n_local > 0) {
    const int mi = static_cast<int>(m_local), ni = static_cast<int>(n_local), ki = static_cast<int>(k);
    const int lda = static_cast<int>(gather_a ? m_local : plan.a.lld);
    const int ldb = static_cast<int>(gather_b ? k : plan.b.lld), ldc = static_cast<int>(plan.c.lld);
    gemm("N", "N", &mi, &ni, &ki, x.alpha, gather_a ? w.a_full.get() : call.a, &lda, gather_b ? w.b_full.get() : call.b,
         &ldb, x.beta, call.c, &ldc, 1, 1);
  }
  summary.assembled(from_a, from_b);
  if (settings().verbose >= 2) {
    char gathered[64];
    std::snprintf(gathered, sizeof gathered, "assembled in %.3f s, then one local GEMM", gathered_s);
    report(plan, x, m_local, n_local, gathered, clock.lap());
  }
  return {};
}

template <class T>
void pgemm(const char* name, const char* gemm_name, const char* ta, const char* tb, const int* m, const int* n,
           const int* k, const T* alpha, const T* a, const int* ia, const int* ja, const int* desca, const T* b,
           const int* ib, const int* jb, const int* descb, const T* beta, T* c, const int* ic, const int* jc,
           const int* descc) {
  std::string why = "VKGEMM_PBLAS=off";
  if (!mpi_present()) why = "no MPI in the program";
  else if (!settings().off) {
    // The context is read from C's descriptor only where it is one (ScaLAPACK reports any other).
    std::optional<GridShape> g;
    if (read_descriptor(descc)) g = grid_shape(descc[1], why);
    else why = "a descriptor of a type other than 1 or 2";
    if (g) {
      const PgemmCall call{*ta, *tb, *m, *n, *k, *alpha == T(0), *ia, *ja, *ib, *jb, *ic, *jc, desca, descb, descc};
      auto plan = plan_gather(call, g->rows, g->cols);
      why = plan.index() == 0 ? run<T>(std::get<GatherPlan>(plan), Local<T>{*g, gemm_name, alpha, a, b, beta, c})
                              : std::get<std::string>(plan);
      if (why.empty()) return;
    }
  }
  summary.forwarded(why);
  const auto scalapack = reinterpret_cast<Pgemm<T>>(dlsym(RTLD_NEXT, name));
  if (!scalapack) {
    std::fprintf(stderr, "vkgemm-pblas: %s: no ScaLAPACK %s after this library to take the call (%s)\n", name, name,
                 why.c_str());
    std::abort();
  }
  scalapack(ta, tb, m, n, k, alpha, a, ia, ja, desca, b, ib, jb, descb, beta, c, ic, jc, descc);
}

}  // namespace
}  // namespace vkgemm::pblas

VKGEMM_PBLAS_EXPORT void pdgemm_(const char* ta, const char* tb, const int* m, const int* n, const int* k,
                                 const double* alpha, const double* a, const int* ia, const int* ja, const int* desca,
                                 const double* b, const int* ib, const int* jb, const int* descb, const double* beta,
                                 double* c, const int* ic, const int* jc, const int* descc) {
  vkgemm::pblas::pgemm<double>("pdgemm_", "dgemm_", ta, tb, m, n, k, alpha, a, ia, ja, desca, b, ib, jb, descb, beta,
                               c, ic, jc, descc);
}

VKGEMM_PBLAS_EXPORT void psgemm_(const char* ta, const char* tb, const int* m, const int* n, const int* k,
                                 const float* alpha, const float* a, const int* ia, const int* ja, const int* desca,
                                 const float* b, const int* ib, const int* jb, const int* descb, const float* beta,
                                 float* c, const int* ic, const int* jc, const int* descc) {
  vkgemm::pblas::pgemm<float>("psgemm_", "sgemm_", ta, tb, m, n, k, alpha, a, ia, ja, desca, b, ib, jb, descb, beta,
                              c, ic, jc, descc);
}
