// The host-memory path (vk/host_copies.hpp, docs/design/host-copies.md): products and transfers on host
// pointers through each way the engine copies (the caller's pages imported, the staging ring, a mapped
// buffer), at pointers 1 to 63 bytes past an aligned one, with sizes that are no multiple of any alignment
// and that cross the staging chunks; inputs unchanged, outputs poisoned, guard bytes around them untouched.
#include <doctest/doctest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/copy_workers.hpp"
#include "engine/engine_impl.hpp"
#include "guarded.hpp"
#include "support.hpp"
#include "vkgemm/reference.hpp"

using namespace vkgemm;
using vkgemm::test::Guarded;

namespace {

constexpr uint64_t kChunk = 4099;  // bytes a staging chunk: a prime, so no operand fills whole chunks

// An engine whose host copies go `path` ("import", "staging", or "" for the engine's rule) through chunks of
// kChunk bytes; its validation messages fail the test.
std::unique_ptr<Engine> engine_for(const std::string& path) {
  if (!path.empty()) setenv("VKGEMM_TEST_HOST_COPIES", path.c_str(), 1);
  setenv("VKGEMM_TEST_STAGING_CHUNK", std::to_string(kChunk).c_str(), 1);
  auto e = test::make_engine();
  unsetenv("VKGEMM_TEST_HOST_COPIES");
  unsetenv("VKGEMM_TEST_STAGING_CHUNK");
  return e;
}

detail::HostCopyCounts counts(Engine& e) { return detail::Access::impl(e).host_copies->counts(); }

void put(Guarded& g, const std::vector<float>& v) { std::memcpy(g.data(), v.data(), g.size()); }
std::vector<float> get(Guarded& g) {
  std::vector<float> v(g.size() / sizeof(float));
  std::memcpy(v.data(), g.data(), g.size());
  return v;
}

// The paths an engine on this device can take; import only where the device imports host memory.
std::vector<std::string> paths(bool host_import) {
  std::vector<std::string> out = {"", "staging"};
  if (host_import) {
    out.push_back("import");
  } else {
    test::skip("this device has no VK_EXT_external_memory_host: the import path is not tested here");
  }
  return out;
}

// What the copies of one call must have done on `path`: every one the path's way.
void check_went(const std::string& path, const detail::HostCopyCounts& before, const detail::HostCopyCounts& after,
                uint64_t copies) {
  if (path == "import") {
    CHECK(after.imported - before.imported == copies);
    CHECK(after.staged == before.staged);
  } else if (path == "staging") {
    CHECK(after.staged - before.staged == copies);
    CHECK(after.imported == before.imported);
  }
  CHECK(after.mapped - before.mapped + after.imported - before.imported + after.staged - before.staged == copies);
}

}  // namespace

