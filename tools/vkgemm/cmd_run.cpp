// vkgemm run: one product of random or .npy inputs, timed, and checked with --verify.
#include <limits>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "commands.hpp"
#include "npy.hpp"
#include "random_fill.hpp"
#include "vkgemm/vkgemm.hpp"

namespace vkgemm::cli {
namespace {

struct RunOptions {
  std::optional<int64_t> m, n, k;
  std::string type = "f32";
  std::string out_type;  // empty: f32 for f16 inputs, else the input type
  bool f16_accumulate = false;
  std::string kernel = "tiled";
  int64_t tile = 16;
  int64_t repeat = 10;
  int64_t warmup = 2;
  std::optional<uint64_t> seed;
  bool verify = false;
  std::string a_path, b_path, out_path;
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

int run_product(const RunOptions& o, const CommonOptions& common) {
  GemmOptions options;
  const auto kernel = parse_kernel(o.kernel);
  if (!kernel) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("--kernel {} is unknown (naive, tiled, coopmat, coopmat2)", o.kernel));
  }
  options.kernel = *kernel;
  options.tile = count("--tile", o.tile, 1, 1024);
  options.repeat = count("--repeat", o.repeat, 1, 100000);
  options.warmup = count("--warmup", o.warmup, 0, 100000);
  options.f16_accumulate = o.f16_accumulate;

  DataType type;
  uint32_t m, n, k;
  std::vector<std::byte> a, b;
  const uint64_t seed = o.seed.value_or(fresh_seed());
  const bool from_files = !o.a_path.empty() || !o.b_path.empty();
  if (from_files) {
    if (o.a_path.empty() || o.b_path.empty()) throw Error(ErrorCode::invalid_argument, "--a and --b go together");
    if (o.m || o.n || o.k) throw Error(ErrorCode::invalid_argument, "--m/--n/--k cannot be combined with --a/--b");
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
  } else {
    const auto t = parse_data_type(o.type);
    if (!t) throw Error(ErrorCode::invalid_argument, fmt::format("--type {} is unknown (f32, i32, f64, f16)", o.type));
    type = *t;
    m = dimension("--m", o.m), n = dimension("--n", o.n), k = dimension("--k", o.k);
  }

  DataType out_type = default_output_type(type);
  if (o.f16_accumulate) out_type = DataType::f16;  // fp16 sums give an fp16 result
  if (!o.out_type.empty()) {
    const auto t = parse_data_type(o.out_type);
    if (!t) throw Error(ErrorCode::invalid_argument, fmt::format("--out-type {} is unknown (f32, f16)", o.out_type));
    out_type = *t;
  }

  Engine engine = open_engine(common);
  engine.check_supported(type, out_type, options);  // before spending time on inputs
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
  fmt::print("product:  {} {}x{}x{} (m x n x k), kernel {}", to_string(type), m, n, k, to_string(options.kernel));
  if (options.kernel != Kernel::naive) fmt::print(" tile {}", options.tile);
  if (out_type != type || type == DataType::f16) fmt::print(", C {}", to_string(out_type));
  if (options.f16_accumulate) fmt::print(", f16 accumulation");
  if (from_files) {
    fmt::print(", inputs {} and {}\n", o.a_path, o.b_path);
  } else {
    fmt::print(", random inputs, seed {}\n", seed);
  }
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
  if (o.verify) {
    const Comparison cmp =
        compare_with_reference(type, out_type, m, n, k, a.data(), b.data(), c.data(), options.f16_accumulate);
    fmt::print("verify:   {} ({})\n", cmp.passed ? "passed" : "FAILED", cmp.summary());
    if (!cmp.passed) code = 1;
  }
  if (!o.out_path.empty()) {
    npy::write(o.out_path, out_type, m, n, c.data());
    fmt::print("wrote:    {}\n", o.out_path);
  }
  return finish(engine, code);
}

}  // namespace

std::function<int()> add_run_command(CLI::App& app, CommonOptions& common) {
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
  cmd->add_option("--kernel", o->kernel, "Kernel: naive, tiled, coopmat, coopmat2 (the last two f16 only)")
      ->capture_default_str();
  cmd->add_option("--tile", o->tile,
                  "Tile side (tiled) or workgroup side (naive); coopmat: 64 or 128, coopmat2: 64, 128 or 256, "
                  "16 meaning chosen by shape")
      ->capture_default_str();
  cmd->add_option("--repeat", o->repeat, "Timed dispatches; the median is reported")->capture_default_str();
  cmd->add_option("--warmup", o->warmup, "Untimed dispatches first")->capture_default_str();
  cmd->add_option("--seed", o->seed, "Seed for the random inputs (default: fresh, printed)");
  cmd->add_flag("--verify", o->verify, "Check against the CPU reference; exit 1 when it fails");
  cmd->add_option("--a", o->a_path, "A from a .npy file (2-D, C order, float32/float64/int32/float16)");
  cmd->add_option("--b", o->b_path, "B from a .npy file, same dtype as A");
  cmd->add_option("--out", o->out_path, "Write C to this .npy file");
  cmd->add_option("--device", common.device, "Device index or name substring (default: VKGEMM_DEVICE, then the best)");
  cmd->add_flag("--validate", common.validation, "Run under VK_LAYER_KHRONOS_validation; any message fails");
  return [o, &common] { return run_product(*o, common); };
}

}  // namespace vkgemm::cli
