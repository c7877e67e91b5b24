// Device limits: a matrix past maxStorageBufferRange (cut into pieces, so it must come out right),
// allocations past what the device has, absurd sizes, and genuine memory exhaustion bounded by an
// address-space limit. Each ends in a right result or a vkgemm::Error that names the limit, and the engine
// multiplies correctly afterwards. Small shapes through many pieces: tests/test_partition.cpp.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <sys/resource.h>

#include "support.hpp"
#include "sanitizer.hpp"

using namespace vkgemm;

namespace {

bool contains(const std::string& s, const std::string& words) { return s.find(words) != std::string::npos; }

// The engine after an error: a small product still comes out right.
void check_still_usable(const char* after) {
  auto rng = test::case_rng(after);
  const auto r = test::check_product(DataType::f32, 37, 29, 41, {}, rng);
  INFO("after ", after, ": ", r.detail);
  CHECK(r.passed);
}

// Sanitizers reserve terabytes of shadow address space and die instead of returning null when an
// address-space limit is hit, so the RLIMIT_AS test only runs in uninstrumented builds.
constexpr bool kAddressSanitizer = test::kSanitized;  // tests/sanitizer.hpp

// Bytes of address space this process maps now (VmSize).
uint64_t mapped_bytes() {
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return 0;
  unsigned long long pages = 0;
  const int got = std::fscanf(f, "%llu", &pages);
  std::fclose(f);
  return got == 1 ? pages * 4096ull : 0;
}

}  // namespace

