// vkgemm run: one BLAS call (C = alpha op(A) op(B) + beta C, optionally batched) on random or .npy inputs,
// timed, and checked with --verify.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <variant>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench/bench_ceiling.hpp"
#include "build_commit.hpp"
#include "commands.hpp"
#include "names.hpp"
#include "npy.hpp"
#include "option_checks.hpp"
#include "random_fill.hpp"
#include "steady.hpp"
#include "vkgemm/files.hpp"
#include "vkgemm/vkgemm.hpp"

namespace vkgemm::cli {
namespace {

struct RunOptions {
  std::optional<int64_t> m, n, k;
  std::optional<DataType> type;      // absent: f32 (random inputs), the files' type (--a, --b)
  std::optional<DataType> out_type;  // absent: f32 for f16 inputs (f16 with --f16-accumulate), else the input type
  bool f16_accumulate = false;
  Kernel kernel = Kernel::automatic;
  Precision precision = Precision::native;
  std::optional<int64_t> moduli;  // --moduli: the ozaki kernel's
  std::optional<int64_t> tile;
  std::string config;
  int64_t repeat = 10;
  int64_t warmup = 2;
  double warmup_ms = -1.0;  // < 0: the device's default (steady.hpp)
  bool verify = false;
  double verify_max = 2048.0 * 2048.0 * 2048.0;  // --verify: the full reference up to this m*n*k (per entry)
  bool stats = false;
  bool roofline = false;  // --roofline: the device's ceilings measured first (as vkgemm peak), the fraction reached
  std::optional<int64_t> max_k;  // --max-k-per-submission
  bool trans_a = false, trans_b = false;
  double alpha = 1.0, beta = 0.0;
  Layout layout = Layout::row_major;
  std::optional<int64_t> batch;
  std::string a_path, b_path, c_path, out_path, json_path;
  // The fused epilogue (GemmDesc::epilogue): --bias, --bias-type, --act and its parameters.
  std::string bias = "none", act = "none";
  std::optional<DataType> bias_type;  // absent: f32
  double slope = 0.01;
  std::optional<double> clamp_lo, clamp_hi;  // --act clamp needs both
  // The dequantization of an int8 product into float C (--out-type f32 or f16): --scale, --tensor-scale.
  std::string scale = "none";
  std::optional<double> tensor_scale;
  bool from_files() const { return !a_path.empty() || !b_path.empty(); }
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

// Row-major (C order, as .npy holds them) matrices to the layout the call uses, and back: for
// column-major each rows x cols matrix of the batch is transposed in memory (its ld is then rows).
std::vector<std::byte> to_layout(const std::vector<std::byte>& in, uint64_t batch, uint64_t rows, uint64_t cols,
                                 uint64_t es, bool col_major, bool back = false) {
  if (!col_major) return in;
  std::vector<std::byte> out(in.size());
  for (uint64_t t = 0; t < batch; ++t)
    for (uint64_t r = 0; r < rows; ++r)
      for (uint64_t c = 0; c < cols; ++c) {
        const uint64_t row_major = t * rows * cols + r * cols + c, col = t * rows * cols + c * rows + r;
        std::memcpy(&out[(back ? row_major : col) * es], &in[(back ? col : row_major) * es], es);
      }
  return out;
}

struct Operand {
  DataType type = DataType::f32;
  std::vector<std::byte> data;  // row-major (C order), batch x rows x cols
  uint32_t batch = 1;
  bool batched = false;
  uint32_t rows = 0, cols = 0;
};

Operand from_file(const std::string& path) {
  npy::Array f = npy::read(path);
  return {f.type, std::move(f.data), f.batch, f.batched, f.rows, f.cols};
}

// The options that need neither files nor a device, checked once, before either is touched (the enum
// values were checked as they were parsed).
GemmOptions kernel_options(const RunOptions& o) {
  GemmOptions options;
  options.kernel = o.kernel;
  if (!o.config.empty()) {
    if (options.kernel != Kernel::blocked) throw Error(ErrorCode::invalid_argument, "--config goes with --kernel blocked");
    options.blocked = parse_blocked_config(o.config);
  }
  if (o.tile) {
    if (options.kernel == Kernel::blocked || options.kernel == Kernel::automatic) {
      throw Error(ErrorCode::invalid_argument, "--tile goes with --kernel naive or tiled (or coopmat, coopmat2)");
    }
    options.tile = count("--tile", *o.tile, 1, kMaxTile);
  }
  options.f16_accumulate = o.f16_accumulate;
  options.precision = o.precision;
  if (o.moduli) options.emulation_moduli = count("--moduli", *o.moduli, 2, 20);
  if (o.max_k) options.max_k_per_submission = count("--max-k-per-submission", *o.max_k, 1, 0xffffffffLL);
  count("--repeat", o.repeat, 1, 100000);
  count("--warmup", o.warmup, 0, 100000);
  if (o.a_path.empty() != o.b_path.empty()) throw Error(ErrorCode::invalid_argument, "--a and --b go together");
  if (o.from_files() && (o.m || o.n || o.k || o.batch)) {
    throw Error(ErrorCode::invalid_argument, "--m/--n/--k/--batch cannot be combined with --a/--b (the files say)");
  }
  if (!o.from_files()) dimension("--m", o.m), dimension("--n", o.n), dimension("--k", o.k);
  return options;
}

// The type of C: --out-type, else f16 for fp16 sums, else the input type's default.
DataType output_type(const RunOptions& o, DataType input) {
  if (o.out_type) return *o.out_type;
  if (o.f16_accumulate) return DataType::f16;
  return default_output_type(input);
}

// The driver's statistics of the pipelines that ran, one line per statistic, grouped by pass and executable.
void print_statistics(const PipelineReport& report) {
  if (report.statistics.empty()) fmt::print("pipeline: no statistics (nothing was dispatched)\n");
  std::string group;
  for (const auto& s : report.statistics) {
    const std::string here = fmt::format("{} pass, {}, {} (subgroup {})", s.pass, s.shader, s.executable, s.subgroup_size);
    if (here != group) fmt::print("pipeline: {}\n", group = here);
    fmt::print("  {:<32} {:>12}   {}\n", s.name, s.value_string(), s.description);
  }
}

nlohmann::json statistics_json(const PipelineReport& report) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& s : report.statistics) {
    nlohmann::json value;
    std::visit([&](auto v) { value = v; }, s.value);
    out.push_back({{"pass", s.pass}, {"shader", s.shader}, {"executable", s.executable},
                   {"subgroup_size", s.subgroup_size}, {"name", s.name}, {"description", s.description},
                   {"value", value}});
  }
  return out;
}

// The product as the command line and the files describe it, with its operands as .npy holds them.
struct Problem {
  GemmDesc d;
  Operand a, b, c;
  bool have_c = false;  // C came from --c
  bool from_files = false;
  uint64_t seed = 0;
  bool batched_out() const { return a.batched || b.batched; }
};

// --type bf16 with float32 files: A and B rounded to bf16 (nearest even), and said. No other conversion.
void convert_inputs(const RunOptions& o, Problem& p) {
  if (*o.type != DataType::bf16 || p.a.type != DataType::f32) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("--type {}: {} and {} hold {}; files are multiplied as they are, except float32 ones, "
                            "which --type bf16 rounds to bf16", to_string(*o.type), o.a_path, o.b_path,
                            to_string(p.a.type)));
  }
  for (Operand* x : {&p.a, &p.b}) {
    const uint64_t count = x->data.size() / 4;
    std::vector<std::byte> out(count * 2);
    for (uint64_t i = 0; i < count; ++i) {
      float f;
      std::memcpy(&f, &x->data[i * 4], 4);
      const uint16_t h = float_to_bfloat16(f);
      std::memcpy(&out[i * 2], &h, 2);
    }
    x->data = std::move(out);
    x->type = DataType::bf16;
  }
  p.d.type = DataType::bf16;
  fmt::print("inputs: float32 from {} and {}, rounded to bf16 (round to nearest even)\n", o.a_path, o.b_path);
}

