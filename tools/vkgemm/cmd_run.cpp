// vkgemm run: one product of random or .npy inputs, timed, and checked with --verify.
#include <limits>
#include <optional>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "npy.hpp"
#include "random_fill.hpp"
#include "vkgemm/vkgemm.hpp"

namespace vkgemm::cli {
namespace {

struct RunOptions {
  std::optional<int64_t> m, n, k;
  std::string type = "f32";
  std::string out_type;  // empty: f32 for f16 inputs (f16 with --f16-accumulate), else the input type
  bool f16_accumulate = false;
  std::string kernel = "auto";
  std::string config;
  std::optional<int64_t> tile;
  int64_t repeat = 10;
  int64_t warmup = 2;
  std::optional<uint64_t> seed;
  bool verify = false;
  std::string a_path, b_path, out_path, json_path;
};

uint32_t dimension(const char* name, const std::optional<int64_t>& v) {
  if (!v) throw Error(ErrorCode::invalid_argument, fmt::format("{} is required (or give --a and --b)", name));
  if (*v < 0 || *v > std::numeric_limits<uint32_t>::max()) {
    throw Error(ErrorCode::invalid_argument, fmt::format("{} must be between 0 and 2^32-1 (got {})", name, *v));
  }
  return static_cast<uint32_t>(*v);
}

uint32_t count(const char* name, int64_t v, int64_t lo, int64_t hi) {
  if (v < lo || v > hi) {
    throw Error(ErrorCode::invalid_argument, fmt::format("{} must be between {} and {} (got {})", name, lo, hi, v));
  }
  return static_cast<uint32_t>(v);
}

// Everything about the arguments that can be checked without files or a device.
struct RunPlan {
  GemmOptions options;
  bool from_files = false;
  DataType type = DataType::f32;  // random inputs only: files bring their own type and sizes
  uint32_t m = 0, n = 0, k = 0;
  std::optional<DataType> out_type;  // --out-type, when given
};

// The type of C: --out-type, else f16 for fp16 sums, else the input type's default.
DataType output_type(const RunPlan& plan, DataType input) {
  if (plan.out_type) return *plan.out_type;
  if (plan.options.f16_accumulate) return DataType::f16;
  return default_output_type(input);
}

RunPlan plan_run(const RunOptions& o) {
  RunPlan plan;
  GemmOptions& options = plan.options;
  const auto kernel = parse_kernel(o.kernel);
  if (!kernel) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("--kernel {} is unknown (naive, tiled, blocked, auto, coopmat, coopmat2)", o.kernel));
  }
  options.kernel = *kernel;
  if (!o.config.empty()) {
    if (options.kernel != Kernel::blocked) throw Error(ErrorCode::invalid_argument, "--config goes with --kernel blocked");
    options.blocked = parse_blocked_config(o.config);
  }
  if (o.tile) {
    if (options.kernel == Kernel::blocked || options.kernel == Kernel::automatic) {
      throw Error(ErrorCode::invalid_argument, "--tile goes with --kernel naive or tiled (or coopmat, coopmat2)");
    }
    options.tile = count("--tile", *o.tile, 1, 1024);
  }
  options.repeat = count("--repeat", o.repeat, 1, 100000);
  options.warmup = count("--warmup", o.warmup, 0, 100000);
  options.f16_accumulate = o.f16_accumulate;
  if (!o.out_type.empty()) {
    plan.out_type = parse_data_type(o.out_type);
    if (!plan.out_type) {
      throw Error(ErrorCode::invalid_argument, fmt::format("--out-type {} is unknown (f32, f16)", o.out_type));
    }
  }
  plan.from_files = !o.a_path.empty() || !o.b_path.empty();
  if (plan.from_files) {
    if (o.a_path.empty() || o.b_path.empty()) throw Error(ErrorCode::invalid_argument, "--a and --b go together");
    if (o.m || o.n || o.k) throw Error(ErrorCode::invalid_argument, "--m/--n/--k cannot be combined with --a/--b");
  } else {
    const auto t = parse_data_type(o.type);
    if (!t) throw Error(ErrorCode::invalid_argument, fmt::format("--type {} is unknown (f32, i32, f64, f16)", o.type));
    plan.type = *t;
    plan.m = dimension("--m", o.m), plan.n = dimension("--n", o.n), plan.k = dimension("--k", o.k);
  }
  return plan;
}

