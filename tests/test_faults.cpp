// Every failure the driver can report, in turn: the fault layer (tests/fault_layer) makes the Nth Vulkan call of
// representative work fail with VK_ERROR_OUT_OF_HOST_MEMORY or _DEVICE_MEMORY, VK_ERROR_DEVICE_LOST where the
// call can report a loss, VK_ERROR_MEMORY_MAP_FAILED from vkMapMemory, for every N the work reaches. Each
// failure must give a vkgemm::Error naming the call and the result, nothing presented as a result (the work
// checks every result it gets against the CPU reference); after running out of memory the engine must work
// again (the same work, checked); after a loss every later call must say the device is lost. No crash, no
// hang (the layer bounds a lost device's waits), and no leak (the sanitizer pass runs this suite under
// LeakSanitizer). The walk prints its counts: calls walked, failures injected, each outcome.
#include <doctest/doctest.h>

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "app_vulkan.hpp"
#include "engine/engine_impl.hpp"
#include "support.hpp"
#include "vkgemm/reference.hpp"

using namespace vkgemm;

namespace {

// ---- the layer's control (its exported functions, tests/fault_layer/fault_layer.cpp) ----

struct FaultLayer {
  void (*arm)(uint64_t fail_at, int32_t result, const char* function) = nullptr;
  bool (*disarm)() = nullptr;  // returns whether it was armed
  void (*resume)() = nullptr;
  uint64_t (*calls)() = nullptr;
  uint64_t (*injected)() = nullptr;
  const char* (*call)(uint64_t n) = nullptr;
  uint32_t (*fails)(const char* name) = nullptr;
};

// The failures the specification allows a call (fault_layer.cpp's Fails).
constexpr uint32_t kHost = 1, kDevice = 2, kLost = 4, kMapFailed = 8;

// Puts the layer in the loader's chain of every instance created from now on in this process (its manifest's
// folder added to the search path, the layer named in VK_INSTANCE_LAYERS) and loads it, as the loader will,
// to find its control functions.
const FaultLayer& layer() {
  static const FaultLayer controls = [] {
    const std::string dir = VKGEMM_FAULT_LAYER_DIR;
    const char* path = std::getenv("VK_ADD_LAYER_PATH");
    setenv("VK_ADD_LAYER_PATH", path && *path ? (dir + ":" + path).c_str() : dir.c_str(), 1);
    const char* layers = std::getenv("VK_INSTANCE_LAYERS");
    const std::string name = "VK_LAYER_VKGEMM_fault";
    setenv("VK_INSTANCE_LAYERS", layers && *layers ? (name + ":" + layers).c_str() : name.c_str(), 1);
    void* lib = dlopen((dir + "/libvkgemm_fault_layer.so").c_str(), RTLD_NOW | RTLD_LOCAL);
    const bool loaded = lib != nullptr;
    REQUIRE_MESSAGE(loaded, "the fault layer: ", std::string(loaded ? "" : dlerror()));
    FaultLayer l;
    const auto find = [&](auto& f, const char* symbol) {
      f = reinterpret_cast<std::remove_reference_t<decltype(f)>>(dlsym(lib, symbol));
      const bool found = f != nullptr;
      REQUIRE_MESSAGE(found, "the fault layer lacks ", symbol);
    };
    find(l.arm, "vkgemm_fault_arm");
    find(l.disarm, "vkgemm_fault_disarm");
    find(l.resume, "vkgemm_fault_resume");
    find(l.calls, "vkgemm_fault_calls");
    find(l.injected, "vkgemm_fault_injected");
    find(l.call, "vkgemm_fault_call");
    find(l.fails, "vkgemm_fault_fails");
    return l;
  }();
  return controls;
}

// While one lives, the layer neither counts nor fails (the application's own calls around the engine's);
// then it counts on where it was counting.
struct Paused {
  Paused() : was_armed(layer().disarm()) {}
  ~Paused() {
    if (was_armed) layer().resume();
  }
  const bool was_armed;
  Paused(const Paused&) = delete;
  Paused& operator=(const Paused&) = delete;
};

// ---- the representative work ----

// One piece of work on its own engine: open() makes what it needs, untouched by faults; run() does the
// work (every Vulkan call it makes counted), throws vkgemm::Error where a call fails and checks every result
// it returns; engine() is what later calls go to.
class Session {
 public:
  virtual ~Session() = default;
  virtual void run() = 0;
  virtual Engine& engine() = 0;
  // Whether the last run() absorbed a failure by design: an import of the host's pages the driver refused,
  // whose copy went another way (the engine counts it), the result still checked. note_refusals: before it.
  virtual void note_refusals() {}
  virtual bool absorbed() { return false; }
  // After run() threw `e`: what the failed work must have left as it was (nothing checked by default).
  virtual void check_untouched(const Error& /*e*/) {}
};

struct Scenario {
  std::string name;
  std::function<std::unique_ptr<Session>()> open;
};

// Checks a product's C against the reference; a wrong C would be a partial result presented as one.
void check_result(const GemmDesc& d, const void* a, const void* b, const void* c0, const void* c,
                  const void* bias = nullptr) {
  const Comparison cmp = compare_with_reference(d, a, b, c0, c, {.random_inputs = true}, bias);
  INFO(cmp.summary());
  CHECK(cmp.passed);
}

// Host operands for `d` (A, B, C0 random; C poisoned), as Engine::gemm takes them.
struct HostOperands {
  std::vector<std::byte> a, b, c0, c;
  HostOperands(const GemmDesc& d, std::mt19937_64& rng) {
    const DataType out = output_type(d);
    a = test::random_elements(d.type, uint64_t(d.m * d.k), rng);
    b = test::random_elements(d.type, uint64_t(d.k * d.n), rng);
    c0 = test::random_elements(out, uint64_t(d.m * d.n), rng);
    c.assign(c0.size(), std::byte{0xFF});
  }
};

// Engine::gemm on host memory with `options` (a kernel family, or the emulated product).
// panels: the engine cuts the product into panels of 8 lines, every copy `panels` ("import": every page
// imported; "staging": through the staging rings by 2 copy threads; the host panels suite's knobs), so that the
// copies beside the products fail too.
class HostGemm : public Session {
 public:
  HostGemm(GemmDesc d, GemmOptions options, std::mt19937_64& rng, const char* panels = nullptr)
      : engine_(panels ? test::with_panels(8, [] { return test::make_engine(); }, panels, 2) : test::make_engine()),
        d_(d), options_(options), ops_(d, rng) {}
  void run() override {
    ops_.c = ops_.c0;
    engine_->gemm(d_, ops_.a.data(), ops_.b.data(), ops_.c.data(), options_);
    check_result(d_, ops_.a.data(), ops_.b.data(), ops_.c0.data(), ops_.c.data());
  }
  Engine& engine() override { return *engine_; }
  void note_refusals() override { refused_ = refused(); }
  bool absorbed() override { return refused() > refused_; }
  // A product that reads C (beta != 0) and failed left the caller's C as it was (the drop-in BLAS's fallback
  // computes from it, docs/blas.md), unless the failure came while C itself came back, which it then says.
  void check_untouched(const Error& e) override {
    if (d_.beta == 0.0 || ops_.c == ops_.c0) return;
    CHECK_MESSAGE(std::string(e.what()).find("may hold part of them") != std::string::npos,
                  "a failed host product that reads C changed it, and its error does not say so");
  }

