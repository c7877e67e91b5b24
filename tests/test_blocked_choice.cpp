// The blocked kernel's choice of configuration and split-K by shape (kernels/blocked_choice.hpp) over the
// wave model (tuning/wave_model.hpp) and the tuning table's tiers, on described devices without Vulkan.
#include <doctest/doctest.h>

#include <cmath>

#include <fmt/format.h>

#include "kernels/blocked_choice.hpp"
#include "kernels/kernel_spec.hpp"
#include "plan/schedule.hpp"
#include "published_rows.hpp"
#include "tuning/tuning_table.hpp"
#include "tuning/wave_model.hpp"
#include "vkgemm/error.hpp"
#include "vkgemm/tuning.hpp"

using namespace vkgemm;
using kernels::BlockedChoice;
using kernels::choose_blocked;

namespace {

// What an NVIDIA H200 reports (driver 580): 132 SMs of 64 warps, 48 KiB of shared memory a workgroup.
DeviceInfo nvidia(const std::string& name = "NVIDIA H200", uint32_t sms = 132) {
  DeviceInfo d;
  d.name = name;
  d.vendor_id = 0x10de;
  d.type = DeviceType::discrete_gpu;
  d.driver_version = "580.159.4.0";
  d.float64 = true;
  d.subgroup_size = 32;
  d.max_shared_memory = 48 * 1024;
  d.max_workgroup_invocations = 1024;
  d.max_workgroup_size = {1024, 1024, 64};
  d.max_workgroup_count = {2147483647u, 65535, 65535};
  d.max_storage_buffer_range = 0xFFFFFFFFull;
  d.compute_units = sms;
  d.invocations_per_compute_unit = 2048;
  d.compute_units_from = "VK_NV_shader_sm_builtins";
  return d;
}

// Lavapipe as a described device: a CPU driver with `threads` compute units.
DeviceInfo described_lavapipe(uint32_t threads) {
  DeviceInfo lavapipe = nvidia("llvmpipe (LLVM 15.0.6, 256 bits)", threads);
  lavapipe.vendor_id = 0x10005;
  lavapipe.type = DeviceType::cpu;
  lavapipe.driver_version = "0.0.1";
  lavapipe.subgroup_size = 8;
  lavapipe.max_shared_memory = 32 * 1024;
  lavapipe.max_storage_buffer_range = 128ull << 20;
  return lavapipe;
}

const tuning::Table& builtin() {
  static const tuning::Table table = [] {
    tuning::Table t;
    for (const auto& [name, text] : tuning::builtin_tables()) t.add_json(text, name);
    return t;
  }();
  return table;
}

BlockedChoice choose(const DeviceInfo& d, uint32_t m, uint32_t n, uint32_t k, uint32_t batch = 1,
                     const GemmOptions& o = {}) {
  return choose_blocked(d, builtin(), o, DataType::f32, {m, n, k, batch});
}

// A table of the H200 with 4096^3 tuned untransposed (128x256) and with op(B) = B^T (64x128), and 2048^3
// with op(B) = B^T (64x64).
tuning::Table per_op_table() {
  const auto entry = [](const char* ops, uint32_t n, const char* config) {
    return fmt::format(R"({{"type": "f32", "m": {0}, "n": {0}, "k": {0}, {1} "kernel": "blocked", "gflops": 40000,
                         "config": {2}}})", n, ops, config);
  };
  const char* big = R"({"bm": 128, "bn": 256, "bk": 16, "tm": 8, "tn": 8, "lanes_n": 16, "split_k": 1})";
  const char* mid = R"({"bm": 64, "bn": 128, "bk": 16, "tm": 8, "tn": 4, "lanes_n": 16, "split_k": 1})";
  const char* small = R"({"bm": 64, "bn": 64, "bk": 16, "tm": 8, "tn": 4, "lanes_n": 16, "split_k": 1})";
  tuning::Table t;
  t.add_json(fmt::format(R"({{"format": "vkgemm-tuning-1", "devices": [{{"vendor_id": 4318, "device": "NVIDIA H200",
                            "driver": "580.159.4.0", "entries": [{}, {}, {}]}}]}})",
                         entry("", 4096, big), entry(R"("op_b": "t",)", 4096, mid),
                         entry(R"("op_a": "n", "op_b": "t",)", 2048, small)),
             "per-op table");
  return t;
}