TEST_SUITE("limits") {
  TEST_CASE("6000x6000 float32 A (144 MB) times 6000x8 B: cut into pieces within maxStorageBufferRange, right") {
    // On lavapipe A is past the 128 MiB range: the engine binds it in pieces, each from its own start.
    Engine& e = test::engine();
    constexpr uint32_t m = 6000, k = 6000, n = 8;
    const uint64_t a_bytes = uint64_t{m} * k * 4;
    MESSAGE("A is ", a_bytes, " bytes, maxStorageBufferRange ", e.device().max_storage_buffer_range);
    auto rng = test::case_rng("6000x6000");
    struct Variant {
      const char* name;
      Layout layout;
      Op op_a;
      GemmOptions options;
    };
    const Variant variants[] = {
        {"row-major, auto", Layout::row_major, Op::n, {}},
        {"row-major, tiled 16", Layout::row_major, Op::n, {.kernel = Kernel::tiled, .tile = 16}},
        {"column-major, auto", Layout::col_major, Op::n, {}},
        {"row-major, trans_a", Layout::row_major, Op::t, {}},
    };
    // The quick tier runs one or two of the four (each moves A's 144 MB several times), CI every one.
    const test::QuickSample quick = test::quick_sample("6000x6000");
    for (size_t i = 0; i < std::size(variants); ++i) {
      if (!quick.takes(i, std::size(variants))) {
        MESSAGE(std::string(variants[i].name), ": not in this quick run's sample");
        continue;
      }
      const Variant& v = variants[i];
      GemmDesc desc;
      desc.type = DataType::f32, desc.layout = v.layout, desc.op_a = v.op_a;
      desc.m = m, desc.n = n, desc.k = k;
      const auto start = std::chrono::steady_clock::now();
      const auto r = test::check_gemm_call(desc, v.options, rng);
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      INFO(std::string(v.name), ": ", r.detail);
      CHECK(r.passed);
      // Where A is past the range the engine must have cut the product (the configuration says how).
      if (a_bytes > e.device().max_storage_buffer_range) CHECK(r.timing.config.find(" pieces") != std::string::npos);
      MESSAGE(std::string(v.name), ": ", r.detail, " (", s, " s with the check)");
    }
    check_still_usable("6000x6000");
  }

  TEST_CASE("a batch past maxComputeWorkGroupCount[2] and rows past [1]: split into dispatches, right") {
    // The device's own limits (65535 on lavapipe), reached cheaply with thin matrices.
    Engine& e = test::engine();
    auto rng = test::case_rng("grid limits");
    const auto& count = e.device().max_workgroup_count;
    GemmDesc batched{.m = 2, .n = 3, .k = 4, .alpha = 1.5, .beta = 0.5};
    batched.batch = int64_t{count[2]} + 7;
    GemmDesc tall{.m = int64_t{count[1]} * 16 + 5, .n = 3, .k = 2};
    // The quick tier runs one of the two (each some 65536 workgroups of 256 invocations, seconds of lavapipe's
    // time), CI both.
    const test::QuickSample quick = test::quick_sample("grid limits");
    const GemmDesc descs[] = {batched, tall};
    for (size_t i = 0; i < std::size(descs); ++i) {
      const GemmDesc& d = descs[i];
      if (!quick.takes(i, std::size(descs))) {
        MESSAGE(test::describe(d), ": not in this quick run's sample");
        continue;
      }
      if (d.m * d.k + d.batch * 24 > (int64_t{1} << 26)) {  // a device with far larger limits: skip, too big
        test::skip(test::describe(d) + " is too large to check here");
        continue;
      }
      const auto r = test::check_gemm_call(e, d, {.kernel = Kernel::tiled, .tile = 16}, rng);
      INFO(r.detail);
      CHECK(r.passed);
      CHECK(contains(r.timing.config, "2 pieces"));
      MESSAGE(r.detail);
    }
  }

  TEST_CASE("allocations past maxMemoryAllocationSize or the heap are too_large, before Vulkan is asked") {
    Engine& e = test::engine();
    const auto& dev = e.device();
    REQUIRE(dev.max_allocation_size > 0);
    try {
      (void)e.create_buffer(dev.max_allocation_size + 1);
      FAIL("a buffer past maxMemoryAllocationSize was created");
    } catch (const Error& err) {
      CHECK(err.code() == ErrorCode::too_large);
      CHECK_MESSAGE(contains(err.what(), "maxMemoryAllocationSize"), err.what());
    }
    try {
      (void)e.create_buffer(~uint64_t{0} / 2);
      FAIL("an 8 EiB buffer was created");
    } catch (const Error& err) {
      CHECK_MESSAGE(err.code() == ErrorCode::too_large, err.what());
    }
    check_still_usable("too-large allocations");
  }

  TEST_CASE("absurd sizes whose byte counts overflow 64 bits are refused, not wrapped") {
    Engine& e = test::engine();
    std::vector<double> one(1, 1.0);
    // 2^31 x 2^31 x 8 bytes = 2^65: a product computed in 64 bits wraps to 0 bytes.
    const uint32_t huge = 1u << 31;
    for (const DataType type : {DataType::f32, DataType::f64}) {
      if (type == DataType::f64 && !e.device().float64) continue;
      try {
        e.gemm(type, huge, huge, huge, one.data(), one.data(), one.data());
        FAIL("a 2^31-cubed product was accepted");
      } catch (const Error& err) {
        CHECK_MESSAGE(err.code() == ErrorCode::too_large, err.what());
      }
      Buffer small = e.create_buffer(64);
      try {
        e.gemm({&small, 0, huge, huge, type}, {&small, 0, huge, 1, type}, {&small, 0, huge, 1, type});
        FAIL("a 2^31 x 2^31 matrix in a 64-byte buffer was accepted");
      } catch (const Error& err) {
        CHECK_MESSAGE((err.code() == ErrorCode::too_large || err.code() == ErrorCode::invalid_argument), err.what());
      }
    }
    const uint32_t max = 0xffffffffu;
    try {
      e.gemm(DataType::i32, max, max, max, one.data(), one.data(), one.data());
      FAIL("a (2^32-1)-cubed product was accepted");
    } catch (const Error& err) {
      CHECK_MESSAGE(err.code() == ErrorCode::too_large, err.what());
    }
    check_still_usable("absurd sizes");
  }

  TEST_CASE("device memory exhausted for real (under an address-space limit): out_of_memory, then usable") {
    // lavapipe's device memory is host memory. Exhausting the machine's 24 GiB would invite the OOM killer
    // onto unrelated processes, so the exhaustion is made real but bounded: RLIMIT_AS is set to what this
    // process maps now plus 1 GiB, buffers are created until the driver says no, then everything is freed
    // and the limit lifted.
    if (kAddressSanitizer) {
      test::skip("AddressSanitizer cannot run under an address-space limit");
      return;
    }
    Engine& e = test::engine();
    if (e.device().type != DeviceType::cpu) {
      // The address-space limit bounds device memory only where device memory is host memory.
      test::skip(e.device().name + " is not a CPU device; its memory is not this process's address space");
      return;
    }
    check_still_usable("warm-up");  // pipelines and staging exist before the limit
    rlimit old{};
    REQUIRE(getrlimit(RLIMIT_AS, &old) == 0);
    const uint64_t budget = uint64_t{1} << 30;
    const uint64_t chunk = uint64_t{64} << 20;
    rlimit tight = old;
    tight.rlim_cur = mapped_bytes() + budget;
    REQUIRE(setrlimit(RLIMIT_AS, &tight) == 0);
    std::vector<Buffer> held;
    std::string failure;
    test::ExpectedMessages driver_report("VK_ERROR_OUT_OF_DEVICE_MEMORY");
    ErrorCode code = ErrorCode::invalid_argument;
    for (int i = 0; i < 64 && failure.empty(); ++i) {  // 64 x 64 MiB = 4 GiB: well past the budget
      try {
        held.push_back(e.create_buffer(chunk, "exhaustion test"));
      } catch (const Error& err) {
        failure = err.what();
        code = err.code();
      }
    }
    const size_t allocated = held.size();
    held.clear();
    REQUIRE(setrlimit(RLIMIT_AS, &old) == 0);
    INFO("created ", allocated, " buffers of 64 MiB before: ", failure);
    CHECK(!failure.empty());
    CHECK(code == ErrorCode::out_of_memory);
    CHECK(contains(failure, e.device().name));
    CHECK(allocated >= 1);
    CHECK(allocated <= budget / chunk);
    // Mesa's own report of each failure it returned, nothing more: the allocation's, and its second try's where
    // the engine's pool of freed buffers held some (buffer_pool.hpp: released, then tried once more).
    CHECK(driver_report.seen() <= 2);
    MESSAGE("exhausted after ", allocated, " x 64 MiB: ", failure);
    check_still_usable("memory exhaustion");
  }
}