 private:
  uint64_t refused() const { return detail::Access::impl(*engine_).host_copies->counts().refused; }
  std::unique_ptr<Engine> engine_;
  uint64_t refused_ = 0;
  GemmDesc d_;
  GemmOptions options_;
  HostOperands ops_;
};

// A plan on the engine's buffers: the buffers made and written, the plan made and run, C read back.
class PlanRun : public Session {
 public:
  explicit PlanRun(std::mt19937_64& rng) : engine_(test::make_engine()), ops_(desc(), rng) {}
  static GemmDesc desc() { return {.m = 37, .n = 29, .k = 45, .alpha = 1.5, .beta = 0.5}; }
  void run() override {
    Engine& e = *engine_;
    Buffer a = e.create_buffer(ops_.a.size()), b = e.create_buffer(ops_.b.size()), c = e.create_buffer(ops_.c.size());
    e.write(a, 0, ops_.a.data(), ops_.a.size());
    e.write(b, 0, ops_.b.data(), ops_.b.size());
    e.write(c, 0, ops_.c0.data(), ops_.c0.size());
    GemmPlan plan = e.plan(desc(), {.gemm = {.kernel = Kernel::tiled, .tile = 16}});
    e.run(plan, {&a, 0}, {&b, 0}, {&c, 0});
    std::vector<std::byte> got(ops_.c.size());
    e.read(c, 0, got.data(), got.size());
    check_result(desc(), ops_.a.data(), ops_.b.data(), ops_.c0.data(), got.data());
  }
  Engine& engine() override { return *engine_; }