// The model's seconds for one configuration and split on a device, as choose_blocked estimates them.
double model_seconds(const DeviceInfo& d, const BlockedConfig& c, uint32_t m, uint32_t n, uint32_t k,
                     uint32_t splits) {
  tuning::TileModel t{c.bm, c.bn, tuning::saturating_workgroups(d, (c.bm / c.tm) * (c.bn / c.tn)), 4 * c.bk, 1.0};
  const tuning::Machine machine = tuning::machine_of(d);
  const tuning::Work w{m, n, k, 1};
  return tuning::main_seconds(machine, t, w, splits) + tuning::reduce_seconds(machine, t, w, splits, 4);
}

}  // namespace

TEST_SUITE("blocked choice") {
  TEST_CASE("the wave model: a partly filled wave costs a whole one") {
    const tuning::Machine h200{132, false};
    const tuning::TileModel tile{128, 256, 1, 0, 100.0};
    const auto seconds = [&](uint64_t tiles_m) {
      return tuning::main_seconds(h200, tile, {tiles_m * 128, 256, 4096, 1}, 1);
    };
    CHECK(seconds(133) == doctest::Approx(2 * seconds(132)));  // one tile over a wave: two waves
    CHECK(seconds(200) == doctest::Approx(seconds(264)));
    CHECK(seconds(1) == doctest::Approx(seconds(132)));
    // A split divides each tile's K and multiplies the tiles: 66 tiles split in 2 fill one wave.
    CHECK(tuning::main_seconds(h200, tile, {66 * 128, 256, 4096, 1}, 2) == doctest::Approx(seconds(132) / 2));
  }

  TEST_CASE("calibration inverts the model at the measured shape") {
    const tuning::Machine h200{132, false};
    const tuning::TileModel tile{128, 256, 1, 64, 1.0};
    const tuning::Work w{4096, 4096, 4096, 1};
    const double unit = tuning::calibrate_unit_gflops(h200, tile, w, 1, 46000.0);
    tuning::TileModel calibrated = tile;
    calibrated.unit_gflops = unit;
    CHECK(2.0 * 4096.0 * 4096 * 4096 / tuning::main_seconds(h200, calibrated, w, 1) * 1e-9 == doctest::Approx(46000.0));
  }

  TEST_CASE("tiers: the device's own table, else its vendor's, else none") {
    CHECK(builtin().find(nvidia()).second == tuning::Tier::device);
    // The H100's built-in table holds f64 alone: its other types plan from the vendor's (the H200's) table.
    CHECK(builtin().find(nvidia("NVIDIA H100 80GB HBM3")).second == tuning::Tier::device);
    CHECK(builtin().find(nvidia("NVIDIA H100 80GB HBM3"), DataType::f64).second == tuning::Tier::device);
    CHECK(builtin().find(nvidia("NVIDIA H100 80GB HBM3"), DataType::f32).second == tuning::Tier::vendor);
    CHECK(builtin().find(nvidia("NVIDIA RTX 4090")).second == tuning::Tier::vendor);
    // f64: the H100's table holds the vendor's f64 measurements, so the H100, the H200 (whose table holds
    // no f64) and any other NVIDIA device run its blocked entries; f32 stays on the H200's table everywhere.
    const auto h100_f64 = builtin().lookup(nvidia("NVIDIA H100 80GB HBM3"), DataType::f64, 4096, 4096, 4096);
    REQUIRE(h100_f64);
    CHECK(h100_f64->kernel == Kernel::blocked);
    for (const char* name : {"NVIDIA H200", "NVIDIA RTX 4090"}) {
      CAPTURE(name);
      CHECK(builtin().find(nvidia(name), DataType::f64).second == tuning::Tier::vendor);
      CHECK(builtin().find(nvidia(name), DataType::f64).first->device == "NVIDIA H100 80GB HBM3");
      const auto f64 = builtin().lookup(nvidia(name), DataType::f64, 4096, 4096, 4096);
      REQUIRE(f64);
      CHECK(f64->kernel == Kernel::blocked);
      CHECK(builtin().find(nvidia(name), DataType::f32).first->device == "NVIDIA H200");
    }
    DeviceInfo other = nvidia("Some GPU");
    other.vendor_id = 0x1002;
    CHECK(builtin().find(other).second == tuning::Tier::none);
    CHECK(tuning::machine_of(DeviceInfo{}).estimated);
    CHECK(tuning::machine_of(DeviceInfo{}).units == tuning::kAssumedUnits);
    CHECK(tuning::machine_of(nvidia()).units == 132);
  }

  TEST_CASE("tiers by type: a device's own table serves the types it holds, its vendor's the others") {
    // The built-in tables and, on top, an H100 table holding one f64 entry (as `vkgemm tune --type f64` writes).
    tuning::Table t = builtin();
    t.add_layer_json(R"({"format": "vkgemm-tuning-1", "devices": [{"vendor_id": 4318,
        "device": "NVIDIA H100 80GB HBM3", "driver": "580.159.4.0", "entries": [{"type": "f64", "m": 4096,
        "n": 4096, "k": 4096, "kernel": "blocked", "gflops": 15000, "config": {"bm": 128, "bn": 64, "bk": 16,
        "tm": 8, "tn": 4, "lanes_n": 8, "split_k": 1}}]}]})",
                     "f64-only table");
    const DeviceInfo h100 = nvidia("NVIDIA H100 80GB HBM3");
    CHECK(t.find(h100).second == tuning::Tier::device);
    CHECK(t.find(h100, DataType::f64).second == tuning::Tier::device);
    CHECK(t.find(h100, DataType::f32).second == tuning::Tier::vendor);
    // f32 plans as on the vendor's table alone (not the fallback configuration); f64 runs its entry.
    const BlockedChoice f32 = choose_blocked(h100, t, {}, DataType::f32, {4096, 4096, 4096, 1});
    const BlockedChoice vendor_only = choose_blocked(h100, builtin(), {}, DataType::f32, {4096, 4096, 4096, 1});
    CHECK(f32.reason == vendor_only.reason);
    CHECK(f32.reason.find("fallback") == std::string::npos);
    CHECK(f32.config.bm == vendor_only.config.bm);
    CHECK(f32.config.bn == vendor_only.config.bn);
    const BlockedChoice f64 = choose_blocked(h100, t, {}, DataType::f64, {4096, 4096, 4096, 1});
    CHECK(f64.reason == "tuned shape");
    CHECK(f64.config.bm == 128);
    CHECK(f64.config.bn == 64);
    // A device with no vendor table keeps its own, whatever the type.
    DeviceInfo other = h100;
    other.vendor_id = 0x1002;
    CHECK(t.find(other, DataType::f32).second == tuning::Tier::none);
  }

  TEST_CASE("a tuned shape keeps its measured configuration") {
    const BlockedChoice c = choose(nvidia(), 4096, 4096, 4096);
    CHECK(c.reason == "tuned shape");
    CHECK(c.config.bm == 128);
    CHECK(c.config.bn == 256);
    CHECK(c.config.split_k == 1);
  }

  TEST_CASE("between tuned shapes the model weighs waves: 2560^3 on 132 SMs") {
    const DeviceInfo d = nvidia();
    const BlockedChoice c = choose(d, 2560, 2560, 2560);
    MESSAGE("2560^3: ", to_string(c.config), " (", c.reason, ")");
    CHECK(c.reason == "wave model (device table)");
    // 128x256 unsplit gives 200 tiles: two waves for 1.5 waves of work. The choice must do better.
    BlockedConfig big = c.config;
    big.bm = 128, big.bn = 256, big.tm = 8, big.tn = 8, big.bk = 16;
    CHECK(model_seconds(d, c.config, 2560, 2560, 2560, c.config.split_k) <
          model_seconds(d, big, 2560, 2560, 2560, 1) * 0.95);
  }

  TEST_CASE("a small product's entry, latency-bound on part of the device, does not choose tiles for large ones") {
    // engine/tuning/nvidia-h200.json holds 384^3 on 64x64 tiles (36 workgroups on 132 SMs) for small squares.
    // Calibrating the model from it once sent 1536^3 to 5000^3 to 64x64 tiles, which run them far slower
    // than 128x256 (docs/design/planner.md).
    for (const uint32_t n : {1536u, 2560u, 3000u, 5000u}) {
      const BlockedChoice c = choose(nvidia(), n, n, n);
      CAPTURE(n);
      CAPTURE(to_string(c.config));
      CHECK(c.config.bm * c.config.bn == 128u * 256u);
    }
    // ... nor sends the small squares to 128x256 split at most 2, which runs them slower than 64x64. 512^3 and
    // 1000^3 have entries of their own, taken as measured (64x128 and 128x256, each in 4 slices); so do 448^3
    // and 768^3 (64x64 and 64x256); 600^3, 900^3 and 1100^3 are the model's.
    for (const uint32_t n : {448u, 512u, 600u, 768u, 900u, 1000u, 1100u}) {
      const BlockedChoice c = choose(nvidia(), n, n, n);
      CAPTURE(n);
      CAPTURE(to_string(c.config));
      if (n == 512 || n == 1000) {
        CHECK(c.reason == "tuned shape");
      } else {
        CHECK(c.config.bm * c.config.bn <= 128u * 128u);
      }
    }
  }

  TEST_CASE("split-K slices go down to kMinBlockedSliceK of K, not below") {
    // Slices shorter than 256 pay where they give each compute unit more warps (1000^3 in 4 slices of 250;
    // docs/design/blocked.md); the model may take them.
    const BlockedChoice mid = choose(nvidia(), 600, 600, 600);
    CAPTURE(to_string(mid.config));
    CHECK(600 / mid.config.split_k < 256u);
    for (const uint32_t k : {130u, 300u, 600u, 1100u, 4096u}) {
      const BlockedChoice c = choose(nvidia(), 600, 600, k);
      CAPTURE(k);
      CAPTURE(to_string(c.config));
      CHECK((c.config.split_k == 1 || k / c.config.split_k >= kMinBlockedSliceK));
    }
  }

  TEST_CASE("a pass's fixed cost is not the tiles' work: small batched products keep small tiles") {
    // Every pass costs the model kPassSeconds besides its tiles, and a measured entry's unit rate is what
    // remains. Without that, the small entries (448^3 in 16 us, 512^3) calibrated their tiles far below the
    // large ones' and the model sent a batch of 256 products of 64^3 to 32x128 tiles, each half empty, and
    // 32 of 128^3 to 128x128: both 1.5-2x slower than on 64x64 (docs/design/planner.md).
    for (const auto& sizes : {std::pair{64u, 256u}, {128u, 32u}}) {
      const auto [n, batch] = sizes;
      CAPTURE(sizes.first);
      const BlockedChoice c = choose(nvidia(), n, n, n, batch);
      CAPTURE(to_string(c.config));
      CHECK(c.config.bm == 64);
      CHECK(c.config.bn == 64);
    }
  }

  TEST_CASE("a short wide product splits K to fill the device") {
    const BlockedChoice c = choose(nvidia(), 96, 4096, 4096);
    MESSAGE("96x4096x4096: ", to_string(c.config), " (", c.reason, ")");
    CHECK(c.config.split_k > 1);
    // ... and a large one does not.
    CHECK(choose(nvidia(), 6000, 6000, 6000).config.split_k == 1);
  }

  TEST_CASE("an unseen NVIDIA GPU starts from its vendor's measured configurations, not the fallback") {
    const BlockedChoice c = choose(nvidia("NVIDIA H100 80GB HBM3", 132), 4096, 4096, 4096);
    CHECK(c.reason == "wave model (vendor table)");
    CHECK(c.config.bm * c.config.bn > 64u * 64u);
    DeviceInfo amd = nvidia("Some AMD GPU", 96);
    amd.vendor_id = 0x1002;
    const BlockedChoice none = choose(amd, 4096, 4096, 4096);
    CHECK(none.reason == "fallback, wave model");
    CHECK(none.config.bm == kernels::fallback_blocked_config(DataType::f32).bm);
  }

  TEST_CASE("the caller's configuration and split are kept") {
    GemmOptions o;
    o.blocked = kernels::fallback_blocked_config(DataType::f32);
    o.blocked.split_k = 3;
    const BlockedChoice c = choose(nvidia(), 2560, 2560, 2560, 1, o);
    CHECK(c.reason == "caller");
    CHECK(c.config.split_k == 3);
    CHECK(c.config.bm == 64);
  }
}