// A and B from --a and --b: the files give the type, the shape and the batch.
void describe_from_files(const RunOptions& o, Problem& p) {
  GemmDesc& d = p.d;
  p.a = from_file(o.a_path), p.b = from_file(o.b_path);
  const Operand &a = p.a, &b = p.b;
  if (a.type != b.type) {
    throw Error(ErrorCode::invalid_argument, fmt::format("{} holds {} but {} holds {}; both must have one dtype",
                                                         o.a_path, to_string(a.type), o.b_path, to_string(b.type)));
  }
  d.type = a.type;
  if (o.type && *o.type != a.type) convert_inputs(o, p);
  // op(A) is m x k and op(B) k x n: the files hold A and B as stored (transposed when --trans-*).
  d.m = o.trans_a ? a.cols : a.rows, d.k = o.trans_a ? a.rows : a.cols;
  const int64_t kb = o.trans_b ? b.cols : b.rows;
  d.n = o.trans_b ? b.rows : b.cols;
  if (d.k != kb) {
    throw Error(ErrorCode::dimension_mismatch,
                fmt::format("inner dimensions differ: op(A) from {} is {}x{}, op(B) from {} is {}x{}", o.a_path, d.m,
                            d.k, o.b_path, kb, d.n));
  }
  // A 3-D file gives the batch; a 2-D operand beside a batch is broadcast (stride 0).
  if (a.batched && b.batched && a.batch != b.batch) {
    throw Error(ErrorCode::dimension_mismatch,
                fmt::format("{} holds a batch of {} but {} a batch of {}", o.a_path, a.batch, o.b_path, b.batch));
  }
  d.batch = a.batched ? a.batch : b.batched ? b.batch : 1;
}

// Random A and B: --type, --m, --n, --k and --batch give them (the data is drawn later, on the device's go).
void describe_random(const RunOptions& o, Problem& p) {
  GemmDesc& d = p.d;
  d.type = o.type.value_or(DataType::f32);
  d.m = dimension("--m", o.m), d.n = dimension("--n", o.n), d.k = dimension("--k", o.k);
  d.batch = o.batch ? count("--batch", *o.batch, 0, 65535) : 1;
  p.a.batch = p.b.batch = static_cast<uint32_t>(d.batch);
  p.a.batched = p.b.batched = o.batch.has_value();
  p.a.rows = static_cast<uint32_t>(o.trans_a ? d.k : d.m), p.a.cols = static_cast<uint32_t>(o.trans_a ? d.m : d.k);
  p.b.rows = static_cast<uint32_t>(o.trans_b ? d.n : d.k), p.b.cols = static_cast<uint32_t>(o.trans_b ? d.k : d.n);
}

