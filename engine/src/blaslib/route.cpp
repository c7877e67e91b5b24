// The drop-in BLAS's engine (created at the first routed call, never at load time), the device call through
// the C ABI, and the counts VKGEMM_BLAS_VERBOSE reports; its settings are blas_environment()'s.
#include "blaslib/route.hpp"

#include <algorithm>
#include <atomic>
#include <cfenv>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <random>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "blaslib/blas_environment.hpp"
#include "vkgemm/vkgemm.h"

namespace vkgemm::blaslib {
namespace {

std::once_flag engine_once;
vkgemm_engine* engine = nullptr;  // never destroyed: the process's exit outlives any call

struct Counts {
  std::atomic<uint64_t> device{0}, cpu{0}, fell_back{0};
  std::atomic<uint64_t> checked{0}, check_failed{0};  // VKGEMM_BLAS_CHECK=1: checked on the host, and failed
  std::string device_name;
  std::string device_choice;  // "[1] NAME: why the engine took it" (which rank of a node took which GPU)
  std::string validation;  // ", N validation messages" under VKGEMM_BLAS_VALIDATION=1
  ~Counts() {
    // Only where a GEMM was called: a preloaded library is in every process a command starts.
    if (blas_environment().verbose < 1 || device + cpu + fell_back == 0) return;
    if (blas_environment().validation && engine) {
      validation = ", " + std::to_string(vkgemm_engine_validation_messages(engine)) + " validation messages";
    }
    std::string check;
    if (blas_environment().check) {
      check = "; " + std::to_string(checked) + " checked on the host, " + std::to_string(check_failed) +
              " of them failed (recomputed on the CPU BLAS)";
    }
    std::fprintf(stderr, "vkgemm-blas: %llu GEMMs on the device%s, %llu on the CPU BLAS, %llu fell back to it%s%s\n",
                 static_cast<unsigned long long>(device.load()),
                 device_name.empty() ? "" : (" (" + device_name + ")").c_str(),
                 static_cast<unsigned long long>(cpu.load()), static_cast<unsigned long long>(fell_back.load()),
                 validation.c_str(), check.c_str());
    if (!device_choice.empty()) std::fprintf(stderr, "vkgemm-blas: device %s\n", device_choice.c_str());
  }
};
Counts counts;

std::atomic<bool> device_off{false};
std::atomic<bool> types_off[7];  // by vkgemm_type: the device refused the type (unsupported_type)
std::atomic<bool> warned{false};

void warn_once(const std::string& message) {
  if (!warned.exchange(true) || blas_environment().verbose >= 1) warn(message);
}

vkgemm_engine* the_engine() {
  std::call_once(engine_once, [] {
    vkgemm_engine* e = nullptr;
    vkgemm_engine_options options{};
    options.struct_size = sizeof options;
    options.validation = blas_environment().validation;
    if (vkgemm_engine_create_with(&options, &e) != VKGEMM_OK) {
      warn_once(std::string("no device (") + vkgemm_last_error() + "); every GEMM runs on the CPU BLAS");
      device_off = true;
      return;
    }
    vkgemm_device_info info{};
    info.struct_size = sizeof info;
    if (vkgemm_engine_device(e, &info) == VKGEMM_OK) {
      counts.device_name = info.name;
      // Appended piece by piece: GCC 12 warns (-Wrestrict, a false alarm) on a "[" + std::string chain.
      std::string& choice = counts.device_choice;
      choice.append("[").append(std::to_string(info.index)).append("] ").append(info.name);
      choice.append(": ").append(vkgemm_engine_device_reason(e));
    }
    engine = e;
  });
  return engine;
}

// A failure that says the device (or this type on it) cannot run products at all, rather than this one.
bool disables(std::string_view status, bool& whole_device) {
  whole_device = status == "no_loader" || status == "no_device" || status == "device_not_found" ||
                 status == "device_lost" || status == "vulkan_error";
  return whole_device || status == "unsupported_type";
}

template <class In>
constexpr int32_t type_of() {
  if constexpr (std::is_same_v<In, float>) return VKGEMM_F32;
  if constexpr (std::is_same_v<In, double>) return VKGEMM_F64;
  if constexpr (std::is_same_v<In, Half>) return VKGEMM_F16;
  return VKGEMM_BF16;
}

template <class T, class In>
vkgemm_gemm_desc describe(const ColumnMajorGemm<T, In>& g) {
  vkgemm_gemm_desc d{};
  d.struct_size = sizeof d;
  d.type = type_of<In>();
  d.c_type = std::is_same_v<T, In> ? -1 : VKGEMM_F32;
  d.column_major = 1;
  d.trans_a = g.trans_a, d.trans_b = g.trans_b;
  d.m = g.m, d.n = g.n, d.k = g.k, d.lda = g.lda, d.ldb = g.ldb, d.ldc = g.ldc;
  d.alpha = double(g.alpha), d.beta = double(g.beta);
  d.batch = g.batch;
  if (g.batch == 1) {
    d.stride_a = d.stride_b = d.stride_c = -1;
  } else {
    d.stride_a = g.stride_a, d.stride_b = g.stride_b, d.stride_c = g.stride_c;
  }
  return d;
}

// `f()`, the host's floating-point state (its exception flags, x86's denormal flag included) left as the
// caller's arithmetic left it: the driver's host code (lavapipe's LLVM, the engine's checks) raises flags of
// its own that the reference BLAS would not, and gfortran reports raised flags at STOP.
template <class F>
auto keeping_fp_state(F&& f) {
  std::fenv_t fp_state{};
  std::fegetenv(&fp_state);
  const auto result = f();
  std::fesetenv(&fp_state);
  return result;
}

// C's span: from its first element to the last of the last batch entry (the gaps of ldc and stride_c within).
template <class T, class In>
size_t c_span(const ColumnMajorGemm<T, In>& g) {
  if (g.m == 0 || g.n == 0 || g.batch == 0) return 0;
  return size_t(g.batch - 1) * size_t(g.stride_c) + size_t(g.ldc) * size_t(g.n - 1) + size_t(g.m);
}

// VKGEMM_BLAS_CHECK=1: the device's C (`before`: C's span before the call) judged by the sampled check. A
// result that fails is said on stderr, C's span restored and false returned: the CPU BLAS computes it again.
template <class T, class In>
bool checked_on_host(const ColumnMajorGemm<T, In>& g, const vkgemm_gemm_desc& d, const std::vector<T>& before,
                     const char* routine) {
  static std::atomic<uint64_t> calls{0};
  static const uint64_t base = std::random_device{}() * 0x9E3779B97F4A7C15ull;
  vkgemm_check_result r{};
  r.struct_size = sizeof r;
  const uint64_t seed = base + calls++;
  const vkgemm_status status =
      keeping_fp_state([&] { return vkgemm_check(&d, g.a, g.b, before.data(), g.c, seed, &r); });
  ++counts.checked;
  if (status == VKGEMM_OK && r.passed) {
    if (blas_environment().verbose >= 2) warn(std::string(routine) + " checked: " + r.summary);
    return true;
  }
  ++counts.check_failed;
  warn(std::string(routine) + " " + std::to_string(g.m) + " x " + std::to_string(g.n) + " x " + std::to_string(g.k) +
       ": the device's result FAILED the check, recomputed on the CPU BLAS: " +
       (status == VKGEMM_OK ? std::string(r.summary) : std::string("no check: ") + vkgemm_last_error()));
  std::copy(before.begin(), before.end(), g.c);
  return false;
}

}  // namespace

vkgemm_engine* shared_engine(double work) {
  const BlasEnvironment& s = blas_environment();
  if (s.threshold == kNever || work < double(s.threshold) || device_off) return nullptr;
  return keeping_fp_state([] { return the_engine(); });
}

namespace {

template <class T, class In>
bool run(const ColumnMajorGemm<T, In>& g, const char* routine) {
  const BlasEnvironment& s = blas_environment();
  std::atomic<bool>& type_off = types_off[type_of<In>()];
  // m·n·k·batch in double: exact enough for a threshold, and no wrap for ILP64 sizes.
  const bool big = double(g.m) * double(g.n) * double(g.k) * double(g.batch) >= double(s.threshold);
  if (s.threshold == kNever || !big || device_off || type_off) return false;
  // The engine is created here, at the first routed call.
  if (!keeping_fp_state([] { return the_engine() != nullptr; })) return false;
  const vkgemm_gemm_desc d = describe(g);
  vkgemm_gemm_options o{};
  o.struct_size = sizeof o;
  o.precision = s.precision.c_str();
  std::vector<T> before;
  if (s.check) before.assign(g.c, g.c + c_span(g));
  const vkgemm_status status = keeping_fp_state([&] { return vkgemm_gemm(engine, &d, g.a, g.b, g.c, &o, nullptr); });
  if (status == VKGEMM_OK) {
    if (s.check && !checked_on_host(g, d, before, routine)) return false;
    ++counts.device;
    if (s.verbose >= 2) {
      std::fprintf(stderr, "vkgemm-blas: %s %lld x %lld x %lld (batch %lld) on the device\n", routine,
                   static_cast<long long>(g.m), static_cast<long long>(g.n), static_cast<long long>(g.k),
                   static_cast<long long>(g.batch));
    }
    return true;
  }
  ++counts.fell_back;
  const std::string_view name = vkgemm_status_name(status);
  bool whole_device = false;
  if (disables(name, whole_device)) (whole_device ? device_off : type_off) = true;
  warn_once(std::string(routine) + " fell back to the CPU BLAS: " + vkgemm_last_error() + " (" + std::string(name) +
            ")" + (whole_device ? "; the device is not tried again" : ""));
  return false;
}

}  // namespace

bool run_on_device(const ColumnMajorGemm<float>& g, const char* routine) { return run(g, routine); }
bool run_on_device(const ColumnMajorGemm<double>& g, const char* routine) { return run(g, routine); }
bool run_on_device(const ColumnMajorGemm<float, Half>& g, const char* routine) { return run(g, routine); }
bool run_on_device(const ColumnMajorGemm<float, BFloat16>& g, const char* routine) { return run(g, routine); }

void count_cpu_call(const char* routine) {
  ++counts.cpu;
  if (blas_environment().verbose >= 2) std::fprintf(stderr, "vkgemm-blas: %s on the CPU BLAS\n", routine);
}

void report_missing_cpu(const char* name) {
  static std::mutex mutex;
  std::lock_guard lock(mutex);
  static std::string reported;
  if (reported.find(std::string(name) + ";") != std::string::npos) return;
  reported += std::string(name) + ";";
  warn(std::string("no CPU BLAS has ") + name +
       " (set VKGEMM_BLAS_CPU to a BLAS library's path); this library's own loops run it, slowly");
}

}  // namespace vkgemm::blaslib