// Refuses a product whose matrices cannot all be resident on the device, before any host memory is spent
// on inputs (random inputs for --m 100000 --n 100000 --k 100000 would take 80 GB of host memory).
void check_fits_device(const DeviceInfo& dev, DataType type, DataType out_type, uint32_t m, uint32_t n, uint32_t k) {
  const long double es = static_cast<long double>(element_size(type));
  const long double c_es = static_cast<long double>(element_size(out_type));
  const long double sizes[3] = {es * m * k, es * k * n, c_es * m * n};
  const char* names[3] = {"A", "B", "C"};
  for (int i = 0; i < 3; ++i) {
    if (dev.max_allocation_size && sizes[i] > static_cast<long double>(dev.max_allocation_size)) {
      throw Error(ErrorCode::too_large, fmt::format("{} takes {:.0f} bytes; {} allocates at most {} (maxMemoryAllocationSize)",
                                                    names[i], sizes[i], dev.name, dev.max_allocation_size));
    }
  }
  const long double total = sizes[0] + sizes[1] + sizes[2];
  if (dev.device_local_memory && total > static_cast<long double>(dev.device_local_memory)) {
    throw Error(ErrorCode::too_large, fmt::format("A, B and C take {:.0f} bytes; {} has {} bytes of device memory",
                                                  total, dev.name, dev.device_local_memory));
  }
}

int run_product(const RunOptions& o, const CommonOptions& common) {
  const RunPlan plan = plan_run(o);
  const GemmOptions& options = plan.options;
  DataType type = plan.type;
  uint32_t m = plan.m, n = plan.n, k = plan.k;
  std::vector<std::byte> a, b;
  const uint64_t seed = o.seed.value_or(fresh_seed());
  const bool from_files = plan.from_files;
  if (from_files) {
    npy::Array fa = npy::read(o.a_path), fb = npy::read(o.b_path);
    if (fa.type != fb.type) {
      throw Error(ErrorCode::invalid_argument, fmt::format("{} holds {} but {} holds {}; both must have one dtype",
                                                           o.a_path, to_string(fa.type), o.b_path, to_string(fb.type)));
    }
    if (fa.cols != fb.rows) {
      throw Error(ErrorCode::dimension_mismatch,
                  fmt::format("inner dimensions differ: {} is {}x{}, {} is {}x{}", o.a_path, fa.rows, fa.cols,
                              o.b_path, fb.rows, fb.cols));
    }
    type = fa.type;
    m = fa.rows, n = fb.cols, k = fa.cols;
    a = std::move(fa.data), b = std::move(fb.data);
  }

  const DataType out_type = output_type(plan, type);
  Engine engine = open_engine(common);
  engine.check_supported(type, out_type, options);  // before spending time or memory on inputs
  check_fits_device(engine.device(), type, out_type, m, n, k);
  if (!from_files) {
    std::mt19937_64 rng(seed);
    const double lo = type == DataType::i32 ? -8 : -1, hi = type == DataType::i32 ? 9 : 1;
    a = random_matrix(type, uint64_t{m} * k, lo, hi, rng);
    b = random_matrix(type, uint64_t{k} * n, lo, hi, rng);
  }
  std::vector<std::byte> c(uint64_t{m} * n * element_size(out_type));
  const GemmTiming t = engine.gemm(type, out_type, m, n, k, a.data(), b.data(), c.data(), options);

  const auto& dev = engine.device();
  fmt::print("device:   {} ({})\n", dev.name, dev.driver_name);
  fmt::print("product:  {} {}x{}x{} (m x n x k)", to_string(type), m, n, k);
  if (out_type != type || type == DataType::f16) fmt::print(", C {}", to_string(out_type));
  if (options.f16_accumulate) fmt::print(", f16 accumulation");
  if (from_files) {
    fmt::print(", inputs {} and {}\n", o.a_path, o.b_path);
  } else {
    fmt::print(", random inputs, seed {}\n", seed);
  }
  if (m && n && k) fmt::print("kernel:   {} {}\n", to_string(t.kernel), t.config);
  const double ops = 2.0 * m * n * k;
  const char* unit = type == DataType::i32 ? "GOP/s" : "GFLOP/s";
  if (m && n && k) {
    if (t.gpu_timestamps) {
      const double ms = t.median_gpu_ms();
      fmt::print("gpu time: {:.4f} ms (median of {}, after {} warm-up), {:.2f} {}\n", ms, options.repeat,
                 options.warmup, ops / ms * 1e-6, unit);
    } else {
      fmt::print("gpu time: unavailable (the device has no timestamps); host submit-to-fence {:.4f} ms for {} runs\n",
                 t.submit_wait_ms, options.repeat + options.warmup);
    }
    fmt::print("host:     upload {:.3f} ms, download {:.3f} ms\n", t.upload_ms, t.download_ms);
  } else {
    fmt::print("gpu time: nothing dispatched (an empty product)\n");
  }
  int code = 0;
  nlohmann::json record = {{"device", dev.name},       {"driver", dev.driver_version},
                           {"type", to_string(type)},  {"out_type", to_string(out_type)}, {"m", m},
                           {"n", n},                   {"k", k},
                           {"kernel", to_string(t.kernel)}, {"config", t.config},
                           {"repeat", options.repeat}, {"gpu_ms", t.gpu_ms},
                           {"verified", nullptr}};
  if (!t.gpu_ms.empty()) {
    record["median_ms"] = t.median_gpu_ms();
    record["gflops"] = ops / t.median_gpu_ms() * 1e-6;
  }
  if (!from_files) record["seed"] = seed;
  if (o.verify) {
    const Comparison cmp =
        compare_with_reference(type, out_type, m, n, k, a.data(), b.data(), c.data(), options.f16_accumulate);
    fmt::print("verify:   {} ({})\n", cmp.passed ? "passed" : "FAILED", cmp.summary());
    if (!cmp.passed) code = 1;
    record["verified"] = cmp.passed;
    record["normwise_error"] = cmp.normwise_error;
    record["error_bound"] = cmp.bound;
  }
  if (!o.json_path.empty()) {
    std::FILE* f = std::fopen(o.json_path.c_str(), "w");
    if (!f) throw Error(ErrorCode::io_error, fmt::format("{}: cannot open for writing", o.json_path));
    fmt::print(f, "{}\n", record.dump());
    std::fclose(f);
  }
  if (!o.out_path.empty()) {
    npy::write(o.out_path, out_type, m, n, c.data());
    fmt::print("wrote:    {}\n", o.out_path);
  }
  return finish(engine, code);
}

}  // namespace