TEST_SUITE("blocked choice") {
  TEST_CASE("entries per op combination: a tuned op keeps its own entry; others keep the untransposed one") {
    const tuning::Table t = per_op_table();
    const auto pick = [&](uint32_t n, bool ta, bool tb) {
      return choose_blocked(nvidia(), t, {}, DataType::f32, {n, n, n, 1, ta, tb});
    };
    CHECK(pick(4096, false, true).reason == "tuned shape");
    CHECK(pick(4096, false, true).config.bm == 64);   // NT's own entry
    CHECK(pick(4096, false, false).config.bm == 128); // NN's
    CHECK(pick(4096, true, false).config.bm == 128);  // TN was not tuned apart: the untransposed entry
    CHECK(pick(4096, true, false).reason == "tuned shape");
    // Nearest entry: among the op's own entries where it has any, else among all.
    CHECK(t.lookup(nvidia(), DataType::f32, 2500, 2500, 2500, false, true)->m == 2048);  // NT's nearest
    CHECK(t.lookup(nvidia(), DataType::f32, 2500, 2500, 2500, false, false)->m == 4096);  // NN's only one
    CHECK(t.lookup(nvidia(), DataType::f32, 2500, 2500, 2500, true, true)->m == 2048);   // TT: none; any
    // The ops survive the file: written as "op_b": "t", read back the same; a bad op is refused by name.
    const std::string json = t.to_json();
    CHECK(json.find(R"("op_b": "t")") != std::string::npos);
    CHECK(json.find(R"("op_a")") == std::string::npos);  // "n" is left out
    tuning::Table again;
    again.add_json(json, "written");
    CHECK(choose_blocked(nvidia(), again, {}, DataType::f32, {4096, 4096, 4096, 1, false, true}).config.bm == 64);
    tuning::Table bad;
    CHECK_THROWS_WITH_AS(bad.add_json(R"({"format": "vkgemm-tuning-1", "devices": [{"vendor_id": 1, "device": "d",
                           "driver": "1", "entries": [{"type": "f32", "m": 1, "n": 1, "k": 1, "op_a": "x",
                           "kernel": "tiled", "tile": 16}]}]})", "bad file"),
                         doctest::Contains("op_a must be \"n\" or \"t\""), Error);
  }

  TEST_CASE("auto takes the built-in tables' measured kernel for small squares: tiled below them, blocked above") {
    // engine/tuning: the tiled kernel's entries at 16 to 256 on the H200 (tiled 4.6 and 6.4 us of GPU time
    // against blocked's 8.1 and 10.7 at 16 and 64; 10.5 against 18.2 at 256) and at 16 to 64 on lavapipe,
    // blocked's from 384 and 128 on.
    const auto kernel_for = [](const DeviceInfo& d, uint32_t n) {
      return detail::schedule_product({.m = n, .n = n, .k = n}, {}, d, builtin()).kernel;
    };
    for (const std::string name : {"NVIDIA H200", "NVIDIA GeForce RTX 4090"}) {  // its own table; the vendor's
      CAPTURE(name);
      const DeviceInfo d = nvidia(name);
      CHECK(kernel_for(d, 16) == Kernel::tiled);
      CHECK(kernel_for(d, 100) == Kernel::tiled);
      CHECK(kernel_for(d, 256) == Kernel::tiled);
      CHECK(kernel_for(d, 384) == Kernel::blocked);
      CHECK(kernel_for(d, 512) == Kernel::blocked);
      // A batch of small squares fills the device: the single product's entry does not choose its kernel.
      for (const auto& sizes : {std::pair{256u, 64u}, {128u, 32u}, {64u, 256u}}) {
        const auto [n, batch] = sizes;
        CAPTURE(sizes.first);  // not the binding: CAPTURE captures, which clang 14 cannot do for one
        const auto plan = detail::schedule_product({.m = n, .n = n, .k = n, .batch = batch}, {}, d, builtin());
        CHECK(plan.kernel == Kernel::blocked);
      }
    }
    const DeviceInfo lavapipe = described_lavapipe(132);  // the compute units as nvidia() gives them
    CHECK(kernel_for(lavapipe, 16) == Kernel::tiled);
    CHECK(kernel_for(lavapipe, 64) == Kernel::tiled);
    CHECK(kernel_for(lavapipe, 128) == Kernel::blocked);
  }

  TEST_CASE("the tiniest products are one dispatch: no split-K reduce, no turn of B, no workspace") {
    // A 16^3 product's GPU time is its one dispatch (docs/design/latency.md): what a repeated call replays.
    for (const DeviceInfo& d : {nvidia("NVIDIA H200"), nvidia("NVIDIA H100 80GB HBM3"), described_lavapipe(2)}) {
      for (const DataType type : {DataType::f32, DataType::f64}) {
        CAPTURE(d.name);
        CAPTURE(to_string(type));
        const auto plan = detail::schedule_product({.type = type, .m = 16, .n = 16, .k = 16}, {}, d, builtin());
        REQUIRE(plan.pieces.size() == 1);
        CHECK_FALSE(plan.pieces[0].reduce.has_value());
        CHECK_FALSE(plan.pieces[0].turn_b.has_value());
        CHECK(plan.workspace_bytes == 0);
        CHECK(plan.sequence.empty());
        MESSAGE(d.name, " ", to_string(type), " 16^3: ", to_string(plan.kernel), " ", plan.config);
      }
    }
  }
}

