// vkgemm peak: the measured ceilings (vkgemm/peak.hpp) on the test device, and `vkgemm peak --json` end to
// end. On lavapipe: every row it can run is positive, finite and plausible; each dispatch lasted about the
// calibration's target (so the work was grown, and counted, as the shaders run it); rows it cannot run say why.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "bench/bench_case.hpp"
#include "bench/bench_ceiling.hpp"
#include "engine/engine_impl.hpp"
#include "peak/timed_dispatch.hpp"
#include "support.hpp"
#include "vkgemm/peak.hpp"

using namespace vkgemm;

namespace {

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

const PeakMeasurement* find_row(const std::vector<PeakMeasurement>& rows, const std::string& name) {
  for (const auto& m : rows) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

PeakOptions quick() {
  PeakOptions o;
  o.repeat = 3;
  o.target_ms = 5.0;
  o.warm_ms = 0.0;
  return o;
}

void check_measured(const PeakMeasurement& m, const PeakOptions& o) {
  INFO(m.name, ": ", m.value, " ", m.unit, ", ", m.median_ms, " ms, ", m.detail);
  CHECK(m.measured);
  CHECK(std::isfinite(m.value));
  CHECK(m.value > 0.0);
  CHECK(m.gpu_ms.size() == o.repeat);
  CHECK(m.median_ms > 0.0);
  CHECK(m.work > 0.0);
  CHECK_FALSE(m.detail.empty());
}

// The FLOPs of one dispatch of an FMA row, from its detail ("G workgroups of W, I iterations of C chains x V
// vec4 FMAs"): an FMA is 2 FLOPs on each of a vec4's 4 lanes.
double described_fma_flops(const std::string& detail) {
  double groups = 0, width = 0, iterations = 0, chains = 0, fmas = 0;
  const int read = std::sscanf(detail.c_str(), "%lf workgroups of %lf, %lf iterations of %lf chains x %lf vec4 FMAs",
                               &groups, &width, &iterations, &chains, &fmas);
  REQUIRE_MESSAGE(read == 5, "an FMA row's detail in an unexpected form: ", detail);
  return groups * width * iterations * chains * fmas * 4.0 * 2.0;
}

}  // namespace

TEST_SUITE("peak") {
  TEST_CASE("every row is measured or says why; values are positive, finite and plausible") {
    Engine& engine = test::engine();
    const DeviceInfo& dev = engine.device();
    if (!dev.timestamps) {
      MESSAGE("skipped: the device has no timestamps");
      return;
    }
    const PeakOptions o = quick();
    const auto rows = measure_peaks(engine, o);
    for (const auto& m : rows) {
      INFO(m.name, ": ", m.reason);
      CHECK((m.unit == "TFLOP/s" || m.unit == "TOP/s" || m.unit == "GB/s"));
      if (!m.measured && m.derived_from.empty()) {
        CHECK((contains(m.reason, "not available: ") || contains(m.reason, "not measured: ")));
      }
    }
    const PeakMeasurement* f32 = find_row(rows, "f32 FMA");
    REQUIRE(f32 != nullptr);
    check_measured(*f32, o);
    // Calibration grew the loop until a dispatch lasted the target (a dispatch that cannot reach it hits the
    // iteration cap, far beyond any device here): the iteration count the FLOPs are counted from is real.
    // A quarter of it: a host busy with other work slows some dispatches (the calibrating ones among them).
    CHECK(f32->median_ms > 0.25 * o.target_ms);
    // The FLOPs recounted from what the row says ran (workgroups x invocations x iterations x chains x vec4
    // FMAs, 8 FLOPs each), and the value from them and the median: a count off by any factor fails here,
    // however fast or loaded the device.
    CHECK(f32->work == doctest::Approx(described_fma_flops(f32->detail)).epsilon(1e-12));
    CHECK(f32->value == doctest::Approx(f32->work / f32->median_ms * 1e-9).epsilon(1e-9));
    // A CPU driver: at least 0.2 GFLOP/s (lavapipe alone on 2 cores: 132; the suite runs serially, as other
    // tests beside it cut that to 0.45) and at most 20 TFLOP/s; anything: at most 2 PFLOP/s of f32 FMA.
    if (dev.type == DeviceType::cpu) {
      CHECK(f32->value > 2e-4);
      CHECK(f32->value < 20.0);
    }
    CHECK(f32->value < 2000.0);
    const PeakMeasurement* f16 = find_row(rows, "f16 FMA (packed)");
    REQUIRE(f16 != nullptr);
    if (dev.float16) {
      check_measured(*f16, o);
    } else {
      CHECK(contains(f16->reason, "shaderFloat16"));
    }
    // f64 FMA: the blocked kernel's f64 ceiling, where the device has shaderFloat64 (lavapipe has).
    const PeakMeasurement* f64 = find_row(rows, "f64 FMA");
    REQUIRE(f64 != nullptr);
    if (dev.float64) {
      check_measured(*f64, o);
      CHECK(f64->median_ms > 0.25 * o.target_ms);
      CHECK(f64->work == doctest::Approx(described_fma_flops(f64->detail)).epsilon(1e-12));
      CHECK(f64->value < 2000.0);
    } else {
      CHECK_FALSE(f64->measured);
      CHECK(contains(f64->reason, "not available: the device has no shaderFloat64"));
    }
    // The emulated rows, right after f64 FMA: derived from an int8 matrix row where one was measured, else
    // saying why (lavapipe 22 lists no cooperative matrices).
    for (size_t i = 0; i < rows.size(); ++i) {
      if (rows[i].name != "f64 FMA") continue;
      REQUIRE(i + 2 < rows.size());
      CHECK(rows[i + 1].name == "f64 emulated (ozaki)");
      CHECK(rows[i + 2].name == "f32 emulated (ozaki)");
      for (const PeakMeasurement& e : {rows[i + 1], rows[i + 2]}) {
        INFO(e.name, ": ", e.reason, e.detail);
        CHECK_FALSE(e.measured);
        if (e.derived_from.empty()) CHECK(contains(e.reason, "not available: "));
        else CHECK(contains(e.detail, "derived, not timed"));
      }
    }
    const PeakMeasurement* copy = find_row(rows, "copy");
    REQUIRE(copy != nullptr);
    check_measured(*copy, o);
    CHECK(copy->value < 100000.0);  // 100 TB/s: no device is near it
    const PeakMeasurement* cache = find_row(rows, "cache read");
    REQUIRE(cache != nullptr);
    check_measured(*cache, o);
    CHECK(cache->value < 1000000.0);  // 1 PB/s
    // The host's copies across the bus, timed on the host's clock: staged always, imported where the device
    // imports host memory (lavapipe 22 does); in that order, after the device's own rows.
    const char* host_rows[] = {"host upload (staged)", "host download (staged)", "host upload (imported)",
                               "host download (imported)"};
    for (size_t i = 0; i < 4; ++i) {
      const PeakMeasurement* h = find_row(rows, host_rows[i]);
      REQUIRE_MESSAGE(h != nullptr, host_rows[i]);
      INFO(h->name, ": ", h->reason, " ", h->value, " GB/s, ", h->median_ms, " ms, ", h->detail);
      CHECK(h - cache == std::ptrdiff_t(i + 1));
      if (i >= 2 && !dev.host_import) {
        CHECK(contains(h->reason, "VK_EXT_external_memory_host"));
        continue;
      }
      CHECK(h->measured);
      CHECK(h->gpu_ms.empty());  // no GPU time spans a host copy
      CHECK(std::isfinite(h->value));
      CHECK(h->value > 0.0);
      CHECK(h->value < 10000.0);  // 10 TB/s: past any host's memory
      CHECK(h->median_ms > 0.0);
      CHECK(h->work == doctest::Approx(h->value * 1e9 * h->median_ms * 1e-3));
    }
    for (const auto& m : rows) {
      if (m.name.rfind("coopmat ", 0) != 0 || !m.measured) continue;
      check_measured(m, o);
      // A CPU driver runs MMAs on its vector units: well above their f32 FMA ceiling means the driver hoisted
      // work the count includes (lavapipe 26 read 10x f32 FMA before the shader rescaled A each step). Integer
      // MMAs count two operations a multiply-add on bytes, which the same units pack more of: Mesa 26's
      // lavapipe reads them at up to 2x its f32 FMA rate, so they get 4x.
      const bool integer = m.unit == "TOP/s";
      if (dev.type == DeviceType::cpu) CHECK(m.value < (integer ? 4.0 : 1.5) * f32->value);
    }
    if (!dev.coopmat_khr) {
      const PeakMeasurement* coopmat = find_row(rows, "coopmat");
      REQUIRE(coopmat != nullptr);
      CHECK_FALSE(coopmat->measured);
      CHECK(contains(coopmat->reason, "not available: the device has no VK_KHR_cooperative_matrix"));
    }
    // Integer rows count operations, not FLOPs; the MMA rows of int8 shapes too.
    const PeakMeasurement* dot = find_row(rows, "int8 dot product (packed)");
    REQUIRE(dot != nullptr);
    CHECK(dot->unit == "TOP/s");
    if (dot->measured) {
      check_measured(*dot, o);
      if (dev.type == DeviceType::cpu) CHECK(dot->value < 20.0);
    } else {
      CHECK(contains(dot->reason, "not available: "));
    }
    for (const auto& m : rows) {
      if (m.name.rfind("coopmat ", 0) != 0) continue;
      const bool integer = contains(m.name, "i8*i8+") || contains(m.name, "u8*u8+");
      CHECK(m.unit == (integer ? "TOP/s" : "TFLOP/s"));
      // bf16 shapes are measured where the build and the device can (GL_EXT_bfloat16,
      // shaderBFloat16CooperativeMatrix), else say which is missing.
      if (contains(m.name, "bf16*bf16+f32") && !m.measured) {
        CHECK((contains(m.reason, "GL_EXT_bfloat16") || contains(m.reason, "shaderBFloat16CooperativeMatrix")));
      }
    }
    // The MMA fed from shared memory: one row for fp32 and one for fp16 sums where the device has KHR
    // matrices, on its largest f16 shape of that C, measured or saying why; below the shape's own MMA rate.
    if (dev.coopmat_khr) {
      const std::string fed_suffix = " (subgroup, from shared memory)";
      for (const char* c : {"f32", "f16"}) {
        const std::string tail = fmt::format("f16*f16+{}{}", c, fed_suffix);
        const PeakMeasurement* fed = nullptr;
        for (const auto& m : rows) fed = !fed && contains(m.name, tail) ? &m : fed;
        REQUIRE_MESSAGE(fed != nullptr, tail);
        INFO(fed->name, ": ", fed->reason, fed->detail);
        if (!fed->measured) {
          CHECK(contains(fed->reason, "not available: "));
          continue;
        }
        check_measured(*fed, o);
        const PeakMeasurement* alone = find_row(rows, fed->name.substr(0, fed->name.size() - fed_suffix.size()));
        REQUIRE(alone != nullptr);
        if (alone->measured) CHECK(fed->value < 1.5 * alone->value);
      }
    }
    // coopmat2: one row saying why where the device has no VK_NV_cooperative_matrix2, else the workgroup-scope
    // MMA rows of the kernel's tiles (fp32 and fp16 sums), alone and fed by loads every step.
    const PeakMeasurement* coopmat2 = find_row(rows, "coopmat2");
    if (!dev.coopmat2) {
      REQUIRE(coopmat2 != nullptr);
      CHECK_FALSE(coopmat2->measured);
      CHECK(contains(coopmat2->reason, "VK_NV_cooperative_matrix2"));
    } else {
      CHECK(coopmat2 == nullptr);
      for (const char* name : {"coopmat2 128x256x64 f16*f16+f32 (workgroup)", "coopmat2 256x256x32 f16*f16+f16 (workgroup)",
                               "coopmat2 128x256x64 f16*f16+f32 (workgroup, loaded)",
                               "coopmat2 256x256x32 f16*f16+f16 (workgroup, loaded)"}) {
        const PeakMeasurement* row = find_row(rows, name);
        REQUIRE(row != nullptr);
        if (row->measured) check_measured(*row, o);
      }
    }
  }

  TEST_CASE("the emulated rows: the fastest int8 matrix row over the default moduli's products, or why not") {
    DeviceInfo dev;
    dev.float64 = true, dev.storage8 = true;
    const auto row = [](std::string name, std::string inputs, double value, bool measured) {
      PeakMeasurement m;
      m.name = std::move(name), m.inputs = std::move(inputs), m.value = value, m.measured = measured;
      m.unit = inputs == "i8" ? "TOP/s" : "TFLOP/s";
      return m;
    };
    const std::vector<PeakMeasurement> rows = {
        row("f64 FMA", "", 30.0, true),
        row("coopmat 16x16x16 f16*f16+f32", "f16", 900.0, true),   // not int8: never the source
        row("coopmat 16x8x32 i8*i8+i32", "i8", 500.0, true),
        row("coopmat 16x16x32 i8*i8+i32", "i8", 609.5, true),      // the fastest int8 row
        row("coopmat 8x8x32 i8*i8+i32", "i8", 700.0, false),       // not measured: no value to take
        row("coopmat 16x16x32 u8*u8+u32", "u8", 800.0, true),      // unsigned: not the emulation's products
    };
    const auto derived = emulation_rows(dev, rows);
    REQUIRE(derived.size() == 2);
    CHECK(derived[0].name == "f64 emulated (ozaki)");
    CHECK(derived[1].name == "f32 emulated (ozaki)");
    for (const PeakMeasurement& m : derived) {
      INFO(m.name, ": ", m.detail);
      CHECK_FALSE(m.measured);
      CHECK(m.unit == "TFLOP/s");
      CHECK(m.derived_from == "coopmat 16x16x32 i8*i8+i32");
      CHECK(contains(m.detail, "derived, not timed"));
      CHECK(contains(m.detail, "coopmat 16x16x32 i8*i8+i32"));
    }
    // The default moduli's products (the span guard's magnitude product runs only where the lines' levels do
    // not decide: not counted, so that no input passes the ceiling).
    CHECK(derived[0].products == 14u);
    CHECK(derived[0].value == 609.5 / 14);
    CHECK(derived[1].products == 7u);
    CHECK(derived[1].value == 609.5 / 7);
    // bench takes them as ceilings, derived though they are, with their products.
    const auto ceilings = vkgemm::cli::bench::ceilings_from(derived);
    REQUIRE(ceilings.size() == 2);
    CHECK(ceilings[0].name == "f64 emulated (ozaki)");
    CHECK(ceilings[0].gflops == doctest::Approx(609.5 / 14 * 1e3));
    CHECK(ceilings[0].int8_products == 14u);
    // No int8 matrix row measured (no int8 matrix units): no value, and why.
    const std::vector<PeakMeasurement> no_int8 = {rows[0], rows[1], rows[4], rows[5]};
    for (const PeakMeasurement& m : emulation_rows(dev, no_int8)) {
      CHECK(m.derived_from.empty());
      CHECK(m.value == 0.0);
      CHECK(contains(m.reason, "not available: no int8 matrix-unit row"));
    }
    // No shaderFloat64 (or no 8-bit storage): the device cannot run the emulation at all.
    for (bool* missing : {&dev.float64, &dev.storage8}) {
      *missing = false;
      for (const PeakMeasurement& m : emulation_rows(dev, rows)) {
        CHECK(m.derived_from.empty());
        CHECK(m.value == 0.0);
        CHECK(contains(m.reason, "shaderFloat64 and storageBuffer8BitAccess"));
      }
      *missing = true;
    }
  }

  TEST_CASE("every row's pipeline is built up front, side by side: the measurements build none, and each row has one") {
    auto owned = test::make_engine();  // its own: no pipeline built before
    Engine& engine = *owned;
    if (!engine.device().timestamps) {
      MESSAGE("skipped: the device has no timestamps");
      return;
    }
    detail::EngineImpl& impl = detail::Access::impl(engine);
    const size_t before = impl.pipelines->created();
    size_t built = 0;
    {
      const std::lock_guard lock(impl.lock);
      built = detail::peak::prepare_pipelines(detail::peak_context(impl), quick());
      CHECK(detail::peak::prepare_pipelines(detail::peak_context(impl), quick()) == 0);
    }
    CHECK(impl.pipelines->created() - before == built);
    const auto rows = measure_peaks(engine, quick());
    CHECK(impl.pipelines->created() - before == built);  // every row found its pipeline built
    size_t timed = 0;  // the rows that ran a kernel (not the derived ones, nor the host's copies), each its own pipeline
    for (const auto& m : rows) timed += m.measured && m.derived_from.empty() && m.name.rfind("host ", 0) != 0;
    CHECK(built == timed);
    CHECK(built >= 2);  // f32 FMA and copy at least
  }

  TEST_CASE("the cache row reads every element it counts, where peak_cache.comp says it does") {
    // Each invocation's XOR of the 16-byte words it read, against the host's walk of the same indices over
    // a buffer of distinct words: a read skipped, repeated or at the wrong place changes some invocation's.
    Engine& engine = test::engine();
    if (!engine.device().timestamps) {
      MESSAGE("skipped: the device has no timestamps");
      return;
    }
    detail::EngineImpl& impl = detail::Access::impl(engine);
    const uint32_t groups = 3, passes = 5;
    const uint64_t bytes = 64 * 1024;
    detail::peak::PeakKernel k = detail::peak::cache_kernel(engine.device(), groups, bytes);
    REQUIRE(k.shape.constants.size() == 1);
    REQUIRE(k.shape.constants[0].name == "WG");
    const uint32_t wg = k.shape.constants[0].value, m = k.push.M, stride = k.push.N;
    REQUIRE(uint64_t{m} * 16 == bytes);
    CHECK(stride % wg == 0);
    CHECK((stride / wg) % 2 == 1);  // an odd number of blocks: every block visited before one comes back
    std::vector<uint32_t> words(bytes / 4);
    for (size_t i = 0; i < words.size(); ++i) words[i] = static_cast<uint32_t>(i * 2654435761u + 12345u);
    Buffer src = engine.create_buffer(bytes), dst = engine.create_buffer(uint64_t{groups} * wg * 16);
    engine.write(src, 0, words.data(), bytes);
    engine.fill(dst, 0, uint64_t{groups} * wg * 16, 0xdeadbeefu);
    k.src = {detail::Access::impl(src)->alloc.buffer.get(), 0, bytes};
    k.dst = {detail::Access::impl(dst)->alloc.buffer.get(), 0, VK_WHOLE_SIZE};
    k.push.K = passes;
    {
      const std::lock_guard lock(impl.lock);
      detail::peak::time_dispatches(detail::peak_context(impl), k, 0, 1);
    }
    std::vector<uint32_t> got(size_t{groups} * wg * 4);
    engine.read(dst, 0, got.data(), got.size() * 4);
    size_t wrong = 0;
    for (uint32_t g = 0; g < groups * wg; ++g) {
      uint32_t at = g & (m - 1), x[4] = {0, 0, 0, 0};
      for (uint32_t r = 0; r < passes * 8; ++r, at = (at + stride) & (m - 1)) {
        for (size_t c = 0; c < 4; ++c) x[c] ^= words[size_t{at} * 4 + c];
      }
      for (size_t c = 0; c < 4; ++c) wrong += got[size_t{g} * 4 + c] != x[c];
    }
    CHECK(wrong == 0);
    CHECK_THROWS_AS(detail::peak::cache_kernel(engine.device(), groups, 16 * wg), Error);  // fewer than 4 blocks
  }

  TEST_CASE("the work is counted from the iterations that ran: a longer target, more loops, as much more work") {
    // A count that missed the calibrated loop count would not grow with it. (Not the throughputs of the two
    // runs: on a host shared with other work, they differ by more than any bound a test could hold.)
    Engine& engine = test::engine();
    if (!engine.device().timestamps) {
      MESSAGE("skipped: the device has no timestamps");
      return;
    }
    PeakOptions short_run = quick(), long_run = quick();
    short_run.target_ms = 2.0;
    long_run.target_ms = 16.0;
    const auto a = measure_peaks(engine, short_run), b = measure_peaks(engine, long_run);
    for (const char* name : {"f32 FMA", "f16 FMA (packed)", "f64 FMA"}) {
      const PeakMeasurement *fa = find_row(a, name), *fb = find_row(b, name);
      REQUIRE(fa != nullptr);
      REQUIRE(fb != nullptr);
      if (!fa->measured) continue;  // no shaderFloat16 or shaderFloat64
      INFO(name, ": ", fa->detail, "; ", fb->detail);
      CHECK(fa->iterations >= 1);
      CHECK(fb->iterations > fa->iterations);
      CHECK(fb->work / fa->work == doctest::Approx(double(fb->iterations) / fa->iterations).epsilon(1e-12));
    }
  }

  TEST_CASE("bench's efficiency: each case against the ceiling of its type, kernel and sums") {
    using namespace vkgemm::cli::bench;
    Settings s;
    s.ceilings = {{"f32 FMA", 100.0}, {"f16 FMA (packed)", 200.0}, {"coopmat 16x16x16 f16*f16+f32", 1000.0},
                  {"coopmat 16x8x16 f16*f16+f32", 1500.0}, {"coopmat 16x16x16 f16*f16+f16", 3000.0}};
    const auto name = [&](DataType type, Kernel kernel, bool acc16) {
      const auto c = ceiling_for(s, type, kernel, acc16);
      return c ? c->name : std::string("none");
    };
    CHECK(name(DataType::f32, Kernel::blocked, false) == "f32 FMA");
    CHECK(name(DataType::f16, Kernel::tiled, false) == "f32 FMA");  // fp32 sums: the f32 FMA units
    CHECK(name(DataType::f16, Kernel::tiled, true) == "f16 FMA (packed)");
    CHECK(name(DataType::f16, Kernel::coopmat, false) == "coopmat 16x8x16 f16*f16+f32");  // the fastest shape
    CHECK(name(DataType::f16, Kernel::coopmat2, true) == "coopmat 16x16x16 f16*f16+f16");  // no workgroup row
    // coopmat2's workgroup-scope row is measured but not taken as a ceiling (bench_ceiling.hpp says why).
    s.ceilings.push_back({"coopmat2 128x256x64 f16*f16+f32 (workgroup)", 900.0});
    CHECK(name(DataType::f16, Kernel::coopmat2, false) == "coopmat 16x8x16 f16*f16+f32");
    // Nor the MMA fed from shared memory: a kernel's loop, not the matrix units' ceiling.
    s.ceilings.push_back({"coopmat 16x16x16 f16*f16+f32 (subgroup, from shared memory)", 2000.0});
    CHECK(name(DataType::f16, Kernel::coopmat, false) == "coopmat 16x8x16 f16*f16+f32");
    CHECK(name(DataType::i32, Kernel::tiled, false) == "none");
    // i8 and u8 on the matrix kernels: their own int8 shapes, the fastest; on tiled the packed dot products
    // (none where the device has none); naive: none.
    CHECK(name(DataType::i8, Kernel::coopmat2, false) == "none");
    CHECK(name(DataType::i8, Kernel::tiled, false) == "none");
    s.ceilings.push_back({"coopmat 16x16x32 i8*i8+i32", 4000.0});
    s.ceilings.push_back({"coopmat 16x8x32 i8*i8+i32", 2500.0});
    s.ceilings.push_back({"coopmat 16x16x32 u8*u8+u32", 3900.0});
    CHECK(name(DataType::i8, Kernel::coopmat2, false) == "coopmat 16x16x32 i8*i8+i32");
    CHECK(name(DataType::u8, Kernel::coopmat, false) == "coopmat 16x16x32 u8*u8+u32");
    CHECK(name(DataType::u8, Kernel::naive, false) == "none");
    s.ceilings.push_back({"int8 dot product (packed)", 700.0});
    CHECK(name(DataType::u8, Kernel::tiled, false) == "int8 dot product (packed)");
    CHECK(name(DataType::i8, Kernel::tiled, false) == "int8 dot product (packed)");
    CHECK(name(DataType::i8, Kernel::naive, false) == "none");
    CHECK(name(DataType::i8, Kernel::coopmat, false) == "coopmat 16x16x32 i8*i8+i32");
    // bf16 (fp32 sums): its own shapes on the matrix kernels, none where none was measured; f32 FMA elsewhere.
    CHECK(name(DataType::bf16, Kernel::coopmat, false) == "none");
    CHECK(name(DataType::bf16, Kernel::tiled, false) == "f32 FMA");
    s.ceilings.push_back({"coopmat 16x16x16 bf16*bf16+f32", 900.0});
    s.ceilings.push_back({"coopmat 16x8x16 bf16*bf16+f32", 800.0});
    CHECK(name(DataType::bf16, Kernel::coopmat, false) == "coopmat 16x16x16 bf16*bf16+f32");
    CHECK(name(DataType::bf16, Kernel::coopmat2, false) == "coopmat 16x16x16 bf16*bf16+f32");
    CHECK(name(DataType::f64, Kernel::blocked, false) == "none");  // no f64 FMA row: no shaderFloat64
    s.ceilings.push_back({"f64 FMA", 50.0});
    CHECK(name(DataType::f64, Kernel::blocked, false) == "f64 FMA");
    CHECK(name(DataType::f64, Kernel::tiled, false) == "f64 FMA");
    // f64 and f32 on the ozaki kernel: their emulated rows (none where peak derived none), not the FMA rows the
    // native kernels stand against; scaled to the moduli a call asks for.
    CHECK(name(DataType::f64, Kernel::ozaki, false) == "none");
    s.ceilings.push_back({"f64 emulated (ozaki)", 42.0, 14});
    s.ceilings.push_back({"f32 emulated (ozaki)", 84.0, 7});
    CHECK(name(DataType::f64, Kernel::ozaki, false) == "f64 emulated (ozaki)");
    CHECK(name(DataType::f32, Kernel::ozaki, false) == "f32 emulated (ozaki)");
    CHECK(name(DataType::f64, Kernel::blocked, false) == "f64 FMA");
    CHECK(name(DataType::f32, Kernel::blocked, false) == "f32 FMA");
    CHECK(ceiling_for(s, DataType::f64, Kernel::ozaki, false, 14)->gflops == 42.0);
    const auto twenty = ceiling_for(s, DataType::f64, Kernel::ozaki, false, 20);
    REQUIRE(twenty);
    CHECK(twenty->name == "f64 emulated (ozaki) at 20 moduli");
    CHECK(twenty->gflops == doctest::Approx(42.0 * 14 / 20));
    s.peak_gflops = 50.0;  // given: it is f32's ceiling
    CHECK(name(DataType::f32, Kernel::tiled, false) == "--peak-gflops");
    s.peak_gflops.reset();
    s.repeat = 3, s.warmup = 1, s.verify_max = 1e9;
    BenchConfig config;
    config.options.kernel = Kernel::tiled;
    config.options.tile = 8;
    config.label = "tile 8";
    const CaseResult r = run_case(test::engine(), {24, 16, 8}, DataType::f32, config, s, 3);
    REQUIRE(r.timed());
    REQUIRE(r.efficiency.has_value());
    CHECK(*r.efficiency == doctest::Approx(r.gflops / 100.0));
    CHECK(r.efficiency_ceiling == "f32 FMA");
  }

  TEST_CASE("bad options are refused with the field named") {
    PeakOptions o;
    o.repeat = 0;
    test::expect_error([&] { measure_peaks(test::engine(), o); }, ErrorCode::invalid_argument, "repeat");
    o = PeakOptions{};
    o.target_ms = -1.0;
    test::expect_error([&] { measure_peaks(test::engine(), o); }, ErrorCode::invalid_argument, "target_ms");
  }

  TEST_CASE("vkgemm peak --json parses and carries the binary's build_commit") {
    const auto version = test::run_program("--version");
    REQUIRE(version.code == 0);
    const auto from = version.output.find("(commit "), to = version.output.find(')', from);
    REQUIRE(from != std::string::npos);
    const std::string commit = version.output.substr(from + 8, to - from - 8);
    const auto dir = std::filesystem::temp_directory_path() / ("vkgemm-peak-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir);
    const auto path = dir / "peak.json";
    const auto r = test::run_program("peak --repeat 3 --target-ms 5 --json " + path.string());
    INFO(r.output);
    REQUIRE(r.code == 0);
    CHECK(contains(r.output, "f32 FMA"));
    CHECK(contains(r.output, "copy"));
    std::ifstream in(path);
    const nlohmann::json rows = nlohmann::json::parse(in);
    REQUIRE(rows.is_array());
    REQUIRE(rows.size() >= 4);
    for (const auto& row : rows) {
      INFO(row.dump());
      CHECK(row.at("build_commit") == commit);
      CHECK_FALSE(row.at("device").get<std::string>().empty());
      CHECK(row.contains("driver"));
      if (row.at("measured").get<bool>()) {
        CHECK(row.at("value").get<double>() > 0.0);
        CHECK_FALSE(row.at("derived").get<bool>());
      } else if (row.at("derived").get<bool>()) {  // the emulated rows, from an int8 matrix row of this run
        CHECK(row.at("value").get<double>() > 0.0);
        CHECK_FALSE(row.at("derived_from").get<std::string>().empty());
        CHECK(row.at("int8_products").get<int>() >= 2);
        CHECK(contains(row.at("detail").get<std::string>(), "derived, not timed"));
      } else {
        CHECK_FALSE(row.at("reason").get<std::string>().empty());
      }
    }
    std::filesystem::remove_all(dir);
  }
}
