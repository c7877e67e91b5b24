// vkgemm demo: the classic naive-versus-tiled walkthrough, on the default device.
#include <chrono>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "commands.hpp"
#include "random_fill.hpp"
#include "vkgemm/vkgemm.hpp"

namespace vkgemm::cli {
namespace {

void print_matrix(const char* title, const std::vector<int32_t>& m, uint32_t rows, uint32_t cols) {
  fmt::print("{}\n", title);
  for (uint32_t r = 0; r < rows; ++r) {
    fmt::print("   ");
    for (uint32_t c = 0; c < cols; ++c) fmt::print(" {:5}", m[r * cols + c]);
    fmt::print("\n");
  }
}

// One integer product on the CPU and on the GPU, both printed; true when they agree.
bool integer_example(Engine& engine, const char* title, const std::vector<int32_t>& a, const std::vector<int32_t>& b,
                     uint32_t m, uint32_t n, uint32_t k, const GemmOptions& options) {
  fmt::print("{}\n", title);
  print_matrix("  A =", a, m, k);
  print_matrix("  B =", b, k, n);
  std::vector<int32_t> cpu(m * n), gpu(m * n, -1);
  reference_gemm(DataType::i32, m, n, k, a.data(), b.data(), cpu.data());
  engine.gemm(DataType::i32, m, n, k, a.data(), b.data(), gpu.data(), options);
  print_matrix("  CPU:", cpu, m, n);
  print_matrix(fmt::format("  GPU ({} kernel{}):", to_string(options.kernel),
                           options.kernel == Kernel::tiled ? fmt::format(", tile {}", options.tile) : "")
                   .c_str(),
               gpu, m, n);
  const bool same = cpu == gpu;
  fmt::print("  check: {}\n\n", same ? "GPU equals CPU" : "MISMATCH");
  return same;
}

// The random products' side: one the device finishes in seconds with every kernel, naive included.
uint32_t demo_size(const DeviceInfo& device) { return device.type == DeviceType::cpu ? 256 : 1024; }

// The n x n product of `a` and `b` (elements of `type`: f32 or f64) on the CPU reference, then naive, tiled
// and auto, each timed and checked; true when every check passes.
bool random_product(Engine& engine, DataType type, uint32_t n, const void* a, const void* b) {
  const uint64_t count = uint64_t{n} * n;
  const size_t bytes = count * element_size(type);
  std::vector<std::byte> cpu(bytes);
  const auto start = std::chrono::steady_clock::now();
  reference_gemm(type, n, n, n, a, b, cpu.data());
  const double cpu_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  const double flop = 2.0 * n * n * n;
  fmt::print("  {:<22} {:>10.3f} ms {:>9.2f} GFLOP/s\n", "CPU reference (double)", cpu_ms, flop / cpu_ms * 1e-6);
  bool ok = true;
  for (const GemmOptions& opt : {GemmOptions{.kernel = Kernel::naive, .repeat = 3, .warmup = 1},
                                 GemmOptions{.kernel = Kernel::tiled, .tile = 16, .repeat = 3, .warmup = 1},
                                 GemmOptions{.kernel = Kernel::automatic, .repeat = 3, .warmup = 1}}) {
    std::vector<std::byte> gpu(bytes);
    const GemmTiming t = engine.gemm(type, n, n, n, a, b, gpu.data(), opt);
    const Comparison cmp = compare_with_reference(type, n, n, n, a, b, gpu.data());
    const std::string label = opt.kernel == Kernel::tiled       ? fmt::format("GPU tiled (tile {})", opt.tile)
                              : opt.kernel == Kernel::automatic ? fmt::format("GPU auto ({})", to_string(t.kernel))
                                                                : std::string("GPU naive");
    if (t.gpu_timestamps) {
      const double ms = t.median_gpu_ms();
      fmt::print("  {:<22} {:>10.3f} ms {:>9.2f} GFLOP/s  check: {} ({})\n", label, ms, flop / ms * 1e-6,
                 cmp.passed ? "passed" : "FAILED", cmp.summary());
    } else {
      fmt::print("  {:<22} {:>10.3f} ms host (no GPU timestamps)  check: {} ({})\n", label, t.submit_wait_ms,
                 cmp.passed ? "passed" : "FAILED", cmp.summary());
    }
    ok = ok && cmp.passed;
  }
  return ok;
}

// float32 inputs widened to float64, element for element: the same product in both precisions.
std::vector<double> widened(const std::vector<std::byte>& f32) {
  std::vector<double> out(f32.size() / sizeof(float));
  for (size_t i = 0; i < out.size(); ++i) {
    float v;
    std::memcpy(&v, f32.data() + i * sizeof(float), sizeof v);
    out[i] = v;
  }
  return out;
}

int run_demo(const CommonOptions& common) {
  Engine engine = open_engine(common);
  const DeviceInfo& device = engine.device();
  fmt::print("device: {} ({}, {})\n", device.name, to_string(device.type), device.driver_name);
  if (device.type == DeviceType::cpu) {
    fmt::print("        a CPU driver: the \"GPU\" rows below run on this machine's CPU, through Vulkan\n");
  }
  fmt::print("\n");
  bool ok = integer_example(engine, "1. A 3x2 times 2x3 integer product, naive kernel", {1, 4, 2, 5, 3, 6},
                            {7, 8, 9, 10, 11, 12}, 3, 3, 2, {.kernel = Kernel::naive});
  const std::vector<int32_t> sq = {1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 7, 8};
  ok = integer_example(engine, "2. A 4x4 integer product, tiled kernel with 2x2 tiles", sq, sq, 4, 4, 4,
                       {.kernel = Kernel::tiled, .tile = 2}) && ok;

  const uint32_t n = demo_size(device);
  const uint64_t seed = fresh_seed();
  std::mt19937_64 rng(seed);
  const auto a = random_matrix(DataType::f32, uint64_t{n} * n, 0.0, 30.0, rng);
  const auto b = random_matrix(DataType::f32, uint64_t{n} * n, 0.0, 30.0, rng);
  fmt::print("3. A {0}x{0} float32 product of random inputs in [0, 30) (seed {1})\n", n, seed);
  ok = random_product(engine, DataType::f32, n, a.data(), b.data()) && ok;
  fmt::print("\n4. The same inputs as float64 (the same product in double precision)\n");
  if (const std::string_view lacks = missing_feature(device, DataType::f64); !lacks.empty()) {
    fmt::print("  skipped: {} lacks {}\n", device.name, lacks);
  } else {
    const std::vector<double> a64 = widened(a), b64 = widened(b);
    ok = random_product(engine, DataType::f64, n, a64.data(), b64.data()) && ok;
  }
  fmt::print("  GPU times: median of 3 timestamped dispatches after 1 warm-up; transfers not included.\n"
             "  auto: the kernel and configuration the engine picks for the shape, type and device (the fast one).\n");
  return finish(engine, ok ? 0 : 1);
}

}  // namespace

Command add_demo_command(CLI::App& /*cmd*/, CommonOptions& common) {
  return {.run = [&common] { return run_demo(common); }};
}

}  // namespace vkgemm::cli
