// The soak test: several threads, each with its own Engine (the documented contract: an Engine is used
// from one thread at a time), many products each of mixed sizes, types and kernels, every one checked
// against the CPU reference, validation on in every engine, and the process's resident memory steady
// between a warm-up phase and a three-times-longer main phase.
#include <doctest/doctest.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "support.hpp"
#include "sanitizer.hpp"

using namespace vkgemm;

namespace {

constexpr int kThreads = 4;
constexpr int kWarmupProducts = 20;     // per thread, after one product per pipeline: grows every reused buffer
constexpr int kMainProducts = 40;       // per thread, in each of the two main phases
constexpr double kMaxGrowthMiB = 16.0;  // what both main phases together may add to the resident set
constexpr double kMaxLateGrowthMiB = 8.0;  // what the second main phase may add: a leak keeps growing

// AddressSanitizer keeps freed memory in quarantine (256 MiB by default), so the resident set grows by
// design there; LeakSanitizer checks for leaks in that build instead.
constexpr bool kAddressSanitizer = test::kSanitized;  // tests/sanitizer.hpp

double resident_mib() {
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return 0.0;
  unsigned long long size = 0, resident = 0;
  const int got = std::fscanf(f, "%llu %llu", &size, &resident);
  std::fclose(f);
  return got == 2 ? static_cast<double>(resident) * 4096.0 / (1024.0 * 1024.0) : 0.0;
}

struct Worker {
  std::mt19937_64 rng;
  std::unique_ptr<Engine> engine;
  std::atomic<uint64_t> messages{0};
  int products = 0, failures = 0;
  std::string first_failure;

  // One product of random type, kernel and tile.
  void one_product() {
    const DataType type = all_data_types[rng() % std::size(all_data_types)];
    const Kernel kernel = simt_kernels[rng() % std::size(simt_kernels)];
    product(type, kernel, (rng() % 2) ? 8u : 16u);
  }

  // One product with each kernel, type and tile the device runs: every pipeline built before the memory
  // is measured (a random warm-up misses some; each costs the driver megabytes, GPU-AV more).
  // The skinny kernel's variants (kernels/gemv.cpp) follow the small side's block (1 to 16 in powers of
  // two), the orientation and whether K is short: one product of each.
  void every_pipeline() {
    for (const DataType type : all_data_types) {
      for (const Kernel kernel : simt_kernels)
        for (const uint32_t tile : {8u, 16u}) product(type, kernel, tile);
      for (const uint32_t small : {1u, 2u, 4u, 8u, 16u})
        for (const uint32_t k : {8u, 100u}) {
          product(type, Kernel::gemv, 8, {small, 64, k});
          product(type, Kernel::gemv, 8, {64, small, k});
        }
    }
  }

  struct Shape {
    uint32_t m, n, k;
  };
  Shape random_shape() {
    return {static_cast<uint32_t>(1 + rng() % 96), static_cast<uint32_t>(1 + rng() % 96),
            static_cast<uint32_t>(1 + rng() % 160)};
  }

  // One product of `shape` (random where not given); half through the host-memory call, half through device
  // buffers created and destroyed for it (so buffer churn is part of the soak). Nothing when the device
  // refuses it.
  void product(DataType type, Kernel kernel, uint32_t tile) { product(type, kernel, tile, random_shape()); }
  void product(DataType type, Kernel kernel, uint32_t tile, Shape shape) {
    const GemmOptions options{.kernel = kernel, .tile = tile};
    try {
      engine->check_supported(type, options);
    } catch (const Error&) {
      return;
    }
    const auto [m, n, k] = shape;
    const auto a = test::random_elements(type, size_t{m} * k, rng);
    const auto b = test::random_elements(type, size_t{k} * n, rng);
    const DataType out = default_output_type(type);  // f16 inputs: C f32
    std::vector<std::byte> c(size_t{m} * n * element_size(out), std::byte{0xff});  // 0xff..: NaN or -1
    if (rng() % 2) {
      engine->gemm(type, m, n, k, a.data(), b.data(), c.data(), options);
    } else {
      Buffer ab = engine->create_buffer(a.size()), bb = engine->create_buffer(b.size()),
             cb = engine->create_buffer(c.size());
      engine->write(ab, 0, a.data(), a.size());
      engine->write(bb, 0, b.data(), b.size());
      engine->write(cb, 0, c.data(), c.size());
      engine->gemm({&ab, 0, m, k, type}, {&bb, 0, k, n, type}, {&cb, 0, m, n, out}, options);
      engine->read(cb, 0, c.data(), c.size());
    }
    ++products;
    const Comparison cmp = compare_with_reference(type, m, n, k, a.data(), b.data(), c.data());
    if (!cmp.passed && failures++ == 0) {
      first_failure = std::string(to_string(type)) + " " + std::to_string(m) + "x" + std::to_string(n) + "x" +
                      std::to_string(k) + " " + std::string(to_string(kernel)) + ": " + cmp.summary();
    }
  }
};

// Each worker on its own thread: every pipeline first when `every_pipeline`, then `products` random ones.
void run_phase(std::vector<std::unique_ptr<Worker>>& workers, int products, bool every_pipeline = false) {
  std::vector<std::thread> threads;
  for (auto& w : workers) {
    threads.emplace_back([&w, products, every_pipeline] {
      const auto guarded = [&w](auto&& f) {
        try {
          f();
        } catch (const std::exception& e) {
          if (w->failures++ == 0) w->first_failure = e.what();
        }
      };
      if (every_pipeline) guarded([&w] { w->every_pipeline(); });
      for (int i = 0; i < products; ++i) guarded([&w] { w->one_product(); });
    });
  }
  for (auto& t : threads) t.join();
}

}  // namespace

TEST_SUITE("soak") {
  TEST_CASE("threads with an engine each: all products right, no validation message, memory steady") {
    std::vector<std::unique_ptr<Worker>> workers;
    for (int i = 0; i < kThreads; ++i) {
      auto w = std::make_unique<Worker>();
      w->rng = test::case_rng("soak thread " + std::to_string(i));
      Worker* raw = w.get();
      EngineOptions options;
      options.validation = true;
      options.on_validation_message = [raw](std::string_view message) {
        if (raw->messages.fetch_add(1) == 0) std::fprintf(stderr, "validation: %.*s\n",
                                                          static_cast<int>(message.size()), message.data());
      };
      w->engine = std::make_unique<Engine>(options);
      workers.push_back(std::move(w));
    }
    run_phase(workers, kWarmupProducts, true);
    const double rss_warm = resident_mib();
    run_phase(workers, kMainProducts);
    const double rss_mid = resident_mib();
    run_phase(workers, kMainProducts);
    const double rss_end = resident_mib();

    int products = 0;
    for (const auto& w : workers) {
      INFO(w->first_failure);
      CHECK(w->failures == 0);
      CHECK(w->messages.load() == 0);
      products += w->products;
    }
    MESSAGE(kThreads, " threads, ", products, " products checked; resident set ", rss_warm, " MiB after warm-up, ",
            rss_mid, " MiB after ", kThreads * kMainProducts, " more attempts, ", rss_end, " MiB after another ",
            kThreads * kMainProducts);
    CHECK(products >= kThreads * (kWarmupProducts + 2 * kMainProducts) / 2);
    if (!kAddressSanitizer) {
      CHECK(rss_end - rss_warm < kMaxGrowthMiB);
      CHECK(rss_end - rss_mid < kMaxLateGrowthMiB);
    }
  }
}
