// Pipeline statistics (Engine::pipeline_statistics, vkgemm run --stats): on a device with
// VK_KHR_pipeline_executable_properties every kernel's pipelines report statistics; without it the call
// and the option fail with unsupported_feature naming the extension and the device. The report's lookups
// are checked on made-up statistics of the kinds NVIDIA, AMD and Intel report.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "support.hpp"

using namespace vkgemm;

namespace {

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

GemmDesc square(uint32_t n, DataType type = DataType::f32) {
  GemmDesc d;
  d.type = type;
  d.m = d.n = d.k = n;
  return d;
}

PipelineStatistic stat(std::string pass, std::string name, std::variant<bool, int64_t, uint64_t, double> value) {
  PipelineStatistic s;
  s.pass = std::move(pass);
  s.name = std::move(name);
  s.value = value;
  return s;
}

}  // namespace

TEST_SUITE("statistics") {
  TEST_CASE("every kernel's pipelines report statistics, or the call says the device has none") {
    Engine& engine = test::engine();
    const DeviceInfo& dev = engine.device();
    if (!dev.pipeline_statistics) {
      MESSAGE(dev.name, " (", dev.driver_info, ") has no VK_KHR_pipeline_executable_properties: the error path");
      for (const Kernel kernel : {Kernel::naive, Kernel::tiled, Kernel::blocked, Kernel::automatic}) {
        test::expect_error([&] { engine.pipeline_statistics(square(64), {.kernel = kernel}); },
                           ErrorCode::unsupported_feature, "VK_KHR_pipeline_executable_properties");
        test::expect_error([&] { engine.pipeline_statistics(square(64), {.kernel = kernel}); },
                           ErrorCode::unsupported_feature, dev.name);
      }
      return;
    }
    struct Case {
      const char* what;
      GemmDesc desc;
      GemmOptions options;
      Kernel kernel;
      bool reduce;
    };
    GemmDesc tall = square(64);
    tall.k = 4096;
    std::vector<Case> cases = {
        {"naive", square(64), {.kernel = Kernel::naive, .tile = 8}, Kernel::naive, false},
        {"tiled", square(64), {.kernel = Kernel::tiled, .tile = 16}, Kernel::tiled, false},
        {"tiled i32", square(64, DataType::i32), {.kernel = Kernel::tiled}, Kernel::tiled, false},
        {"blocked", square(256), {.kernel = Kernel::blocked}, Kernel::blocked, false},
        {"blocked split-K", tall,
         {.kernel = Kernel::blocked,
          .blocked = {.bm = 64, .bn = 64, .bk = 8, .tm = 8, .tn = 4, .lanes_n = 8, .split_k = 4}},
         Kernel::blocked, true},
    };
    if (dev.float64) cases.push_back({"tiled f64", square(64, DataType::f64), {.kernel = Kernel::tiled}, Kernel::tiled, false});
    for (const auto& c : cases) {
      CAPTURE(c.what);
      const PipelineReport r = engine.pipeline_statistics(c.desc, c.options);
      CHECK(r.kernel == c.kernel);
      CHECK(!r.config.empty());
      REQUIRE(r.find("", "main") != nullptr);  // at least one statistic of the main pass
      CHECK((r.find("", "reduce") != nullptr) == c.reduce);
      for (const auto& s : r.statistics) {
        CHECK(!s.name.empty());
        CHECK(!s.executable.empty());
        CHECK(!s.value_string().empty());
      }
    }
    // What the planner chose for gemm is what the statistics describe.
    GemmDesc d = square(96);
    std::vector<float> a(96 * 96, 1.0f), b(96 * 96, 1.0f), c(96 * 96);
    const GemmTiming t = engine.gemm(d, a.data(), b.data(), c.data());
    const PipelineReport r = engine.pipeline_statistics(d);
    CHECK(r.kernel == t.kernel);
    CHECK(r.config == t.config);
  }

  // A fused epilogue is its own pipeline (a specialization constant): the report describes that one, not the
  // plain product's, wherever the driver reports the code's size.
  TEST_CASE("a fused epilogue's report describes its own pipeline") {
    Engine& engine = test::engine();
    const DeviceInfo& dev = engine.device();
    if (!dev.pipeline_statistics) return test::skip(dev.name + " has no VK_KHR_pipeline_executable_properties");
    GemmDesc fused = square(256);
    fused.epilogue.activation = Activation::gelu_tanh;
    const PipelineReport plain_report = engine.pipeline_statistics(square(256), {.kernel = Kernel::blocked});
    const PipelineReport fused_report = engine.pipeline_statistics(fused, {.kernel = Kernel::blocked});
    const PipelineStatistic* plain_size = plain_report.find("binary size");
    const PipelineStatistic* fused_size = fused_report.find("binary size");
    if (!plain_size || !fused_size) {
      return test::skip(dev.name + " reports no binary size: the fused pipeline's report is not told apart");
    }
    CHECK(plain_size->value_string() != fused_size->value_string());
  }

  // An emulated product's report is its sequence's pipelines, each pass named by its shader.
  TEST_CASE("an emulated product's report is its sequence's pipelines") {
    Engine& engine = test::engine();
    const DeviceInfo& dev = engine.device();
    if (!dev.pipeline_statistics) return test::skip(dev.name + " has no VK_KHR_pipeline_executable_properties");
    try {
      const PipelineReport emulated = engine.pipeline_statistics(square(64, DataType::f64), {.kernel = Kernel::ozaki});
      CHECK(emulated.kernel == Kernel::ozaki);
      CHECK(emulated.find("", "main") == nullptr);
      bool split = false;
      for (const auto& s : emulated.statistics) split = split || (s.pass == s.shader && s.shader.rfind("ozaki_split", 0) == 0);
      CHECK(split);
    } catch (const Error& e) {
      const bool unsupported = e.code() == ErrorCode::unsupported_feature || e.code() == ErrorCode::unsupported_config ||
                               e.code() == ErrorCode::unsupported_type;
      if (!unsupported) throw;
      test::skip(std::string("the emulated product does not run on ") + dev.name + ": " + e.what());
    }
  }

  TEST_CASE("an empty product runs no pipeline, and bad arguments fail as gemm's do") {
    Engine& engine = test::engine();
    GemmDesc bad = square(8);
    bad.m = -1;
    test::expect_error([&] { engine.pipeline_statistics(bad); }, ErrorCode::negative_dimension, "m");
    if (!engine.device().pipeline_statistics) return;
    CHECK(engine.pipeline_statistics(square(0)).statistics.empty());
    test::expect_error([&] { engine.pipeline_statistics(square(64, DataType::i32), {.kernel = Kernel::blocked}); },
                       ErrorCode::unsupported_type, "blocked");
  }

  TEST_CASE("the report's lookups: by name, by pass, and the register count of each vendor's naming") {
    PipelineReport nvidia;
    nvidia.statistics = {stat("main", "Shared Memory Size", uint64_t{16384}), stat("main", "Register Count", uint64_t{128}),
                         stat("main", "Spilled Registers", uint64_t{0}), stat("reduce", "Register Count", uint64_t{16})};
    CHECK(nvidia.registers() == 128u);
    REQUIRE(nvidia.find("register count", "reduce") != nullptr);
    CHECK(nvidia.find("register count", "reduce")->number() == 16.0);
    CHECK(nvidia.find("shared memory")->value_string() == "16384");
    CHECK(nvidia.find("occupancy") == nullptr);

    PipelineReport amd;  // RADV: spills named before the counts must not be taken for them
    amd.statistics = {stat("main", "Spilled VGPRs", uint64_t{4}), stat("main", "VGPRs", uint64_t{96}),
                      stat("main", "SGPRs", uint64_t{40})};
    CHECK(amd.registers() == 96u);

    PipelineReport other;
    other.statistics = {stat("main", "Instruction Count", int64_t{300}), stat("main", "Uses barriers", true),
                        stat("main", "Occupancy", 0.5)};
    CHECK(!other.registers().has_value());
    CHECK(other.find("barriers")->value_string() == "true");
    CHECK(other.find("barriers")->number() == 1.0);
    CHECK(other.find("occupancy")->value_string() == "0.5");
  }

  TEST_CASE("vkgemm run --stats prints them, or fails before the product saying why") {
    const auto r = test::run_program("run --m 48 --n 40 --k 32 --kernel tiled --repeat 1 --warmup 0 --stats");
    if (test::engine().device().pipeline_statistics) {
      CHECK(r.code == 0);
      CHECK(contains(r.output, "pipeline: main pass, tiled_f32"));
    } else {
      CHECK(r.code == 2);
      CHECK(contains(r.output, "VK_KHR_pipeline_executable_properties"));
      CHECK(!contains(r.output, "gpu time"));  // refused before the product ran
    }
    const auto plain = test::run_program("devices");
    CHECK(contains(plain.output, "pipeline stats"));
  }
}