// The input C from --c, which must match the product; without it, beta != 0 on files is an error.
void read_input_c(const RunOptions& o, Problem& p) {
  const GemmDesc& d = p.d;
  if (o.c_path.empty()) {
    if (d.beta != 0.0 && p.from_files) {
      throw Error(ErrorCode::invalid_argument, fmt::format("--beta {} reads C: give it with --c", d.beta));
    }
    return;
  }
  p.c = from_file(o.c_path);
  if (p.c.rows != d.m || p.c.cols != d.n || p.c.batch != d.batch) {
    throw Error(ErrorCode::dimension_mismatch, fmt::format("{} is {}x{}x{}; C must be {}x{}x{} (batch x m x n)",
                                                           o.c_path, p.c.batch, p.c.rows, p.c.cols, d.batch, d.m, d.n));
  }
  if (p.c.type != *d.c_type) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("{} holds {}; C must be {} (the type of the result)", o.c_path, to_string(p.c.type),
                            to_string(*d.c_type)));
  }
  p.have_c = true;
}

// --bias, --bias-type, --act and its parameters as the call's epilogue (checked with the call, check_gemm).
Epilogue epilogue_of(const RunOptions& o) {
  Epilogue e;
  if (o.bias != "none" && o.bias != "row" && o.bias != "col") {
    throw Error(ErrorCode::invalid_argument, fmt::format("--bias {}: none, row (one value per row of C, m of them) "
                                                         "or col (one per column, n)", o.bias));
  }
  e.bias = o.bias == "col" ? BiasAxis::per_column : o.bias == "row" ? BiasAxis::per_row : BiasAxis::none;
  if (o.bias_type) {
    if (e.bias == BiasAxis::none) throw Error(ErrorCode::invalid_argument, "--bias-type goes with --bias row or col");
    e.bias_type = *o.bias_type;
  }
  const std::optional<Activation> act = parse_activation(o.act);
  if (!act) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("--act {} is unknown ({})", o.act, joined_names(activation_table())));
  }
  e.activation = *act;
  e.slope = o.slope, e.lo = o.clamp_lo, e.hi = o.clamp_hi;
  if (e.activation == Activation::clamp && (!o.clamp_lo || !o.clamp_hi)) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("--act clamp needs both bounds, --clamp-lo and --clamp-hi; {} missing",
                            !o.clamp_lo && !o.clamp_hi ? "both are" : !o.clamp_lo ? "--clamp-lo is" : "--clamp-hi is"));
  }
  if (o.scale != "none" && o.scale != "tensor" && o.scale != "col") {
    throw Error(ErrorCode::invalid_argument, fmt::format("--scale {}: none, tensor (--tensor-scale alone) or col (a "
                                                         "random scale per column of C, times --tensor-scale)", o.scale));
  }
  e.scale = o.scale == "col" ? ScaleAxis::per_column : o.scale == "tensor" ? ScaleAxis::per_tensor : ScaleAxis::none;
  if (o.tensor_scale) {
    if (e.scale == ScaleAxis::none) throw Error(ErrorCode::invalid_argument, "--tensor-scale goes with --scale tensor or col");
    e.tensor_scale = *o.tensor_scale;
  }
  return e;
}

// Everything about the product that needs no device; the argument errors come out here.
Problem describe(const RunOptions& o, uint64_t seed) {
  Problem p;
  GemmDesc& d = p.d;
  d.layout = o.layout;
  d.op_a = o.trans_a ? Op::t : Op::n;
  d.op_b = o.trans_b ? Op::t : Op::n;
  d.alpha = o.alpha, d.beta = o.beta;
  d.epilogue = epilogue_of(o);
  p.seed = seed;
  p.from_files = o.from_files();
  if (p.from_files) {
    describe_from_files(o, p);
  } else {
    describe_random(o, p);
  }
  d.c_type = output_type(o, d.type);
  read_input_c(o, p);
  p.c.batch = static_cast<uint32_t>(d.batch), p.c.rows = static_cast<uint32_t>(d.m), p.c.cols = static_cast<uint32_t>(d.n);
  if (!p.a.batched) d.stride_a = 0;
  if (!p.b.batched) d.stride_b = 0;
  check_gemm(d);  // argument errors before the device opens
  return p;
}

// A, B and the input C in the layout the call uses; random ones drawn from the seed.
struct Inputs {
  std::vector<std::byte> a, b, c0;
  std::vector<std::byte> bias;  // the epilogue's, where it has one (drawn after the others: their seeds stay)
  const void* bias_data() const { return bias.empty() ? nullptr : bias.data(); }
};

Inputs make_inputs(Problem& p) {
  const GemmDesc& d = p.d;
  const uint64_t es = element_size(d.type), c_es = element_size(*d.c_type);
  const auto [lo, hi] = random_range(d.type);
  std::mt19937_64 rng(p.seed);
  if (!p.from_files) {
    p.a.data = random_matrix(d.type, uint64_t{p.a.batch} * p.a.rows * p.a.cols, lo, hi, rng);
    p.b.data = random_matrix(d.type, uint64_t{p.b.batch} * p.b.rows * p.b.cols, lo, hi, rng);
  }
  const uint64_t c_count = uint64_t{p.c.batch} * p.c.rows * p.c.cols;
  if (!p.have_c) {
    p.c.data = d.beta != 0.0 ? random_matrix(*d.c_type, c_count, lo, hi, rng) : std::vector<std::byte>(c_count * c_es);
  }
  const bool col = d.layout == Layout::col_major;
  // The epilogue's vectors: --scale col's per-column scales (1/128 to 1/8, as a quantized layer's), then the bias.
  std::vector<std::byte> bias;
  if (d.epilogue.scale == ScaleAxis::per_column) bias = random_matrix(DataType::f32, uint64_t(d.n), 1.0 / 128, 1.0 / 8, rng);
  if (d.epilogue.bias != BiasAxis::none) {
    const auto [blo, bhi] = random_range(d.epilogue.bias_type);
    const auto b = random_matrix(d.epilogue.bias_type, uint64_t(bias_length(d)), blo, bhi, rng);
    bias.insert(bias.end(), b.begin(), b.end());
  }
  return {to_layout(p.a.data, p.a.batched ? p.a.batch : 1, p.a.rows, p.a.cols, es, col),
          to_layout(p.b.data, p.b.batched ? p.b.batch : 1, p.b.rows, p.b.cols, es, col),
          to_layout(p.c.data, p.c.batch, p.c.rows, p.c.cols, c_es, col), std::move(bias)};
}