TEST_SUITE("blocked choice") {
  TEST_CASE("auto on tiny and batched products: a square kernel where the blocked tiles would be padding") {
    // square_choice.cpp; measured on lavapipe (docs/tuning.md, "Small and batched products"): 8^3 x 64 ran
    // 281 ms on blocked 256x256 against 1.4 on naive, and naive 16 was the fastest or within the noise of it
    // from 8^3 to 64^3 at every batch. Lavapipe as this host's (2 threads) and as a 16-thread host's.
    const auto plan_of = [](const DeviceInfo& d, uint32_t n, uint32_t batch) {
      return detail::schedule_product({.m = n, .n = n, .k = n, .batch = batch}, {}, d, builtin());
    };
    for (const uint32_t threads : {2u, 16u}) {
      const DeviceInfo lavapipe = described_lavapipe(threads);
      CAPTURE(threads);
      for (const auto& sizes :
           {std::pair{8u, 64u}, {8u, 65535u}, {16u, 256u}, {32u, 16u}, {64u, 256u}, {48u, 4u}}) {
        const auto [n, batch] = sizes;
        CAPTURE(sizes.first);  // not the bindings: CAPTURE captures, which clang 14 cannot do for one
        CAPTURE(sizes.second);
        const auto plan = plan_of(lavapipe, n, batch);
        CHECK(plan.kernel == Kernel::naive);
        CHECK(plan.config == "tile 16");
      }
      // Larger products keep the blocked kernel: its fixed cost is paid once per 256x256 block of C.
      CHECK(plan_of(lavapipe, 256, 16).kernel == Kernel::blocked);
      CHECK(plan_of(lavapipe, 512, 1).kernel == Kernel::blocked);
    }
    // On a GPU only batches of the tiniest products leave the blocked kernel; a batch of 64^3 products that
    // fills the device keeps it (as the published rows below).
    CHECK(plan_of(nvidia(), 8, 65535).kernel == Kernel::tiled);
    CHECK(plan_of(nvidia(), 64, 256).kernel == Kernel::blocked);
    // The caller's kernel is never second-guessed.
    CHECK(detail::schedule_product({.m = 8, .n = 8, .k = 8, .batch = 64}, {.kernel = Kernel::blocked}, nvidia(), builtin())
              .kernel == Kernel::blocked);
  }

  TEST_CASE("the published H200 results describe this tree: auto plans each case as it was measured") {
    test::check_published_rows(VKGEMM_PUBLISHED_F32, GemmDesc{}, nvidia());
  }
}