TEST_SUITE("host copies") {
  TEST_CASE("copy workers: every byte of every part lands, none outside, across part sizes, stores, a pool's reuse") {
    auto rng = test::case_rng(test::current_case_name());
    using detail::CopyWorkers;
    constexpr uint64_t kPart = CopyWorkers::kMinPart, kGuard = 64;
    // Sizes around the part boundaries: one part, two, a tail of one byte, a part that is not whole cache lines.
    const std::vector<uint64_t> sizes = {0, 1, kPart - 1, kPart, 2 * kPart - 1, 2 * kPart + 1, 5 * kPart + 4097,
                                         (3ull << 20) + 13};
    std::vector<unsigned char> src((3ull << 20) + 64);
    for (auto& x : src) x = static_cast<unsigned char>(rng());
    for (const unsigned threads : {1u, 2u, 3u, 5u}) {
      CopyWorkers workers(threads);
      CHECK(workers.threads() == threads);
      for (int round = 0; round < 3; ++round) {  // one pool, many copies: each wakes only its own parts
        for (const auto stores : {CopyWorkers::Stores::plain, CopyWorkers::Stores::streaming}) {
          for (const uint64_t bytes : sizes) {
            // Neither end aligned, the destination's offset from a cache line varied (the streaming copy's head).
            const uint64_t skew = kGuard + 3 + 29 * static_cast<uint64_t>(round);
            INFO(fmt::format("{} threads, {} bytes, round {}, {} stores", threads, bytes, round,
                             stores == CopyWorkers::Stores::plain ? "plain" : "streaming"));
            std::vector<unsigned char> dst(bytes + 2 * skew, 0xA5);
            workers.copy(dst.data() + skew, src.data() + 5 + round, bytes, stores);
            CHECK(std::memcmp(dst.data() + skew, src.data() + 5 + round, bytes) == 0);
            bool guards = true;
            for (uint64_t i = 0; i < skew; ++i) guards = guards && dst[i] == 0xA5;
            for (uint64_t i = skew + bytes; i < dst.size(); ++i) guards = guards && dst[i] == 0xA5;
            CHECK(guards);
          }
        }
      }
    }
    // A child forked from a process whose pool runs has none of its threads: it copies alone, and its pool goes
    // without waiting for them (alarm: a hang kills the child, and the check below fails).
    CopyWorkers parent(3);
    std::vector<unsigned char> scratch(2 * kPart);
    parent.copy(scratch.data(), src.data(), scratch.size());  // the threads started and waited for once
    const pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      alarm(20);
      std::vector<unsigned char> copy(src.size());
      parent.copy(copy.data(), src.data(), src.size());
      const bool same = std::memcmp(copy.data(), src.data(), src.size()) == 0;
      parent.~CopyWorkers();
      _exit(same ? 0 : 1);
    }
    int status = 0;
    REQUIRE(waitpid(child, &status, 0) == child);
    INFO("exited ", WIFEXITED(status), " code ", WEXITSTATUS(status), " signal ",
         WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    CHECK_MESSAGE((WIFEXITED(status) && WEXITSTATUS(status) == 0), "the forked child's copy hung or was wrong");
    CHECK(CopyWorkers::default_threads() >= 1);
    CHECK(CopyWorkers::default_threads() <= CopyWorkers::kMaxThreads);
  }

  TEST_CASE("products on host pointers through each path: skewed pointers, inputs unchanged, guards untouched") {
    auto rng = test::case_rng(test::current_case_name());
    const bool host_import = test::engine().device().host_import;
    struct Shape {
      uint32_t m, n, k;
    };
    // Bytes no multiple of 4099, 64 or a page; the last crosses more chunks than the ring has slots.
    const Shape shapes[] = {{1, 1, 1}, {67, 45, 33}, {131, 97, 61}};
    for (const std::string& path : paths(host_import)) {
      auto e = engine_for(path);
      for (const Shape& s : shapes) {
        for (const size_t skew : {size_t{0}, size_t{1}, size_t{3}, size_t{17}, size_t{63}}) {
          INFO(fmt::format("path '{}', {}x{}x{}, skew {}", path, s.m, s.n, s.k, skew));
          const auto a = test::random_floats(size_t{s.m} * s.k, rng), b = test::random_floats(size_t{s.k} * s.n, rng);
          Guarded ga(a.size() * 4, skew), gb(b.size() * 4, (skew * 7) % 64), gc(size_t{s.m} * s.n * 4, 63 - skew);
          put(ga, a), put(gb, b);
          std::memset(gc.data(), 0xff, gc.size());  // NaN: an element not written shows
          const auto before = counts(*e);
          e->gemm(DataType::f32, s.m, s.n, s.k, ga.data(), gb.data(), gc.data());
          // A and B in, C out: C, dense, with beta 0, is written whole and never goes in.
          check_went(path, before, counts(*e), 3);
          CHECK(get(ga) == a);
          CHECK(get(gb) == b);
          CHECK(ga.guards_intact());
          CHECK(gb.guards_intact());
          CHECK(gc.guards_intact());
          const auto c = get(gc);
          const Comparison r = compare_with_reference(DataType::f32, s.m, s.n, s.k, a.data(), b.data(), c.data());
          CHECK_MESSAGE(r.passed, fmt::format("{} elements off, the first at {}", r.bad_elements, r.first_bad));
        }
      }
    }
  }

  TEST_CASE("the full call on host pointers: beta reads C, the gaps between C's rows come back unchanged") {
    auto rng = test::case_rng(test::current_case_name());
    for (const std::string& path : paths(test::engine().device().host_import)) {
      auto e = engine_for(path);
      for (const double beta : {-0.5, 0.0}) {  // 0: C is not read, but its gaps still go in and come back
        INFO(fmt::format("path '{}', beta {}", path, beta));
        GemmDesc desc;
        desc.type = DataType::f32;
        desc.m = 53, desc.n = 29, desc.k = 71;
        desc.ldc = 29 + 6;
        desc.alpha = 1.5, desc.beta = beta;
        const auto a = test::random_floats(53 * 71, rng), b = test::random_floats(71 * 29, rng);
        const auto c0 = test::random_floats(53 * 35 - 6, rng);  // the span: the last row ends at n
        Guarded ga(a.size() * 4, 5), gb(b.size() * 4, 11), gc(c0.size() * 4, 33);
        put(ga, a), put(gb, b), put(gc, c0);
        const auto before = counts(*e);
        e->gemm(desc, ga.data(), gb.data(), gc.data());
        check_went(path, before, counts(*e), 4);  // A, B and C in, C out
        CHECK(get(ga) == a);
        CHECK(get(gb) == b);
        CHECK(gc.guards_intact());
        const auto c = get(gc);
        const Comparison r = compare_with_reference(desc, a.data(), b.data(), c0.data(), c.data());
        CHECK_MESSAGE(r.passed, fmt::format("{} elements off, the first at {}", r.bad_elements, r.first_bad));
      }
    }
  }

  TEST_CASE("write and read on host pointers through each path, across chunks, at odd offsets") {
    auto rng = test::case_rng(test::current_case_name());
    for (const std::string& path : paths(test::engine().device().host_import)) {
      CAPTURE(path);
      auto e = engine_for(path);
      const uint64_t size = 9 * kChunk + 77;  // more chunks than the ring's slots
      Buffer buffer = e->create_buffer(size);
      std::vector<std::byte> all(size);
      for (auto& x : all) x = std::byte(rng() & 0xff);
      Guarded whole(size, 9);
      std::memcpy(whole.data(), all.data(), size);
      e->write(buffer, 0, whole.data(), size);
      CHECK(std::memcmp(whole.data(), all.data(), size) == 0);  // the source unchanged
      // A piece over chunk boundaries at an odd offset, written from a skewed pointer, then the whole read.
      const uint64_t offset = kChunk - 3, bytes = 3 * kChunk + 5;
      Guarded piece(bytes, 41);
      for (uint64_t i = 0; i < bytes; ++i) piece.data()[i] = std::byte(rng() & 0xff);
      std::memcpy(all.data() + offset, piece.data(), bytes);
      e->write(buffer, offset, piece.data(), bytes);
      CHECK(piece.guards_intact());
      Guarded back(size, 62);
      std::memset(back.data(), 0x5a, size);
      e->read(buffer, 0, back.data(), size);
      CHECK(back.guards_intact());
      CHECK(std::memcmp(back.data(), all.data(), size) == 0);
      // A read of an odd range into a skewed pointer lands there alone.
      Guarded part(bytes, 1);
      e->read(buffer, offset + 1, part.data(), bytes);
      CHECK(part.guards_intact());
      CHECK(std::memcmp(part.data(), all.data() + offset + 1, bytes) == 0);
    }
  }

  TEST_CASE("an input on read-only pages is read, never written, on each path") {
    auto rng = test::case_rng(test::current_case_name());
    const long page = sysconf(_SC_PAGESIZE);
    REQUIRE(page > 0);
    const uint32_t m = 40, n = 24, k = 50;  // A and B share their pages, A from 5 bytes in, B right after it
    const size_t need = 5 + (size_t{m} * k + size_t{k} * n) * 4;
    const size_t bytes = (need + size_t(page) - 1) / size_t(page) * size_t(page);
    void* map = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(map != MAP_FAILED);
    auto* a = static_cast<std::byte*>(map) + 5;
    std::byte* b = a + size_t{m} * k * 4;
    const auto va = test::random_floats(size_t{m} * k, rng), vb = test::random_floats(size_t{k} * n, rng);
    std::memcpy(a, va.data(), va.size() * 4);
    std::memcpy(b, vb.data(), vb.size() * 4);
    REQUIRE(mprotect(map, bytes, PROT_READ) == 0);  // a write to them now faults
    for (const std::string& path : paths(test::engine().device().host_import)) {
      CAPTURE(path);
      auto e = engine_for(path);
      std::vector<float> c(size_t{m} * n, NAN);
      const auto before = counts(*e);
      e->gemm(DataType::f32, m, n, k, a, b, c.data());
      const auto after = counts(*e);
      // A driver may refuse to import read-only pages: those copies are staged instead.
      if (path == "import") CHECK(after.imported - before.imported + after.refused - before.refused >= 2);
      const Comparison r = compare_with_reference(DataType::f32, m, n, k, va.data(), vb.data(), c.data());
      CHECK_MESSAGE(r.passed, fmt::format("{} elements off, the first at {}", r.bad_elements, r.first_bad));
    }
    CHECK(std::memcmp(a, va.data(), va.size() * 4) == 0);
    CHECK(std::memcmp(b, vb.data(), vb.size() * 4) == 0);
    munmap(map, bytes);
  }

  TEST_CASE("the rule: host memory staged from kStagingThreads copy threads on, imported below; a set path wins") {
    auto rng = test::case_rng(test::current_case_name());
    if (!test::engine().device().host_import) {
      return test::skip("this device has no VK_EXT_external_memory_host: every copy is staged here");
    }
    constexpr unsigned kAt = detail::HostCopies::kStagingThreads;
    struct Case {
      const char* path;  // "" for the engine's rule
      unsigned threads;
      bool staged;
    };
    const Case cases[] = {{"", kAt - 1, false}, {"", kAt, true}, {"", 16, true}, {"import", 16, false},
                          {"staging", 1, true}};
    for (const Case& c : cases) {
      CAPTURE(c.path);
      CAPTURE(c.threads);
      if (*c.path) setenv("VKGEMM_TEST_HOST_COPIES", c.path, 1);
      setenv("VKGEMM_TEST_COPY_THREADS", std::to_string(c.threads).c_str(), 1);
      setenv("VKGEMM_TEST_HOST_PANELS", "256", 1);
      auto e = test::make_engine();
      for (const char* knob : {"VKGEMM_TEST_HOST_COPIES", "VKGEMM_TEST_COPY_THREADS", "VKGEMM_TEST_HOST_PANELS"}) {
        unsetenv(knob);
      }
      CHECK(detail::Access::impl(*e).host_copies->stages() == c.staged);
      // A product cut into panels (here on any device: the knob) goes the rule's way and says so; A and C of
      // more than HostCopies::kImportMin, so that the rule's imports are made.
      GemmDesc d;
      d.m = 1100, d.n = 300, d.k = 300;
      const test::GuardedHostRun run = test::guarded_host_gemm(*e, d, rng);
      CHECK(run.timing.config.find("5 panels of 256 rows") != std::string::npos);
      CHECK((run.timing.config.find(fmt::format("(staged by {} host threads)", c.threads)) != std::string::npos) ==
            c.staged);
      CHECK_MESSAGE(run.result.passed, fmt::format("{} elements off, the first at {}", run.result.bad_elements,
                                                   run.result.first_bad));
    }
  }

  TEST_CASE("the knobs refuse what they do not know") {
    setenv("VKGEMM_TEST_HOST_COPIES", "pinned", 1);
    test::expect_error([] { test::make_engine(); }, ErrorCode::invalid_argument,
                       "VKGEMM_TEST_HOST_COPIES=pinned is not import or staging");
    unsetenv("VKGEMM_TEST_HOST_COPIES");
    setenv("VKGEMM_TEST_STAGING_CHUNK", "0", 1);
    test::expect_error([] { test::make_engine(); }, ErrorCode::invalid_argument, "VKGEMM_TEST_STAGING_CHUNK=0");
    unsetenv("VKGEMM_TEST_STAGING_CHUNK");
    for (const char* bad : {"0", "65", "-3", "4x"}) {
      setenv("VKGEMM_TEST_COPY_THREADS", bad, 1);
      test::expect_error([] { test::make_engine(); }, ErrorCode::invalid_argument,
                         fmt::format("VKGEMM_TEST_COPY_THREADS={} is not a whole number of threads from 1 to 64", bad));
    }
    unsetenv("VKGEMM_TEST_COPY_THREADS");
  }
}