// C before a product that does not read it (beta = 0): NaN for the float types, INT32_MIN (which these
// inputs cannot produce) for i32, so that an element the kernel does not write fails --verify.
std::vector<std::byte> poisoned(DataType type, size_t bytes) {
  std::vector<std::byte> out(bytes, std::byte{0xff});  // all ones: NaN in f16, f32 and f64
  if (type == DataType::i32) {
    const int32_t sentinel = std::numeric_limits<int32_t>::min();
    for (size_t i = 0; i + sizeof sentinel <= bytes; i += sizeof sentinel) std::memcpy(&out[i], &sentinel, sizeof sentinel);
  }
  return out;
}

// What the timed calls measured, and C after them.
struct Measured {
  GemmTiming t;
  uint32_t repeat = 0;     // timed products
  double busy_ms = 0.0;    // GPU time of the time-based warm-up
  uint32_t warmed_up = 0;  // untimed products in the timed submission
  std::vector<std::byte> c;
};

// The shared warm-up (steady.hpp: by device time, none by default on a CPU device) on `c`, for a series only
// (--repeat > 1: one timed run is a check, not a measurement). It runs the product with beta = 0 (C not read):
// with beta != 0 repeats in one call would update C in place, which the engine refuses.
WarmUp warm_by_time(Engine& engine, GemmDesc d, const Inputs& in, GemmOptions probe, std::vector<std::byte>& c,
                    uint32_t repeat, double warmup_ms) {
  d.beta = 0.0;
  return warm_up(repeat == 1 ? 0.0 : default_warmup_ms(engine.device(), warmup_ms), [&](uint32_t n) {
    probe.repeat = n, probe.warmup = 0;
    const GemmTiming t = engine.gemm(d, in.a.data(), in.b.data(), c.data(), probe, in.bias_data());
    double ms = 0.0;
    for (const double x : t.gpu_ms) ms += x;
    return t.gpu_timestamps ? ms : -1.0;
  });
}

// With beta != 0 each dispatch updates C in place: after the warm-up by time, every timed run starts again from
// C0 (the host call uploads it each time), one dispatch per call.
Measured time_in_place(Engine& engine, const GemmDesc& d, const Inputs& in, const GemmOptions& options,
                       uint32_t repeat, uint32_t warmup, double warmup_ms) {
  Measured out;
  out.c = in.c0;
  out.busy_ms = warm_by_time(engine, d, in, options, out.c, repeat, warmup_ms).busy_ms;
  out.repeat = repeat, out.warmed_up = warmup;
  for (uint32_t r = 0; r < warmup + repeat; ++r) {
    out.c = in.c0;
    const GemmTiming one = engine.gemm(d, in.a.data(), in.b.data(), out.c.data(), options, in.bias_data());
    out.t.gpu_timestamps = one.gpu_timestamps;
    out.t.kernel = one.kernel, out.t.config = one.config;
    if (r >= warmup) {
      out.t.gpu_ms.insert(out.t.gpu_ms.end(), one.gpu_ms.begin(), one.gpu_ms.end());
      out.t.submit_wait_ms += one.submit_wait_ms, out.t.upload_ms += one.upload_ms, out.t.download_ms += one.download_ms;
    }
  }
  return out;
}

// A series: the warm-up's last batch again inside the timed submission, just before the timed products, with no
// upload pause between. C is poisoned before the timed submission.
Measured time_series(Engine& engine, const GemmDesc& d, const Inputs& in, GemmOptions options, uint32_t repeat,
                     uint32_t warmup, double warmup_ms) {
  Measured out;
  out.repeat = repeat;
  out.c = in.c0;
  const WarmUp w = warm_by_time(engine, d, in, options, out.c, repeat, warmup_ms);
  out.busy_ms = w.busy_ms;
  out.warmed_up = std::min(warmup + w.last_batch, 100000u);
  options.repeat = repeat, options.warmup = out.warmed_up;
  out.c = poisoned(*d.c_type, out.c.size());
  out.t = engine.gemm(d, in.a.data(), in.b.data(), out.c.data(), options, in.bias_data());
  return out;
}

// Operations of the product: 2 m n k per matrix of the batch (a multiply and an add).
double operations(const GemmDesc& d) { return 2.0 * double(d.m) * double(d.n) * double(d.k) * double(d.batch); }