 private:
  std::unique_ptr<Engine> engine_;
  HostOperands ops_;
};

// A chain of two layers (bias and ReLU, then bias and sigmoid), its intermediates its own; the output read.
class ChainRun : public Session {
 public:
  explicit ChainRun(std::mt19937_64& rng) : engine_(test::make_engine()) {
    x_ = test::random_elements(DataType::f32, kRows * kWidths[0], rng);
    for (size_t i = 0; i < 2; ++i) {
      w_.push_back(test::random_elements(DataType::f32, kWidths[i] * kWidths[i + 1], rng));
      bias_.push_back(test::random_elements(DataType::f32, kWidths[i + 1], rng));
    }
  }
  void run() override {
    Engine& e = *engine_;
    const ChainDesc net{.type = DataType::f32, .rows = int64_t(kRows), .input_width = int64_t(kWidths[0]),
                        .layers = {{int64_t(kWidths[1]), epilogue_of(0)}, {int64_t(kWidths[2]), epilogue_of(1)}}};
    GemmChain chain = e.chain(net);
    Buffer x = e.create_buffer(x_.size()), y = e.create_buffer(kRows * kWidths[2] * 4);
    e.write(x, 0, x_.data(), x_.size());
    std::vector<Buffer> w, bias;
    std::vector<BufferOffset> wo, bo;
    for (size_t i = 0; i < 2; ++i) {
      w.push_back(e.create_buffer(w_[i].size()));
      bias.push_back(e.create_buffer(bias_[i].size()));
      e.write(w.back(), 0, w_[i].data(), w_[i].size());
      e.write(bias.back(), 0, bias_[i].data(), bias_[i].size());
    }
    for (size_t i = 0; i < 2; ++i) wo.push_back({&w[i], 0}), bo.push_back({&bias[i], 0});
    e.run(chain, {&x, 0}, wo, bo, {&y, 0});
    // Each layer from the device's own input (its intermediate), held to one product's bound.
    std::vector<std::byte> in = x_;
    for (size_t i = 0; i < 2; ++i) {
      std::vector<std::byte> out(kRows * kWidths[i + 1] * 4);
      e.read(i == 0 ? chain.intermediate(0) : y, 0, out.data(), out.size());
      GemmDesc d{.m = int64_t(kRows), .n = int64_t(kWidths[i + 1]), .k = int64_t(kWidths[i])};
      d.epilogue = epilogue_of(i);
      const std::vector<std::byte> c0(out.size());
      check_result(d, in.data(), w_[i].data(), c0.data(), out.data(), bias_[i].data());
      in = std::move(out);
    }
  }
  Engine& engine() override { return *engine_; }