Command add_run_command(CLI::App& app, CommonOptions& common) {
  auto* cmd = app.add_subcommand("run", "Multiply once (random inputs or .npy files), time it, optionally verify");
  auto o = std::make_shared<RunOptions>();
  cmd->add_option("--m", o->m, "Rows of A and C");
  cmd->add_option("--n", o->n, "Columns of B and C");
  cmd->add_option("--k", o->k, "Columns of A, rows of B");
  cmd->add_option("--type", o->type, "Element type of A and B: f32, i32, f64, f16 (random inputs)")
      ->capture_default_str();
  cmd->add_option("--out-type", o->out_type, "Element type of C: f16 inputs give f32 (the default) or f16");
  cmd->add_flag("--f16-accumulate", o->f16_accumulate,
                "f16 inputs: accumulate in fp16, C f16 (faster on some GPUs; overflows past 65504, less accurate)");
  cmd->add_option("--kernel", o->kernel,
                  "Kernel: naive, tiled, blocked (f32, f64), coopmat, coopmat2 (f16), auto (the best for the shape, "
                  "type and device)")
      ->capture_default_str();
  cmd->add_option("--tile", o->tile,
                  "Tile side (tiled) or workgroup side (naive), default 16; coopmat: 64 or 128, coopmat2: 64, 128 or "
                  "256 (default: chosen by shape)");
  cmd->add_option("--config", o->config,
                  "Blocked kernel configuration, e.g. \"128x128x8 8x8 lanes 8 split 1\" (default: from the tuning table)");
  cmd->add_option("--repeat", o->repeat, "Timed dispatches; the median is reported")->capture_default_str();
  cmd->add_option("--warmup", o->warmup, "Untimed dispatches first")->capture_default_str();
  cmd->add_option("--seed", o->seed, "Seed for the random inputs (default: fresh, printed)")
      ->check(CLI::NonNegativeNumber);  // "-1" would otherwise wrap to 2^64-1 silently
  cmd->add_flag("--verify", o->verify, "Check against the CPU reference; exit 1 when it fails");
  cmd->add_option("--a", o->a_path, "A from a .npy file (2-D, C order, float32/float64/int32/float16)");
  cmd->add_option("--b", o->b_path, "B from a .npy file, same dtype as A");
  cmd->add_option("--out", o->out_path, "Write C to this .npy file");
  cmd->add_option("--json", o->json_path, "Write the result (device, shape, kernel, times, check) as JSON");
  cmd->add_option("--device", common.device, "Device index or name substring (default: VKGEMM_DEVICE, then the best)");
  cmd->add_flag("--validate", common.validation, "Run under VK_LAYER_KHRONOS_validation; any message fails");
  return {[o] { (void)plan_run(*o); }, [o, &common] { return run_product(*o, common); }};
}

}  // namespace vkgemm::cli