// The lines that say what ran and how fast.
void print_summary(const RunOptions& o, const Problem& p, const DeviceInfo& dev, const GemmOptions& options,
                   const Measured& r) {
  const GemmDesc& d = p.d;
  fmt::print("device:   {} ({})\n", dev.name, dev.driver_name);
  fmt::print("product:  {} {}x{}x{} (m x n x k)", to_string(d.type), d.m, d.n, d.k);
  if (*d.c_type != d.type || d.type == DataType::f16) fmt::print(", C {}", to_string(*d.c_type));
  if (options.f16_accumulate) fmt::print(", f16 accumulation");
  fmt::print(", {}\n", p.from_files ? fmt::format("inputs {} and {}", o.a_path, o.b_path)
                                    : fmt::format("random inputs, seed {}", p.seed));
  fmt::print("blas:     C = {} op(A) op(B) + {} C, op(A) = {}, op(B) = {}, {}-major, batch {}{}{}\n", d.alpha, d.beta,
             o.trans_a ? "A^T" : "A", o.trans_b ? "B^T" : "B", d.layout == Layout::col_major ? "column" : "row",
             d.batch, p.a.batched ? "" : (d.batch > 1 ? ", A broadcast" : ""),
             p.b.batched ? "" : (d.batch > 1 ? ", B broadcast" : ""));
  if (d.epilogue.active()) {
    const Epilogue& e = d.epilogue;
    const std::string scale = e.scale == ScaleAxis::none       ? ""
                              : e.scale == ScaleAxis::per_tensor ? fmt::format("{} * ", e.tensor_scale)
                                                                 : fmt::format("{} * scale[col] * ", e.tensor_scale);
    fmt::print("epilogue: C = {}({}... + bias {}{})\n", to_string(e.activation), scale,
               e.bias == BiasAxis::none ? "none" : e.bias == BiasAxis::per_row ? "per row" : "per column",
               e.bias == BiasAxis::none ? "" : fmt::format(" {}", to_string(e.bias_type)));
  }
  if (!d.m || !d.n || !d.batch) {
    fmt::print("gpu time: nothing dispatched (an empty product)\n");
    return;
  }
  fmt::print("kernel:   {} {}\n", to_string(r.t.kernel), r.t.config);
  if (r.t.gpu_timestamps) {
    const double ms = r.t.median_gpu_ms();
    fmt::print("gpu time: {:.4f} ms (median of {}, after {} warm-up and {:.0f} ms of warm-up before), {:.2f} {}\n", ms,
               r.repeat, r.warmed_up, r.busy_ms, operations(d) / ms * 1e-6,
               is_integer(d.type) ? "GOP/s" : "GFLOP/s");
  } else {
    fmt::print("gpu time: unavailable (the device has no timestamps); host submit-to-fence {:.4f} ms\n",
               r.t.submit_wait_ms);
  }
  fmt::print("host:     upload {:.3f} ms, download {:.3f} ms\n", r.t.upload_ms, r.t.download_ms);
}

// The --json record; build_commit is the binary's own (cmake/build_commit.cmake), never typed.
nlohmann::json result_record(const Problem& p, const DeviceInfo& dev, const Measured& r, uint32_t repeat) {
  const GemmDesc& d = p.d;
  nlohmann::json record = {{"vkgemm_version", version}, {"build_commit", build_commit},
                           {"device", dev.name}, {"driver", dev.driver_version}, {"type", to_string(d.type)},
                           {"out_type", to_string(*d.c_type)}, {"m", d.m}, {"n", d.n}, {"k", d.k}, {"batch", d.batch},
                           {"kernel", to_string(r.t.kernel)}, {"config", r.t.config}, {"repeat", repeat},
                           {"gpu_ms", r.t.gpu_ms}, {"warmup_busy_ms", r.busy_ms},
                           {"untimed_in_submission", r.warmed_up}, {"verified", nullptr}};
  if (!r.t.gpu_ms.empty()) {
    record["median_ms"] = r.t.median_gpu_ms();
    record["gflops"] = operations(d) / r.t.median_gpu_ms() * 1e-6;
  }
  if (!p.from_files) record["seed"] = p.seed;
  if (d.epilogue.active()) {
    record["activation"] = to_string(d.epilogue.activation);
    record["bias"] = d.epilogue.bias == BiasAxis::none ? "none" : d.epilogue.bias == BiasAxis::per_row ? "row" : "col";
    if (d.epilogue.scale != ScaleAxis::none) {
      record["scale"] = d.epilogue.scale == ScaleAxis::per_tensor ? "tensor" : "col";
      record["tensor_scale"] = d.epilogue.tensor_scale;
    }
  }
  return record;
}

// "A holds 2 non-finite values (NaN or Inf), the first at index 5", for each input that has any (C only
// where beta reads it); empty when all are finite. Indices are into the operand as the call holds it.
std::string non_finite_inputs(const Problem& p, const Inputs& in) {
  const GemmDesc& d = p.d;
  const auto scan = [](const char* name, DataType type, const std::vector<std::byte>& data) -> std::string {
    if (is_integer(type)) return {};
    const uint64_t count = data.size() / element_size(type);
    uint64_t bad = 0, first = 0;
    for (uint64_t i = 0; i < count; ++i) {
      double v = 0.0;
      if (type == DataType::f16 || type == DataType::bf16) {
        uint16_t h;
        std::memcpy(&h, &data[i * 2], 2);
        v = type == DataType::f16 ? half_to_float(h) : bfloat16_to_float(h);
      } else if (type == DataType::f32) {
        float f;
        std::memcpy(&f, &data[i * 4], 4);
        v = f;
      } else {
        std::memcpy(&v, &data[i * 8], 8);
      }
      if (!std::isfinite(v) && bad++ == 0) first = i;
    }
    return bad ? fmt::format("{} holds {} non-finite value(s) (NaN or Inf), the first at index {}", name, bad, first)
               : std::string{};
  };
  std::string out;
  for (std::string part : {scan("A", d.type, in.a), scan("B", d.type, in.b),
                           d.beta != 0.0 ? scan("C", *d.c_type, in.c0) : std::string{}}) {
    if (!part.empty()) out += (out.empty() ? "" : "; ") + part;
  }
  return out;
}

