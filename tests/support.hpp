// What every device test shares: one engine per test process with validation on (any message fails the
// running test), the seed of the run, and check_product(), which runs one product the careful way.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <doctest/doctest.h>

#include "vkgemm/vkgemm.hpp"

namespace vkgemm::test {

// Runs `f` and expects a vkgemm::Error with `code` whose message contains `words`; any other outcome fails
// the running test, naming what happened instead.
template <typename F>
void expect_error(F&& f, ErrorCode code, const std::string& words) {
  try {
    f();
    FAIL("no error was raised; expected ", std::string(to_string(code)), " mentioning \"", words, "\"");
  } catch (const Error& e) {
    CHECK_MESSAGE(e.code() == code, "got ", std::string(to_string(e.code())), ": ", std::string(e.what()));
    CHECK_MESSAGE(std::string(e.what()).find(words) != std::string::npos, "message: ", std::string(e.what()));
  }
}

// A case that cannot run here says why and returns: skip("...") prints "SKIPPED: <case>: <why>", appends
// that line to the file VKGEMM_TEST_SKIP_LOG names (tools/run-tests.sh lists them at the end), and makes
// the process exit kSkipExitCode when nothing failed, which CTest reports as a skip.
constexpr int kSkipExitCode = 77;
void skip(const std::string& why);
uint64_t skipped_cases();
std::string current_case_name();  // the running test case (tests/main.cpp)

// The engine under test: VK_LAYER_KHRONOS_validation on, on VKGEMM_DEVICE or the best device.
Engine& engine();
// Destroys engine()'s engine (the next engine() makes another). The runner calls it before it counts validation
// messages, so those of the teardown count too, and so the teardown runs in main, not among the exit handlers
// of the driver and the layer (at exit, on NVIDIA's driver under validation 1.4.309, the plan suite's process
// crashed after every case had passed).
void release_engine();
// Another engine with `options` and validation on, its messages failing the running test as engine()'s
// do: for tests that need an engine of their own (one created under VKGEMM_TEST_* limits).
std::unique_ptr<Engine> make_engine(EngineOptions options = {});
// make_engine() on a device whose maxComputeWorkGroupCount, maxStorageBufferRange and maxMemoryAllocationSize
// read as at most `max_groups`, `max_range` and `max_allocation` (0: the device's own), through
// VKGEMM_TEST_MAX_GROUP_COUNT, VKGEMM_TEST_MAX_STORAGE_RANGE and VKGEMM_TEST_MAX_ALLOCATION: the limits' paths
// on any device.
std::unique_ptr<Engine> engine_with_limits(uint32_t max_groups, uint64_t max_range, uint64_t max_allocation = 0);
// `make()`'s result (an engine made in it) with the host panels' knobs set while it runs: host products cut
// into panels of `lines` wherever the rule allows, every copy one `path` ("import": every page imported;
// "staging": the staging rings, their memcpy spread over `copy_threads` host threads where not 0)
// (VKGEMM_TEST_HOST_PANELS, VKGEMM_TEST_HOST_COPIES and VKGEMM_TEST_COPY_THREADS, read when an engine is made;
// docs/design/host-copies.md).
template <typename Make>
auto with_panels(uint64_t lines, Make&& make, const char* path = "import", unsigned copy_threads = 0) {
  setenv("VKGEMM_TEST_HOST_COPIES", path, 1);
  setenv("VKGEMM_TEST_HOST_PANELS", std::to_string(lines).c_str(), 1);
  if (copy_threads) setenv("VKGEMM_TEST_COPY_THREADS", std::to_string(copy_threads).c_str(), 1);
  struct Unset {
    ~Unset() {
      unsetenv("VKGEMM_TEST_HOST_COPIES");
      unsetenv("VKGEMM_TEST_HOST_PANELS");
      unsetenv("VKGEMM_TEST_COPY_THREADS");
    }
  } unset;
  return make();
}
// Messages validation has reported in this process so far.
uint64_t validation_messages();

// While one lives, messages on the tests' engines (and the application's instance, app_vulkan.hpp) that contain
// `words` are counted here instead of failing the test: for the one message a driver or the loader sends on
// purpose (Mesa reports the error it returns from vkAllocateMemory, VK_ERROR_OUT_OF_DEVICE_MEMORY, through the
// debug messenger; the loader names a layer enabled from the environment). Any other still fails.
class ExpectedMessages {
 public:
  explicit ExpectedMessages(std::string words);
  explicit ExpectedMessages(std::vector<std::string> words);  // a message containing any of them
  ~ExpectedMessages();
  ExpectedMessages(const ExpectedMessages&) = delete;
  ExpectedMessages& operator=(const ExpectedMessages&) = delete;
  uint64_t seen() const;
};
// Whether `message` is one an ExpectedMessages alive expects (counted there).
bool expected_message(std::string_view message);

// The seed of this run: VKGEMM_TEST_SEED when set, else fresh; printed at start and on every failure.
uint64_t run_seed();
// A generator for one test case, derived from the run seed and the case's name.
std::mt19937_64 case_rng(const std::string& case_name);

// Which products of a large grid this run checks. Every one, unless VKGEMM_TEST_GRID_SAMPLE=N (N > 1) asks
// for one in N. The rule: a pass whose job is not the kernels' results on every shape samples. The
// sanitizer pass checks the host's memory and undefined behaviour on every path of a call, synchronization
// validation the hazards between the commands a call records, GPU-assisted validation each shader's memory
// accesses on every path; each path is taken by many products of a grid, so those three sample
// (tools/run-tests.sh, tests/CMakeLists.txt), and the core pass checks the whole grid. The offset comes from the run seed and the case's name, so each run checks
// another slice and VKGEMM_TEST_SEED repeats it.
struct GridSample {
  uint64_t every = 1, offset = 0;
  bool takes(uint64_t index) const { return index % every == offset; }
};
GridSample grid_sample(const std::string& case_name);

// Every activation of the fused epilogue, in the table's order (vkgemm/names.hpp): the suites that loop over
// these test an activation added there with no change of their own (docs/architecture.md, "Adding an
// activation").
std::vector<Activation> every_activation();

// The quick tier's sample of a suite's costliest items (tools/run-tests.sh --quick sets
// VKGEMM_TEST_QUICK_SAMPLE=N): items that each build pipelines of their own on a cold shader cache (the
// tuner's candidates) or move hundreds of megabytes (the products past maxStorageBufferRange). One in N of a
// list, never none (a list of N or fewer items keeps one), another slice each run by the run seed and the
// case's name. Unset (CI's passes: core, sync, GPU-AV, the sanitizers), every item runs. A suite that samples
// says how many items it ran of how many.
struct QuickSample {
  uint64_t every = 1, offset = 0;
  bool takes(uint64_t index, uint64_t count) const;  // item `index` of a list of `count`
};
QuickSample quick_sample(const std::string& case_name);

struct ProductCheck {
  bool passed = false;
  std::string detail;  // what went wrong, for the failure message
  GemmTiming timing;   // what the engine reported (kernel, configuration, pieces, times)
};

// Multiplies fresh random m x k and k x n matrices on the device, each placed at an offset
// inside a larger buffer between guard regions; C is poisoned first (NaN, or a sentinel for int32).
// Passes when C matches the CPU reference (see reference.hpp) and every guard is untouched.
// The vkgemm program (VKGEMM_BINARY) run with `args` under validation (VKGEMM_VALIDATION=1).
struct ProgramOutcome {
  int code = -1;       // the exit code; -1 when it died from a signal
  std::string output;  // stdout and stderr together
};
ProgramOutcome run_program(const std::string& args);

// `skew` elements of offset past an aligned start: 0 lets kernels use vector loads where the shape allows,
// an odd skew forces their element-by-element paths. C has default_output_type(type) (f32 for f16 inputs).
ProductCheck check_product(DataType type, uint32_t m, uint32_t n, uint32_t k, const GemmOptions& options,
                           std::mt19937_64& rng, uint32_t skew = 3);
// The same with C of `output` type (f16 inputs: f32 or f16; options.f16_accumulate widens the bound).
ProductCheck check_product(DataType input, DataType output, uint32_t m, uint32_t n, uint32_t k,
                           const GemmOptions& options, std::mt19937_64& rng, uint32_t skew = 3);

// Random elements as the tests draw them: floats uniform in [-1, 1) (f16, bf16: rounded to nearest even),
// int32 in [-8, 8], i8 and u8 over their whole range (the int32 poison stays out of reach for k below 2^17).
std::vector<std::byte> random_elements(DataType type, uint64_t count, std::mt19937_64& rng);
// n floats uniform in [-1, 1).
std::vector<float> random_floats(size_t n, std::mt19937_64& rng);

// The epilogue's fourth operand for desc, random: per_column dequantization scales (positive, 1/128 to 1/8)
// then the bias (random_elements of its type), whole f32 words where there are scales; empty without either.
std::vector<std::byte> epilogue_vectors(const GemmDesc& desc, std::mt19937_64& rng);

// The full BLAS call (blas.hpp), checked the same careful way: each operand's whole span (ld and stride
// gaps included) at an offset `skew` elements past an aligned one (as check_product's: 3 by default, 0
// lets lds and strides of multiples of 4 take vec4 loads) between guard regions; A, B and C0 random with
// their gaps poisoned (so reading a gap shows), A and B all poison when alpha = 0 (they must not be read),
// C0 all poison when beta = 0 (it must not be read). Passes when C matches compare_with_reference(desc, ...),
// the gaps of C are unchanged and every guard is untouched.
ProductCheck check_gemm_call(const GemmDesc& desc, const GemmOptions& options, std::mt19937_64& rng,
                             uint32_t skew = 3);
// The same on another engine (make_engine()).
ProductCheck check_gemm_call(Engine& engine, const GemmDesc& desc, const GemmOptions& options, std::mt19937_64& rng,
                             uint32_t skew = 3);
// One line naming a call: type, layout, ops, sizes, lds, batch and strides, alpha and beta.
std::string describe(const GemmDesc& desc);

}  // namespace vkgemm::test