 private:
  static constexpr uint64_t kRows = 40, kWidths[3] = {12, 20, 6};
  static Epilogue epilogue_of(size_t i) {
    return {.bias = BiasAxis::per_column, .activation = i == 0 ? Activation::relu : Activation::sigmoid};
  }
  std::unique_ptr<Engine> engine_;
  std::vector<std::byte> x_;
  std::vector<std::vector<std::byte>> w_, bias_;
};

// An application's device adopted, a product recorded into its command buffer on its buffers; the
// application's own calls (its buffers, its submission) are not the engine's and are not failed.
class AdoptedRecord : public Session {
 public:
  explicit AdoptedRecord(std::mt19937_64& rng) {
    const Paused paused;
    app_ = std::make_unique<test::AppVulkan>(false);
    a_ = test::random_floats(kM * kK, rng), b_ = test::random_floats(kK * kN, rng);
    ab_ = app_->buffer((kM * kK + kK * kN) * 4), cb_ = app_->buffer(kM * kN * 4);
    std::memcpy(ab_.mapped, a_.data(), a_.size() * 4);
    std::memcpy(static_cast<char*>(ab_.mapped) + a_.size() * 4, b_.data(), b_.size() * 4);
  }
  ~AdoptedRecord() override {
    const Paused paused;
    engine_.reset();
    app_.reset();
  }
  void run() override {
    if (!engine_) engine_ = std::make_unique<Engine>(adopt_device(app_->adopt_info()));
    VkCommandBuffer cmd = VK_NULL_HANDLE;
    {
      const Paused paused;
      std::memset(cb_.mapped, 0xFF, kM * kN * 4);
      cmd = app_->begin();
    }
    const GemmDesc d{.m = kM, .n = kN, .k = kK};
    GemmRecording recording;  // alive until the application's submission completed
    try {
      recording = record_gemm(*engine_, cmd, d, {ab_.buffer, 0, a_.size() * 4},
                              {ab_.buffer, a_.size() * 4, b_.size() * 4}, {cb_.buffer, 0, cb_.size});
    } catch (...) {
      // The application ends and submits what it began, as after any failed call: record_gemm recorded
      // nothing (vulkan.hpp), so C stays as the application left it.
      const Paused paused;
      app_->submit_and_wait(cmd);
      const auto* bytes = static_cast<const unsigned char*>(cb_.mapped);
      CHECK_MESSAGE(std::all_of(bytes, bytes + kM * kN * 4, [](unsigned char x) { return x == 0xFF; }),
                    "a failed record_gemm recorded commands: C changed");
      throw;
    }
    const Paused paused;
    app_->submit_and_wait(cmd);
    std::vector<float> c(kM * kN), c0(kM * kN, 0.0f);
    std::memcpy(c.data(), cb_.mapped, c.size() * 4);
    check_result(d, a_.data(), b_.data(), c0.data(), c.data());
  }
  Engine& engine() override {
    if (!engine_) engine_ = std::make_unique<Engine>(adopt_device(app_->adopt_info()));
    return *engine_;
  }

 private:
  static constexpr int64_t kM = 21, kN = 18, kK = 13;
  std::unique_ptr<test::AppVulkan> app_;
  std::unique_ptr<Engine> engine_;
  std::vector<float> a_, b_;
  test::AppBuffer ab_, cb_;
};

// Creating the engine itself: its device, memory, submitter, pipelines' cache.
class Creation : public Session {
 public:
  void run() override { engine_ = test::make_engine(); }
  Engine& engine() override {
    if (!engine_) engine_ = test::make_engine();
    return *engine_;
  }