// --verify: C against the full CPU reference up to --verify-max multiply-adds, by the sampled check
// (reference.hpp, check_sampled; its seed drawn from the inputs') above; true when it passed. Random inputs
// are judged by the random-rounding model too (reference.hpp); files may have structure. The ozaki kernel's
// result with --moduli other than the default is held to the emulation's own bound instead of the native
// kernel's (emulation_moduli_to_judge), and the line and the JSON say which judged.
bool verify(const Problem& p, const Inputs& in, const Measured& r, const RunOptions& o, const GemmOptions& gemm,
            nlohmann::json& record) {
  const CompareOptions options{.f16_accumulate = gemm.f16_accumulate, .random_inputs = !p.from_files,
                               .emulation_moduli = emulation_moduli_to_judge(p.d, gemm, r.t.kernel)};
  const double products = double(p.d.batch) * double(p.d.m) * double(p.d.n) * double(p.d.k);
  const bool full = products <= o.verify_max;
  SampleOptions sample;
  sample.seed = p.seed ^ 0x9E3779B97F4A7C15ull;
  const Comparison cmp =
      full ? compare_with_reference(p.d, in.a.data(), in.b.data(), in.c0.data(), r.c.data(), options, in.bias_data())
           : check_sampled(p.d, in.a.data(), in.b.data(), in.c0.data(), r.c.data(), options, sample, in.bias_data());
  fmt::print("verify:   {} ({}{})\n", cmp.passed ? "passed" : "FAILED", full ? "" : "sampled check: ", cmp.summary());
  if (options.emulation_moduli && !cmp.emulation_moduli) {
    fmt::print("          the inputs hold values the emulation does not cover: the native kernel computed C, and "
               "its bound judged\n");
  }
  record["check"] = full ? "full" : "sampled";
  record["check_bound"] = cmp.emulation_moduli ? "emulation" : "native";
  if (cmp.emulation_moduli) record["check_moduli"] = cmp.emulation_moduli;
  if (!full) record["check_seed"] = sample.seed;
  // Non-finite inputs make non-finite elements of C; each must be the reference's (NaN for NaN, an Inf of
  // the same sign), and the normwise error is of the finite ones.
  if (const std::string inputs = non_finite_inputs(p, in); !inputs.empty()) {
    fmt::print("          {}: {}\n", inputs,
               cmp.passed ? "the result's non-finite elements match the reference's"
                          : "an element whose reference is NaN or Inf must be the same NaN or Inf");
    record["non_finite_inputs"] = inputs;
  }
  record["verified"] = cmp.passed;
  record["normwise_error"] = cmp.normwise_error;
  record["error_bound"] = cmp.bound;
  return cmp.passed;
}

// --roofline: the product's ceiling, the lesser of its compute ceiling (the one vkgemm bench's efficiency uses)
// and its bytes at the copy rate (docs/bench.md, "The roofline"), measured by vkgemm peak before the product.
void report_roofline(const GemmDesc& d, const std::vector<PeakMeasurement>& rows, const Measured& r,
                     const GemmOptions& options, nlohmann::json& record) {
  if (r.t.gpu_ms.empty()) return;
  bench::Settings settings;
  settings.ceilings = bench::ceilings_from(rows);
  const auto compute =
      bench::ceiling_for(settings, d.type, r.t.kernel, options.f16_accumulate, options.emulation_moduli);
  const auto roof = bench::roofline_for(compute, bench::copy_rate(rows), operations(d), bench::bytes_moved(d));
  if (!roof) {
    fmt::print("roofline: none (vkgemm peak measured no copy rate on this device)\n");
    record["roofline"] = nullptr;
    return;
  }
  const double gflops = operations(d) / r.t.median_gpu_ms() * 1e-6;
  fmt::print("roofline: {:.1f}% of {:.4g} {} ({} bound: {:.0f} bytes at {:.4g} GB/s allow {:.4g}{}{})\n",
             100.0 * gflops / roof->gflops, roof->gflops, is_integer(d.type) ? "GOP/s" : "GFLOP/s", roof->bound(),
             roof->bytes, *bench::copy_rate(rows), roof->memory_gflops, compute ? ", " : "",
             compute ? fmt::format("{} {:.4g}", compute->name, compute->gflops) : std::string{});
  record["roofline"] = {{"gflops", roof->gflops}, {"bound", roof->bound()}, {"bytes", roof->bytes},
                        {"memory_gflops", roof->memory_gflops}, {"fraction", gflops / roof->gflops},
                        {"copy_gbps", *bench::copy_rate(rows)},
                        {"compute_ceiling", compute ? nlohmann::json(compute->name) : nlohmann::json(nullptr)}};
}

void write_json(const std::string& path, const nlohmann::json& record) {
  files::write_atomically(path, record.dump() + "\n");
}

// --out and --json: each a file vkgemm may replace, and not the same one; checked before the product runs.
void check_outputs(const RunOptions& o) {
  files::check_distinct({{"--out", o.out_path}, {"--json", o.json_path}});
  if (!o.out_path.empty()) files::check_destination(o.out_path, "--out");
  if (!o.json_path.empty()) files::check_destination(o.json_path, "--json");
}

