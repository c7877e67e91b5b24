#include "pblas/streamed.hpp"

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <new>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

#include "pblas/kept_buffers.hpp"
#include "pblas/messages.hpp"
#include "pblas/stopwatch.hpp"

namespace vkgemm::pblas {
namespace {

template <class T>
constexpr int32_t type_of() {
  return std::is_same_v<T, double> ? VKGEMM_F64 : VKGEMM_F32;
}

// The widest K block of any process of the grid's row: each device buffer for A holds it.
int64_t widest_block(const Axis& k_axis, int cols) {
  int64_t widest = 0;
  for (int q = 0; q < cols; ++q)
    for (const OwnedBlock& blk : owned_blocks(k_axis, q)) widest = std::max(widest, blk.length);
  return widest;
}

// Columns of each other process's piece that have arrived (a prefix: its messages complete in order of their
// columns as far as the device part is concerned), shared by the thread that completes the messages and the
// thread that multiplies. The thread that moves the pieces also waits here until the device part's first writes
// are done (or it waits for a piece, or ends): both copy host memory, and the first product waits for those
// writes alone.
struct Arrivals {
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<int64_t> columns;  // by grid column
  bool first_writes = true;      // the device part's writes before its first product are running
  void wait_for(int q, int64_t needed) {
    std::unique_lock lock(mutex);
    first_writes = false;
    changed.notify_all();
    changed.wait(lock, [&] { return columns[static_cast<size_t>(q)] >= needed; });
  }
  void first_writes_done() {
    const std::lock_guard lock(mutex);
    first_writes = false;
    changed.notify_all();
  }
  void wait_first_writes() {
    std::unique_lock lock(mutex);
    changed.wait(lock, [&] { return !first_writes; });
  }
};

// A K block of A to multiply: its columns on the host (this process's piece, or another's as it arrived).
struct Block {
  OwnedBlock blk;
  int q = 0;
  const char* host = nullptr;
  uint64_t bytes = 0;
};

// Every K block in the order the device part multiplies them: this process's first (already here), then the
// others' in turn, each as its columns arrive.
template <class T>
std::vector<Block> blocks_in_order(const StreamCall<T>& s, const GridShape& g,
                                   const std::vector<std::unique_ptr<T[]>>& pieces) {
  std::vector<Block> out;
  for (int step = 0; step < g.cols; ++step) {
    const int q = (g.my_col + step) % g.cols;
    const T* host = q == g.my_col ? s.a : pieces[static_cast<size_t>(q)].get();
    for (const OwnedBlock& blk : owned_blocks(s.k_axis, q)) {
      const auto* at = reinterpret_cast<const char*>(host + blk.local * s.m);
      out.push_back({blk, q, at, uint64_t(blk.length * s.m) * sizeof(T)});
    }
  }
  return out;
}

// The local product cut along N (C's and B's columns, contiguous in column-major) into parts, so that only
// the first part's C and B are written before the first product and each later part's beside the products
// before it. A part is at least kNarrowestPart columns wide (narrower products use the device less well),
// and there are at most kMaxParts: with four, the writes before the first product fall from all of C and B
// and A's first block to a quarter of C and B and that block (local m = 24576, n = 12288, K blocks of 4096,
// f64: 2.0 GB of 5.6), and six would take 0.4 GB more off them for two more products in every K block.
constexpr int64_t kNarrowestPart = 2048;
constexpr int64_t kMaxParts = 4;

struct Part {
  int64_t first = 0, n = 0;  // C's and B's columns
};

std::vector<Part> parts_of(int64_t n, const Settings& settings) {
  const int64_t narrowest = settings.part_columns > 0 ? settings.part_columns : kNarrowestPart;
  const int64_t count = std::clamp<int64_t>(n / narrowest, 1, kMaxParts);
  std::vector<Part> parts;
  for (int64_t j = 0, first = 0; j < count; ++j) {
    parts.push_back({first, n / count + (j < n % count ? 1 : 0)});
    first += parts.back().n;
  }
  return parts;
}

// A part's device buffers' bytes: its columns of C, and of B (all of K).
template <class T>
uint64_t c_bytes(const StreamCall<T>& s, const Part& p) {
  return uint64_t(s.m * p.n) * sizeof(T);
}
template <class T>
uint64_t b_bytes(const StreamCall<T>& s, const Part& p) {
  return uint64_t(s.ldb * (p.n - 1) + s.k_axis.n) * sizeof(T);
}

// The stream's device buffers: two for A's K blocks, the next written while the one before is multiplied, and
// a C and a B for each part, so that a part's write waits for no product of another part (the engine's write
// beside waits for the products that use its buffer). Kept for the next call (kept_buffers.hpp), in slots
// kA, kA + 1, then kParts + 2j and kParts + 2j + 1 for part j's C and B.
struct DeviceBuffers {
  enum Slot : size_t { kA = 0, kParts = 2 };
  std::vector<Part> parts;
  vkgemm_buffer* a[2] = {};
  vkgemm_buffer* c[kMaxParts] = {};
  vkgemm_buffer* b[kMaxParts] = {};
};

// The buffers from the kept ones (made where none holds enough): false where the engine refuses one.
// `all_kept` says whether every one was kept from an earlier call.
template <class T>
bool take_buffers(KeptBuffers& kept, vkgemm_engine* engine, const StreamCall<T>& s, uint64_t a_bytes, bool two_a,
                  DeviceBuffers& dev, bool& all_kept) {
  all_kept = true;
  const auto take = [&](size_t slot, uint64_t bytes) {
    bool reused = false;
    vkgemm_buffer* buffer = kept.take(engine, slot, bytes, reused);
    all_kept = all_kept && reused;
    return buffer;
  };
  bool ok = (dev.a[0] = take(DeviceBuffers::kA, a_bytes)) != nullptr;
  // A second A buffer only where there is a second block to write beside the first's product.
  dev.a[1] = dev.a[0];
  if (ok && two_a) ok = (dev.a[1] = take(DeviceBuffers::kA + 1, a_bytes)) != nullptr;
  for (size_t j = 0; ok && j < dev.parts.size(); ++j) {
    ok = (dev.c[j] = take(DeviceBuffers::kParts + 2 * j, c_bytes(s, dev.parts[j]))) != nullptr &&
         (dev.b[j] = take(DeviceBuffers::kParts + 2 * j + 1, b_bytes(s, dev.parts[j]))) != nullptr;
  }
  return ok;
}

// Part j's columns of C (where beta reads it) and of B into its buffers: null on success, else the failing
// step's name.
template <class T>
const char* write_part(vkgemm_engine* engine, const StreamCall<T>& s, const DeviceBuffers& dev, size_t j) {
  const Part& p = dev.parts[j];
  if (s.beta != T(0) && vkgemm_buffer_write_beside(engine, dev.c[j], 0, s.c + p.first * s.m, c_bytes(s, p)))
    return "C's upload";
  if (vkgemm_buffer_write_beside(engine, dev.b[j], 0, s.b + p.first * s.ldb, b_bytes(s, p))) return "B's upload";
  return nullptr;
}

// Part j's product of block `blk` (A in `a_dev`), submitted without waiting: its ticket in *ticket. A part's
// product of the first block takes the caller's beta; the later blocks' add to it.
template <class T>
vkgemm_status submit_product(vkgemm_engine* engine, const StreamCall<T>& s, const Settings& settings,
                             const DeviceBuffers& dev, vkgemm_buffer* a_dev, size_t j, const OwnedBlock& blk,
                             bool first, uint64_t* ticket) {
  vkgemm_gemm_options options{};
  options.struct_size = sizeof options;
  options.precision = settings.precision;
  vkgemm_gemm_desc d{};
  d.struct_size = sizeof d;
  d.type = type_of<T>(), d.c_type = -1, d.column_major = 1;
  d.m = s.m, d.n = dev.parts[j].n, d.k = blk.length, d.lda = s.m, d.ldb = s.ldb, d.ldc = s.m;
  d.alpha = double(s.alpha), d.beta = first ? double(s.beta) : 1.0;
  d.batch = 1, d.stride_a = d.stride_b = d.stride_c = -1;
  const vkgemm_operand a{sizeof(vkgemm_operand), a_dev, 0};
  const vkgemm_operand b{sizeof(vkgemm_operand), dev.b[j], uint64_t(blk.global) * sizeof(T)};
  const vkgemm_operand c{sizeof(vkgemm_operand), dev.c[j], 0};
  return vkgemm_gemm_buffers_submit(engine, &d, nullptr, &a, &b, &c, nullptr, &options, ticket);
}

// The products, K blocks outer and parts inner: during the first block each later part's C and B are written
// beside the products before it, and each K block's A into one A buffer while the block before is multiplied
// from the other (vkgemm.h's products beside writes): a step costs the larger of its writes and its products,
// not their sum. "" on success, else the failing step's sentence.
template <class T>
std::string multiply_blocks(const StreamCall<T>& s, vkgemm_engine* engine, const Settings& settings,
                            const DeviceBuffers& dev, const std::vector<Block>& blocks, Arrivals& arrived,
                            const GridShape& g, StreamOutcome& o, Stopwatch& watch) {
  auto fail = [&](const char* step) { return std::string(step) + ": " + vkgemm_last_error(); };
  const auto arrive = [&](const Block& x) {
    if (x.q != g.my_col) arrived.wait_for(x.q, x.blk.local + x.blk.length);
    o.wait_s += watch.lap();
  };
  constexpr uint64_t kNoLimit = ~uint64_t{0};  // the engine's waits end with the product, or the device lost
  int32_t complete = 0;
  // After a write beside: its time; where the product submitted last (`ticket`) had completed before the
  // write did, some of the write (at most all of it) was not hidden.
  const auto written_beside = [&](uint64_t ticket) {
    const double written = watch.lap();
    o.beside_s += written;
    if (vkgemm_engine_wait(engine, ticket, 0, &complete)) return false;
    if (complete) o.not_hidden_s += written, ++o.not_hidden;
    return true;
  };
  if (blocks.empty()) return "";
  arrive(blocks[0]);
  // Beside nothing yet, as the first part's C and B (multiply_on_device): the first product waits for it.
  if (vkgemm_buffer_write_beside(engine, dev.a[0], 0, blocks[0].host, blocks[0].bytes)) return fail("A's upload");
  o.write_s += watch.lap();
  arrived.first_writes_done();
  uint64_t before = 0;  // the last product of the block before, whose A buffer the next block goes into
  for (size_t i = 0; i < blocks.size(); ++i) {
    uint64_t ticket = 0;
    for (size_t j = 0; j < dev.parts.size(); ++j) {
      static long products_so_far = 0;  // the process's, for the test's failure (settings.hpp)
      if (++products_so_far == settings.fail_product) return "a product: failed by VKGEMM_TEST_PBLAS_FAIL_PRODUCT";
      if (submit_product(engine, s, settings, dev, dev.a[i % 2], j, blocks[i].blk, i == 0, &ticket))
        return fail("a product");
      ++o.products;
      o.multiply_s += watch.lap();
      if (i > 0 || j + 1 == dev.parts.size()) continue;
      if (const char* step = write_part(engine, s, dev, j + 1)) return fail(step);
      if (!written_beside(ticket)) return fail("a product");
    }
    if (before && vkgemm_engine_wait(engine, before, kNoLimit, &complete)) return fail("a product");
    o.multiply_s += watch.lap();
    if (i + 1 == blocks.size()) break;
    arrive(blocks[i + 1]);
    if (vkgemm_buffer_write_beside(engine, dev.a[(i + 1) % 2], 0, blocks[i + 1].host, blocks[i + 1].bytes))
      return fail("A's upload beside a product");
    if (!written_beside(ticket)) return fail("a product");
    before = ticket;
  }
  if (vkgemm_engine_wait(engine, 0, kNoLimit, &complete) || !complete) return fail("a product");
  o.multiply_s += watch.lap();
  return "";
}

// C's download, part by part: where beta reads C, through a copy, so that a failure part way leaves C as it
// came. "" on success, else the failing step's sentence.
template <class T>
std::string read_c(vkgemm_engine* engine, const StreamCall<T>& s, const DeviceBuffers& dev) {
  std::unique_ptr<T[]> result;
  if (s.beta != T(0)) {
    result.reset(new (std::nothrow) T[static_cast<size_t>(s.m * s.n)]);
    if (!result) return "no host memory for C's download";
  }
  T* to = result ? result.get() : s.c;
  for (size_t j = 0; j < dev.parts.size(); ++j) {
    const Part& p = dev.parts[j];
    if (vkgemm_buffer_read(engine, dev.c[j], 0, to + p.first * s.m, c_bytes(s, p)))
      return std::string("C's download: ") + vkgemm_last_error();
  }
  if (result) copy<T>({result.get(), 1, s.m * s.n, s.m * s.n}, {s.c, 1, s.m * s.n, s.m * s.n});
  return "";
}

// The device part: buffers, the first part's C and B written, the products (multiply_blocks), C read. "" on
// success, else the failing step's sentence (C unchanged).
template <class T>
std::string multiply_on_device(const StreamCall<T>& s, const GridShape& g, vkgemm_engine* engine,
                               const Settings& settings, const std::vector<std::unique_ptr<T[]>>& pieces,
                               Arrivals& arrived, StreamOutcome& o) {
  Stopwatch watch;
  auto fail = [&](const char* step) { return std::string(step) + ": " + vkgemm_last_error(); };
  const std::vector<Block> blocks = blocks_in_order(s, g, pieces);
  DeviceBuffers dev;
  dev.parts = parts_of(s.n, settings);
  // Device memory is slow to allocate (kept_buffers.hpp: the buffers are kept for the next call).
  const uint64_t a_bytes = uint64_t(s.m * widest_block(s.k_axis, g.cols)) * sizeof(T);
  vkgemm_device_info info{};
  info.struct_size = sizeof info;
  if (vkgemm_engine_device(engine, &info)) return fail("the engine's device");
  KeptBuffers& kept = kept_buffers();
  const std::lock_guard hold(kept.mutex);
  struct Settle {  // on every way out: kept for the next call, or released
    KeptBuffers& kept;
    uint64_t memory;
    ~Settle() { kept.settle(memory); }
  } settle{kept, info.device_local_memory};
  if (!take_buffers(kept, engine, s, a_bytes, blocks.size() > 1, dev, o.buffers_kept)) {
    const std::string why = fail("a device buffer");
    kept.release();
    return why;
  }
  o.buffers_s += watch.lap();
  // The first part's C and B through the upload copy queue as the later parts' (with nothing in flight the write
  // beside waits for nothing): every write of the stream takes one path, and the first product waits for these
  // copies on the device, not the host.
  if (const char* step = write_part(engine, s, dev, 0)) return fail(step);
  o.write_s += watch.lap();
  std::string why = multiply_blocks(s, engine, settings, dev, blocks, arrived, g, o, watch);
  if (!why.empty()) return why;
  why = read_c(engine, s, dev);
  o.read_s += watch.lap();
  return why;
}

// A in global order from the pieces: the host check's operand.
template <class T>
std::unique_ptr<T[]> assemble(const StreamCall<T>& s, const GridShape& g, const std::vector<std::unique_ptr<T[]>>& pieces) {
  std::unique_ptr<T[]> a(new (std::nothrow) T[static_cast<size_t>(s.m * s.k_axis.n)]);
  if (!a) return a;
  for (int q = 0; q < g.cols; ++q) {
    const T* host = q == g.my_col ? s.a : pieces[static_cast<size_t>(q)].get();
    for (const OwnedBlock& blk : owned_blocks(s.k_axis, q))
      copy<T>({host + blk.local * s.m, 1, blk.length * s.m, blk.length * s.m},
              {a.get() + blk.global * s.m, 1, blk.length * s.m, blk.length * s.m});
  }
  return a;
}

}  // namespace

namespace {

// The product block by block through the drop-in BLAS (C crossing the bus each time): where the device part
// failed, or the check refused it.
template <class T>
void multiply_by_blocks(const StreamCall<T>& s, const GridShape& g, const std::vector<std::unique_ptr<T[]>>& pieces,
                        Gemm<T> gemm) {
  bool first = true;
  const int m = static_cast<int>(s.m), n = static_cast<int>(s.n), ldb = static_cast<int>(s.ldb);
  const T one(1);
  for (int q = 0; q < g.cols; ++q) {
    const T* host = q == g.my_col ? s.a : pieces[static_cast<size_t>(q)].get();
    for (const OwnedBlock& blk : owned_blocks(s.k_axis, q)) {
      const int k = static_cast<int>(blk.length);
      gemm("N", "N", &m, &n, &k, &s.alpha, host + blk.local * s.m, &m, s.b + blk.global, &ldb, first ? &s.beta : &one,
           s.c, &m, 1, 1);
      first = false;
    }
  }
}

// The host's sampled check of the streamed result (vkgemm_check, on A assembled); false where it fails or
// cannot run.
template <class T>
bool checked(const StreamCall<T>& s, const GridShape& g, const std::vector<std::unique_ptr<T[]>>& pieces,
             const T* before, std::string& summary) {
  const std::unique_ptr<T[]> a = assemble(s, g, pieces);
  if (!a) return summary = "no host memory to assemble A for the check", false;
  vkgemm_gemm_desc d{};
  d.struct_size = sizeof d;
  d.type = type_of<T>(), d.c_type = -1, d.column_major = 1;
  d.m = s.m, d.n = s.n, d.k = s.k_axis.n, d.lda = s.m, d.ldb = s.ldb, d.ldc = s.m;
  d.alpha = double(s.alpha), d.beta = double(s.beta), d.batch = 1, d.stride_a = d.stride_b = d.stride_c = -1;
  vkgemm_check_result r{};
  r.struct_size = sizeof r;
  if (vkgemm_check(&d, a.get(), s.b, before ? before : s.c, s.c, 0x766b676d, &r)) return summary = vkgemm_last_error(), false;
  summary = r.summary;
  return r.passed != 0;
}

}  // namespace

template <class T>
bool can_stream(const StreamCall<T>& s, const GridShape& g, int64_t a_ld, int64_t c_ld, vkgemm_engine* engine,
                const Settings& settings) {
  if (g.rows != 1 || g.cols < 2 || !engine || s.m <= 0 || s.n <= 0 || a_ld != s.m || c_ld != s.m) return false;
  for (int q = 0; q < g.cols; ++q)
    for (const OwnedBlock& blk : owned_blocks(s.k_axis, q))
      if (blk.length < kMinStreamBlock && blk.global != 0 && blk.global + blk.length != s.k_axis.n) return false;
  vkgemm_device_info info{};
  info.struct_size = sizeof info;
  if (vkgemm_engine_device(engine, &info)) return false;
  const uint64_t limit = info.max_allocation_size;
  for (const Part& p : parts_of(s.n, settings))
    if (c_bytes(s, p) > limit || b_bytes(s, p) > limit) return false;
  return uint64_t(s.m * widest_block(s.k_axis, g.cols)) * sizeof(T) <= limit;
}

template <class T>
std::vector<std::unique_ptr<T[]>> allocate_pieces(const StreamCall<T>& s, const GridShape& g) {
  std::vector<std::unique_ptr<T[]>> pieces(static_cast<size_t>(g.cols));
  for (int q = 0; q < g.cols; ++q) {
    const int64_t elements = s.m * local_extent(s.k_axis, q);
    if (q == g.my_col || elements == 0) continue;
    pieces[static_cast<size_t>(q)].reset(new (std::nothrow) T[static_cast<size_t>(elements)]);
    if (!pieces[static_cast<size_t>(q)]) return {};
  }
  return pieces;
}

template <class T>
StreamOutcome stream_product(const StreamCall<T>& s, const GridComm& grid, const GridShape& g, vkgemm_engine* engine,
                             const Settings& settings, Gemm<T> gemm, const std::vector<std::unique_ptr<T[]>>& pieces) {
  StreamOutcome outcome;
  std::vector<int> peers;
  for (int c = 0; c < g.cols; ++c) peers.push_back(grid.rank(0, c, g.cols));
  // Each other process's piece lands in a buffer of its own, in its local order (the device part's operand).
  struct {
    const StreamCall<T>& s;
    const std::vector<std::unique_ptr<T[]>>& pieces;
    Region<const T> holder(const OwnedBlock& b, const T* base, int64_t ld) const {
      return {base + b.local * ld, b.length, s.m, ld};
    }
    Region<T> full(int c, const OwnedBlock& b) const {
      return {pieces[static_cast<size_t>(c)].get() + b.local * s.m, b.length, s.m, s.m};
    }
  } place{s, pieces};
  std::vector<T> before;
  if (settings.check && s.beta != T(0)) before.assign(s.c, s.c + s.m * s.n);
  Arrivals arrived;
  arrived.columns.assign(static_cast<size_t>(g.cols), 0);
  std::thread device([&] {
    try {
      outcome.why = multiply_on_device(s, g, engine, settings, pieces, arrived, outcome);
    } catch (const std::exception& e) {
      outcome.why = e.what();
    }
    arrived.first_writes_done();  // on every way out
  });
  // This thread moves the pieces (MPI from one thread only), telling the device part what arrived; from when
  // the device part's first writes are done (Arrivals).
  arrived.wait_first_writes();
  outcome.received = exchange<T>(grid.comm.get(), peers, g.my_col, s.k_axis, Piece<T>{s.a, s.m}, place, settings.direct,
                                 [&](int c, const OwnedBlock& b) {
    std::lock_guard lock(arrived.mutex);
    int64_t& columns = arrived.columns[static_cast<size_t>(c)];
    columns = std::max(columns, b.local + b.length);
    arrived.changed.notify_all();
  });
  device.join();
  outcome.streamed = outcome.why.empty();
  if (!outcome.streamed) {  // a failed stream keeps nothing it may have left unusable
    KeptBuffers& kept = kept_buffers();
    const std::lock_guard hold(kept.mutex);
    kept.release();
  }
  std::string summary;
  outcome.checked = outcome.streamed && settings.check;
  if (outcome.checked && !checked(s, g, pieces, before.empty() ? nullptr : before.data(), summary)) {
    outcome.streamed = false;
    outcome.why = "the streamed result FAILED the host's check (" + summary + ")";
    if (!before.empty()) std::copy(before.begin(), before.end(), s.c);
  }
  if (!outcome.streamed) multiply_by_blocks(s, g, pieces, gemm);
  return outcome;
}

template bool can_stream<float>(const StreamCall<float>&, const GridShape&, int64_t, int64_t, vkgemm_engine*,
                                const Settings&);
template bool can_stream<double>(const StreamCall<double>&, const GridShape&, int64_t, int64_t, vkgemm_engine*,
                                 const Settings&);
template std::vector<std::unique_ptr<float[]>> allocate_pieces<float>(const StreamCall<float>&, const GridShape&);
template std::vector<std::unique_ptr<double[]>> allocate_pieces<double>(const StreamCall<double>&, const GridShape&);
template StreamOutcome stream_product<float>(const StreamCall<float>&, const GridComm&, const GridShape&, vkgemm_engine*,
                                            const Settings&, Gemm<float>, const std::vector<std::unique_ptr<float[]>>&);
template StreamOutcome stream_product<double>(const StreamCall<double>&, const GridComm&, const GridShape&,
                                             vkgemm_engine*, const Settings&, Gemm<double>,
                                             const std::vector<std::unique_ptr<double[]>>&);

}  // namespace vkgemm::pblas