 private:
  std::unique_ptr<Engine> engine_;
};

// ---- the walk ----

struct Outcomes {
  uint64_t walked = 0;             // counted calls of the work, over every scenario
  uint64_t injected = 0;           // runs with a failure injected
  uint64_t out_of_memory = 0;      // ... that ended in ErrorCode::out_of_memory, the engine working after
  uint64_t device_lost = 0;        // ... in ErrorCode::device_lost, every later call saying so
  uint64_t vulkan_error = 0;       // ... in ErrorCode::vulkan_error (a map that failed), the engine working after
  uint64_t engine_creation = 0;    // ... in a refused Engine (its creation failed; nothing left behind)
  uint64_t absorbed = 0;           // ... in a refused import, the copy gone another way, the result right
  uint64_t wrong = 0;              // ... in anything else: no error (swallowed), another error, another exception
  uint64_t not_reached = 0;        // runs that took another path (fewer polls) and made no call to fail
};

const char* result_name(int32_t r) {
  switch (r) {
    case -1: return "VK_ERROR_OUT_OF_HOST_MEMORY";
    case -2: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
    case -4: return "VK_ERROR_DEVICE_LOST";
    case -5: return "VK_ERROR_MEMORY_MAP_FAILED";
    default: return "?";
  }
}

// What each call is failed with: one of the two out-of-memory results (alternating over the calls: the
// engine treats them alike), the loss where the call can report one, the map's own failure.
std::vector<int32_t> results_for(uint32_t fails, uint64_t n) {
  std::vector<int32_t> out;
  if ((fails & (kHost | kDevice)) == (kHost | kDevice)) out.push_back(n % 2 ? -1 : -2);
  else if (fails & kHost) out.push_back(-1);
  else if (fails & kDevice) out.push_back(-2);
  if (fails & kLost) out.push_back(-4);
  if (fails & kMapFailed) out.push_back(-5);
  return out;
}

ErrorCode expected_code(int32_t r) {
  if (r == -4) return ErrorCode::device_lost;
  if (r == -1 || r == -2) return ErrorCode::out_of_memory;
  return ErrorCode::vulkan_error;
}

// After a loss, every call that reaches the device says it is lost: the work again, and the engine's own
// calls on buffers.
void expect_lost(Session& s) {
  const auto lost = [](auto&& call) { test::expect_error(call, ErrorCode::device_lost, "lost"); };
  lost([&] { s.run(); });
  Engine& e = s.engine();
  lost([&] { (void)e.create_buffer(64); });
  std::vector<float> host(16 * 16);
  lost([&] { e.gemm(DataType::f32, 16, 16, 16, host.data(), host.data(), host.data()); });
}

// Call `n` (of function `function`) of `scenario`'s work failed with `result`: what must follow.
void inject(const Scenario& scenario, uint64_t n, const std::string& function, int32_t result, Outcomes& o) {
  const std::unique_ptr<Session> s = scenario.open();
  layer().arm(n, result, function.c_str());
  std::optional<Error> error;
  std::string other;
  s->note_refusals();
  try {
    s->run();
  } catch (const Error& e) {
    error = e;
  } catch (const std::exception& e) {
    other = e.what();
  }
  const bool reached = layer().injected() == 1;
  layer().disarm();
  INFO(scenario.name, ": call ", n, " (", function, ") failed with ", std::string(result_name(result)));
  if (!reached) {
    // How often a wait polls depends on when the work completes: this run took another path, and its call `n`
    // was not `function` (or there was none), so nothing was injected. It must have succeeded, every result
    // checked.
    CHECK_MESSAGE(!error, "call ", n, " was not reached, yet the work failed: ", error ? error->what() : "");
    CHECK_MESSAGE(other.empty(), "not a vkgemm::Error: ", other);
    ++o.not_reached;
    return;
  }
  ++o.injected;
  if (!error && other.empty() && s->absorbed()) {
    ++o.absorbed;  // the copy went through staging or the serial path; run() checked the result
    return;
  }
  if (!error) {
    const std::string why = other.empty() ? "the failure was swallowed: the work completed"
                                          : "not a vkgemm::Error: " + other;
    FAIL_CHECK(why);
    ++o.wrong;
    return;
  }
  const std::string what = error->what();
  INFO("the error: ", what);
  s->check_untouched(*error);
  const bool named = what.find(function) != std::string::npos && what.find(result_name(result)) != std::string::npos;
  CHECK_MESSAGE(named, "the error names neither the call nor the result");
  CHECK(error->code() == expected_code(result));
  if (!named || error->code() != expected_code(result)) {
    ++o.wrong;
    return;
  }
  if (scenario.name == "engine creation") {
    ++o.engine_creation;  // the engine never was: nothing to call (LeakSanitizer checks what was left)
    return;
  }
  if (result == -4) {
    expect_lost(*s);
    ++o.device_lost;
    return;
  }
  s->run();  // the engine works again: the same work, every result checked
  ++(result == -5 ? o.vulkan_error : o.out_of_memory);
}

void walk(const Scenario& scenario, Outcomes& total) {
  std::vector<std::string> trace;
  {
    const std::unique_ptr<Session> s = scenario.open();
    layer().arm(0, 0, nullptr);
    s->run();
    layer().disarm();
    for (uint64_t n = 1; const char* f = layer().call(n); ++n) trace.emplace_back(f);
  }
  REQUIRE_MESSAGE(!trace.empty(), scenario.name, ": the work made no call the layer counts");
  Outcomes o;
  o.walked = trace.size();
  for (uint64_t n = 1; n <= trace.size(); ++n) {
    for (const int32_t r : results_for(layer().fails(trace[n - 1].c_str()), n)) inject(scenario, n, trace[n - 1], r, o);
  }
  MESSAGE(fmt::format("{}: {} calls walked, {} failures injected: {} out of memory (then worked), {} device lost "
                      "(then lost everywhere), {} map failed (then worked), {} refused engines, {} refused imports "
                      "(copied another way), {} wrong; {} runs not reaching their call",
                      scenario.name, o.walked, o.injected, o.out_of_memory, o.device_lost, o.vulkan_error,
                      o.engine_creation, o.absorbed, o.wrong, o.not_reached));
  total.walked += o.walked, total.injected += o.injected, total.out_of_memory += o.out_of_memory;
  total.device_lost += o.device_lost, total.vulkan_error += o.vulkan_error;
  total.engine_creation += o.engine_creation, total.wrong += o.wrong, total.not_reached += o.not_reached;
  total.absorbed += o.absorbed;
}

bool runs_here(const GemmDesc& d, const GemmOptions& options) {
  Engine& e = test::engine();
  if (d.type == DataType::f64 && !e.device().float64) return false;
  try {
    e.check_supported(d.type, output_type(d), options);
  } catch (const Error& err) {
    if (err.code() != ErrorCode::unsupported_type && err.code() != ErrorCode::unsupported_config) throw;
    MESSAGE("not walked here: ", std::string(err.what()));
    return false;
  }
  return true;
}

}  // namespace