// --out: C back in row-major order, 3-D when the inputs were batched.
void write_c(const std::string& path, const Problem& p, const Measured& r) {
  const auto& c = p.c;
  const auto out =
      to_layout(r.c, c.batch, c.rows, c.cols, element_size(*p.d.c_type), p.d.layout == Layout::col_major, true);
  if (p.batched_out()) {
    npy::write(path, *p.d.c_type, c.batch, c.rows, c.cols, out.data());
  } else {
    npy::write(path, *p.d.c_type, c.rows, c.cols, out.data());
  }
  fmt::print("wrote:    {}\n", path);
}

int run_product(const RunOptions& o, const CommonOptions& common) {
  const GemmOptions options = kernel_options(o);
  const auto repeat = static_cast<uint32_t>(o.repeat), warmup = static_cast<uint32_t>(o.warmup);  // checked
  check_outputs(o);
  Problem p = describe(o, common.seed.value_or(fresh_seed()));
  const GemmDesc& d = p.d;

  Engine engine = open_engine(common);
  engine.check_supported(d.type, *d.c_type, options);  // before spending time or memory on inputs
  // --stats where the device has no statistics: that error now, before the product runs.
  if (o.stats && !engine.device().pipeline_statistics) (void)engine.pipeline_statistics(d, options);
  // The batch, every operand and the split-K workspace against the device, before any host memory is spent
  // on inputs (random inputs for --m 100000 --n 100000 --k 100000 would take 80 GB of host memory).
  engine.check_fits(d, options);
  const Inputs in = make_inputs(p);
  // --roofline: the ceilings first, while nothing of the product is on the device but its inputs' host copies.
  std::vector<PeakMeasurement> peak_rows;
  if (o.roofline) peak_rows = measure_peaks(engine);
  // The shared steadiness rule (steady.hpp) around a timed series: the calibration product before and after.
  std::optional<SteadyCheck> steady;
  if (d.beta == 0.0 && repeat > 1 && engine.device().timestamps && d.m && d.n && d.batch) {
    steady.emplace(engine, default_warmup_ms(engine.device(), o.warmup_ms), kSteadyTolerancePct);
    steady->check();
  }
  const Measured r = d.beta != 0.0 ? time_in_place(engine, d, in, options, repeat, warmup, o.warmup_ms)
                                   : time_series(engine, d, in, options, repeat, warmup, o.warmup_ms);
  if (steady) steady->check();

  print_summary(o, p, engine.device(), options, r);
  nlohmann::json record = result_record(p, engine.device(), r, repeat);
  if (steady) {
    const std::string line = steady->summary([](size_t) { return std::string("the timed series"); });
    fmt::print("steady:   {}", line);
    record["steadiness"] = {{"steady", steady->verdicts().front().steady}, {"summary", line.substr(0, line.size() - 1)}};
  }
  if (o.stats) {
    const PipelineReport report = engine.pipeline_statistics(d, options);
    print_statistics(report);
    record["pipeline_statistics"] = statistics_json(report);
  }
  if (o.roofline) report_roofline(d, peak_rows, r, options, record);
  const bool passed = !o.verify || verify(p, in, r, o, options, record);
  if (!o.json_path.empty()) write_json(o.json_path, record);
  if (!o.out_path.empty()) write_c(o.out_path, p, r);
  return finish(engine, passed ? 0 : 1);
}

}  // namespace

// The fused epilogue's options: the bias, the activation and its parameters, int8 dequantization.
void add_epilogue_options(CLI::App& cmd, RunOptions& o) {
  cmd.add_option("--bias", o.bias,
                 "Fused epilogue: add a random bias vector, row (one value per row of C) or col (one per column, "
                 "as a network layer's)")
      ->capture_default_str();
  add_enum_option(cmd, "--bias-type", o.bias_type, type_table(), "The bias's type: f32 (default) or C's type");
  cmd.add_option("--act", o.act,
                 "Fused epilogue: the activation after alpha op(A) op(B) + beta C + bias: " +
                     joined_names(activation_table()) + " (float C; f64 C takes those that need no exp)")
      ->capture_default_str();
  cmd.add_option("--scale", o.scale,
                 "Dequantization of an i8 or u8 product into f32 or f16 C (--out-type): tensor (C = --tensor-scale * "
                 "sums) or col (a random scale per column of C, 1/128 to 1/8, times --tensor-scale), before beta C, "
                 "the bias and --act")
      ->capture_default_str();
  cmd.add_option("--tensor-scale", o.tensor_scale, "--scale tensor or col: the per-tensor scale (default 1)");
  cmd.add_option("--slope", o.slope, "--act leaky-relu: the negative side's slope")->capture_default_str();
  cmd.add_option("--clamp-lo", o.clamp_lo, "--act clamp: the lower bound (needed)");
  cmd.add_option("--clamp-hi", o.clamp_hi, "--act clamp: the upper bound, at least --clamp-lo (needed)");
}

Command add_run_command(CLI::App& cmd, CommonOptions& common) {
  auto o = std::make_shared<RunOptions>();
  cmd.add_option("--m", o->m, "Rows of op(A) and C");
  cmd.add_option("--n", o->n, "Columns of op(B) and C");
  cmd.add_option("--k", o->k, "Columns of op(A), rows of op(B)");
  add_enum_option(cmd, "--type", o->type, type_table(),
                  fmt::format("Element type of A and B: {} (random inputs; with float32 --a and --b files, bf16 "
                              "rounds them to bf16, nearest even)", joined_names(type_table())))
      ->default_str("f32");
  add_enum_option(cmd, "--out-type", o->out_type, type_table(),
                  "Element type of C: f16 inputs give f32 (the default) or f16, bf16 f32 (the default) or bf16, "
                  "i8 and u8 i32 (the default) or f32 and f16, dequantized (--scale)");
  cmd.add_flag("--f16-accumulate", o->f16_accumulate,
               "f16 inputs: accumulate in fp16, C f16 (faster on some GPUs; overflows past 65504, less accurate)");
  add_enum_option(cmd, "--kernel", o->kernel, kernel_table(),
                  fmt::format("Kernel: {}; blocked takes f32 and f64, coopmat f16, bf16, i8 and u8, coopmat2 the same; auto: the best for "
                              "the shape, type and device", joined_names(kernel_table())))
      ->default_str(std::string(to_string(o->kernel)));
  add_enum_option(cmd, "--precision", o->precision, precision_table(),
                  "f64 and f32: native (the device's own units) or emulated (auto may take the ozaki kernel's exact "
                  "int8 products where the device has int8 matrix units)")
      ->default_str("native");
  cmd.add_option("--moduli", o->moduli,
                 "The ozaki kernel's moduli, 2 to 20 (default 14 for f64, 7 for f32: the native kernel's accuracy, "
                 "the span guard choosing up to two more on the device, else the native kernel, where a line's "
                 "exponents spread too far; more admit wider spreads; fewer are faster and coarser, without the guard, "
                 "and --verify then holds C to the emulation's own bound)");
  cmd.add_option("--tile", o->tile,
                 "Tile side (tiled) or workgroup side (naive), default 16; coopmat: 64 or 128, coopmat2: 32 (32x64; 16x64 "
                 "for at most 16 rows of f16 or bf16 with K split), 64, 96 (96x192), 128, 192 (192x128), 256 (128x256) or 512 (256x64) (default: chosen by shape)");
  cmd.add_option("--config", o->config,
                 "Blocked kernel configuration, e.g. \"128x128x8 8x8 lanes 8 split 1\" (default: from the tuning table)");
  cmd.add_option("--repeat", o->repeat, "Timed dispatches; the median is reported")->capture_default_str();
  cmd.add_option("--warmup", o->warmup, "Untimed dispatches first")->capture_default_str();
  cmd.add_option("--warmup-ms", o->warmup_ms,
                 fmt::format("Before the timed submission, untimed products until the device has been busy this "
                             "long and runs them at a settled speed (an idle GPU clocks down); 0: none. Only with "
                             "--repeat > 1 [default: {:g} on a GPU, 0 on a CPU device]",
                             kGpuWarmupMs))
      ->check(number_between(0.0, 10000.0));
  cmd.add_flag("--verify", o->verify,
               "Check against the CPU reference; exit 1 when it fails. C not read (beta 0) starts as NaN "
               "(i32: INT32_MIN), so an element the kernel does not write fails");
  cmd.add_option("--verify-max", o->verify_max,
                 "--verify: the full CPU reference when batch*m*n*k is at most this, the sampled check above it "
                 "(witnesses in every tile and Freivalds's row sums, docs/correctness.md) [default: 2048^3]")
      ->check(number_between(0.0, 1e30));
  cmd.add_option("--max-k-per-submission", o->max_k,
                 "Cut K into chunks of at most this many, each its own submission (display-driver watchdogs)");
  cmd.add_flag("--stats", o->stats,
               "Print the driver's statistics of the pipelines that ran (registers, shared memory, spills; "
               "needs VK_KHR_pipeline_executable_properties), also in --json");
  cmd.add_flag("--roofline", o->roofline,
               "Measure the device's ceilings first (as vkgemm peak) and print the fraction of the product's roofline "
               "reached: the lesser of its compute ceiling and its bytes at the copy rate (docs/bench.md), also in --json");
  cmd.add_flag("--trans-a", o->trans_a, "op(A) = A^T (A is stored k x m)");
  cmd.add_flag("--trans-b", o->trans_b, "op(B) = B^T (B is stored n x k)");
  cmd.add_option("--alpha", o->alpha, "alpha (integers for i32)")->capture_default_str();
  cmd.add_option("--beta", o->beta, "beta; 0 never reads C (integers for i32)")->capture_default_str();
  add_epilogue_options(cmd, *o);
  add_enum_option(cmd, "--layout", o->layout, layout_table(), "Memory layout the engine is called with: row or col")
      ->default_str("row");
  cmd.add_option("--batch", o->batch, "Batch count for random inputs (files: a 3-D .npy gives it)");
  cmd.add_option("--a", o->a_path, "A from a .npy file (2-D, or 3-D batch x rows x cols; C order, "
                                   "float32/float64/int32/float16); 2-D beside a 3-D B is broadcast");
  cmd.add_option("--b", o->b_path, "B from a .npy file, same dtype as A");
  cmd.add_option("--c", o->c_path, "The input C from a .npy file (m x n, or batch x m x n)");
  cmd.add_option("--out", o->out_path, "Write C to this .npy file (3-D when batched)");
  cmd.add_option("--json", o->json_path,
                 "Write the result (device, shape, kernel, times, check, build_commit) as JSON");
  return {[o] { (void)kernel_options(*o); }, [o, &common] { return run_product(*o, common); }};
}

}  // namespace vkgemm::cli