TEST_SUITE("faults") {
  TEST_CASE("every counted Vulkan call of representative work fails in turn: an error, then a working or lost engine") {
    (void)layer();
    // The loader's own messages: it names a layer enabled from the environment, and says when a device's
    // creation failed below it (the layer failing vkCreateDevice).
    const test::ExpectedMessages loader_notices(
        std::vector<std::string>{"VK_LAYER_VKGEMM_fault", "Failed to create device chain"});
    auto rng = test::case_rng("faults");
    std::vector<Scenario> scenarios;
    scenarios.push_back({"engine creation", [] { return std::make_unique<Creation>(); }});
    scenarios.push_back({"plan", [&] { return std::make_unique<PlanRun>(rng); }});
    const GemmDesc f32{.m = 33, .n = 27, .k = 19, .alpha = -1.0, .beta = 0.5};
    for (const Kernel kernel : all_kernels()) {
      if (kernel == Kernel::ozaki) continue;  // the emulated product below
      const GemmOptions options{.kernel = kernel};
      if (!runs_here(f32, options)) continue;
      scenarios.push_back({fmt::format("Engine::gemm, {}", to_string(kernel)),
                           [&, options] { return std::make_unique<HostGemm>(f32, options, rng); }});
    }
    const GemmDesc f64{.type = DataType::f64, .m = 21, .n = 17, .k = 24, .beta = 0.5};
    if (runs_here(f64, {.kernel = Kernel::ozaki})) {
      scenarios.push_back({"Engine::gemm, emulated f64 (ozaki)",
                           [&] { return std::make_unique<HostGemm>(f64, GemmOptions{.kernel = Kernel::ozaki}, rng); }});
    }
    scenarios.push_back({"Engine::gemm cut into panels, copies beside the products", [&] {
                           return std::make_unique<HostGemm>(f32, GemmOptions{}, rng, "import");
                         }});
    // beta 0: C does not go in; each panel's C comes back once its product completed.
    scenarios.push_back({"Engine::gemm cut into panels, beta 0", [&] {
                           GemmDesc d = f32;
                           d.beta = 0.0;
                           return std::make_unique<HostGemm>(d, GemmOptions{}, rng, "import");
                         }});
    // Staged panels: each copy the host's, complete on return; C (beta != 0) comes back only at the end.
    scenarios.push_back({"Engine::gemm cut into panels, staged", [&] {
                           return std::make_unique<HostGemm>(f32, GemmOptions{}, rng, "staging");
                         }});
    scenarios.push_back({"chain", [&] { return std::make_unique<ChainRun>(rng); }});
    scenarios.push_back({"adopted device, recorded", [&] { return std::make_unique<AdoptedRecord>(rng); }});
    Outcomes total;
    for (const Scenario& s : scenarios) {
      CAPTURE(s.name);
      walk(s, total);
    }
    MESSAGE(fmt::format("faults: {} scenarios, {} calls walked, {} failures injected: {} out of memory, {} device "
                        "lost, {} map failed, {} refused engines, {} refused imports, {} wrong; {} runs not reaching "
                        "their call",
                        scenarios.size(), total.walked, total.injected, total.out_of_memory, total.device_lost,
                        total.vulkan_error, total.engine_creation, total.absorbed, total.wrong, total.not_reached));
    CHECK(total.wrong == 0);
    // The panels import the host's pages where the device can: a refusal there is absorbed, not an error.
    if (test::engine().device().host_import) CHECK(total.absorbed > 0);
    CHECK(total.device_lost > 0);
    CHECK(total.out_of_memory > 0);
  }

  TEST_CASE("an import of the host's pages the driver refuses: the copy goes through staging, its bytes right") {
    (void)layer();
    const test::ExpectedMessages loader_notices("VK_LAYER_VKGEMM_fault");
    setenv("VKGEMM_TEST_HOST_COPIES", "import", 1);
    const auto e = test::make_engine();
    unsetenv("VKGEMM_TEST_HOST_COPIES");
    if (!e->device().host_import) {
      test::skip("the device has no VK_EXT_external_memory_host: no import to refuse");
      return;
    }
    const detail::HostCopies& copies = *detail::Access::impl(*e).host_copies;
    auto rng = test::case_rng(test::current_case_name());
    const uint64_t bytes = 3 * 4099 + 5;
    Buffer buffer = e->create_buffer(bytes + 64);
    std::vector<std::byte> data(bytes), back(bytes);
    // The calls of an imported upload and download, in order: the import's allocation is each one's first
    // vkAllocateMemory (a staging ring would come after it, and only after a refusal).
    const auto first_allocation = [&](const std::function<void()>& copy) {
      layer().arm(0, 0, nullptr);
      copy();
      layer().disarm();
      for (uint64_t n = 1; const char* f = layer().call(n); ++n) {
        if (std::string_view(f) == "vkAllocateMemory") return n;
      }
      return uint64_t{0};
    };
    const auto upload = [&] { e->write(buffer, 7, data.data() + 1, bytes - 1); };
    const auto download = [&] { e->read(buffer, 7, back.data() + 1, bytes - 1); };
    const uint64_t at_upload = first_allocation(upload), at_download = first_allocation(download);
    REQUIRE(at_upload > 0);
    REQUIRE(at_download > 0);
    for (const int32_t result : {VK_ERROR_OUT_OF_HOST_MEMORY, VK_ERROR_OUT_OF_DEVICE_MEMORY}) {
      CAPTURE(result);
      for (auto& x : data) x = std::byte(rng() & 0xff);
      std::fill(back.begin(), back.end(), std::byte{0x5a});
      const detail::HostCopyCounts before = copies.counts();
      layer().arm(at_upload, result, "vkAllocateMemory");
      upload();
      CHECK(layer().injected() == 1);
      layer().disarm();
      layer().arm(at_download, result, "vkAllocateMemory");
      download();
      CHECK(layer().injected() == 1);
      layer().disarm();
      const detail::HostCopyCounts after = copies.counts();
      CHECK(after.refused - before.refused == 2);
      CHECK(after.staged - before.staged == 2);
      CHECK(after.imported == before.imported);
      CHECK(back[0] == std::byte{0x5a});  // the byte before the read's destination
      CHECK(std::memcmp(back.data() + 1, data.data() + 1, bytes - 1) == 0);
    }
  }
  TEST_CASE("a buffer refused for memory while the pool keeps others: the pool released, the allocation tried again") {
    (void)layer();  // in the chain before the engine's instance
    const test::ExpectedMessages loader_notices("VK_LAYER_VKGEMM_fault");
    auto e = test::make_engine();
    detail::BufferPool& pool = *detail::Access::impl(*e).buffer_pool;
    // Where a new buffer's allocation comes among its calls (counting, nothing failed).
    layer().arm(0, 0, nullptr);
    (void)e->create_buffer(3 << 20);
    layer().disarm();
    uint64_t at = 0;
    for (uint64_t n = 1; const char* f = layer().call(n); ++n) {
      if (std::string_view(f) == "vkAllocateMemory") {
        at = n;
        break;
      }
    }
    REQUIRE(at > 0);
    for (const bool kept : {true, false}) {
      CAPTURE(kept);
      pool.clear();
      if (kept) (void)e->create_buffer(1 << 20);  // freed at once: kept
      REQUIRE(pool.count() == (kept ? 1u : 0u));
      layer().arm(at, VK_ERROR_OUT_OF_DEVICE_MEMORY, "vkAllocateMemory");
      if (kept) {
        Buffer b = e->create_buffer(5 << 20);  // refused once, then made once the pool let go
        CHECK(b.size() == uint64_t{5} << 20);
        CHECK(pool.count() == 0);
      } else {
        test::expect_error([&] { (void)e->create_buffer(5 << 20); }, ErrorCode::out_of_memory, "");
      }
      CHECK(layer().injected() == 1);
      layer().disarm();
    }
  }
}
