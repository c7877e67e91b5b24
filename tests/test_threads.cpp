// The threading model (engine.hpp): one Engine shared by several threads (its calls take the engine's
// lock), and one Engine per thread (nothing shared). Each thread runs many products, all checked. And
// Engine::prepare, which builds pipelines on several threads of its own.
#include <doctest/doctest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "engine/engine_impl.hpp"
#include "support.hpp"

using namespace vkgemm;

namespace {

constexpr int kThreads = 4;
constexpr int kProductsPerThread = 30;

// A small varied call for thread `t`, product `i`: sizes, ops, layout and scalars all change.
GemmDesc call_for(int t, int i) {
  GemmDesc d;
  d.m = 1 + (7 * i + t) % 23, d.n = 1 + (5 * i + 3 * t) % 19, d.k = (3 * i + t) % 29;
  d.op_a = i % 2 ? Op::t : Op::n;
  d.op_b = (i / 2) % 2 ? Op::t : Op::n;
  d.layout = (i / 4) % 2 ? Layout::col_major : Layout::row_major;
  d.alpha = 1.5, d.beta = i % 3 ? 0.0 : -2.0;
  d.batch = 1 + i % 3;
  return d;
}

}  // namespace

TEST_SUITE("threads") {
  TEST_CASE("several threads share one engine") {
    std::vector<std::string> failures[kThreads];
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([t, &failures] {
        auto rng = test::case_rng(fmt::format("shared engine thread {}", t));
        for (int i = 0; i < kProductsPerThread; ++i) {
          const auto r = test::check_gemm_call(call_for(t, i), {.kernel = i % 2 ? Kernel::naive : Kernel::tiled, .tile = 8}, rng);
          if (!r.passed) failures[t].push_back(r.detail);
        }
      });
    }
    for (auto& th : threads) th.join();
    for (int t = 0; t < kThreads; ++t) {
      CAPTURE(t);
      CHECK_MESSAGE(failures[t].empty(), "seed ", test::run_seed(), ": ", failures[t].empty() ? "" : failures[t][0]);
    }
  }

  TEST_CASE("fill takes the engine's lock: threads filling buffers beside threads running products") {
    Engine& engine = test::engine();
    std::vector<std::string> failures[kThreads];
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([t, &failures, &engine] {
        auto rng = test::case_rng(fmt::format("fill beside gemm thread {}", t));
        Buffer buffer = engine.create_buffer(4096, "threads fill");
        std::vector<uint32_t> words(1024);
        for (int i = 0; i < kProductsPerThread; ++i) {
          if (t % 2) {  // the products share the engine's submitter with the fills
            const auto r = test::check_gemm_call(call_for(t, i), {.kernel = Kernel::tiled, .tile = 8}, rng);
            if (!r.passed) failures[t].push_back(r.detail);
            continue;
          }
          const uint32_t word = static_cast<uint32_t>(t * 1000 + i);
          engine.fill(buffer, 0, 4096, word);
          engine.read(buffer, 0, words.data(), 4096);
          for (const uint32_t w : words) {
            if (w != word) {
              failures[t].push_back(fmt::format("fill {} read back {}", word, w));
              break;
            }
          }
        }
      });
    }
    for (auto& th : threads) th.join();
    for (int t = 0; t < kThreads; ++t) {
      CAPTURE(t);
      CHECK_MESSAGE(failures[t].empty(), "seed ", test::run_seed(), ": ", failures[t].empty() ? "" : failures[t][0]);
    }
  }

  TEST_CASE("one engine per thread") {
    std::atomic<uint64_t> messages{0};
    std::vector<std::string> failures[kThreads];
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([t, &failures, &messages] {
        try {
          Engine e({.validation = true, .on_validation_message = [&](std::string_view) { ++messages; }});
          auto rng = test::case_rng(fmt::format("own engine thread {}", t));
          std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
          for (int i = 0; i < kProductsPerThread; ++i) {
            const GemmDesc d = call_for(t, i);
            const auto span = [&](char w) { return operand_extent(d, w).elements; };
            std::vector<float> a(span('A')), b(span('B')), c0(span('C'));
            for (auto* v : {&a, &b, &c0})
              for (float& x : *v) x = dist(rng);
            std::vector<float> c = c0;
            e.gemm(d, a.data(), b.data(), c.data());
            const Comparison cmp = compare_with_reference(d, a.data(), b.data(), c0.data(), c.data());
            if (!cmp.passed) failures[t].push_back(test::describe(d) + ": " + cmp.summary());
          }
        } catch (const std::exception& ex) {
          failures[t].push_back(ex.what());
        }
      });
    }
    for (auto& th : threads) th.join();
    CHECK(messages.load() == 0);
    for (int t = 0; t < kThreads; ++t) {
      CAPTURE(t);
      CHECK_MESSAGE(failures[t].empty(), "seed ", test::run_seed(), ": ", failures[t].empty() ? "" : failures[t][0]);
    }
  }
  TEST_CASE("prepare builds pipelines on several threads; the calls after it build none of them") {
    auto engine = test::make_engine();  // its own: the pipelines other cases built are not counted
    Engine& e = *engine;
    GemmDesc d;
    d.m = 100, d.n = 90, d.k = 70, d.alpha = 1.5, d.beta = -0.5;
    std::vector<GemmOptions> options;
    for (const char* config : {"64x64x8 8x4", "128x128x16 8x8", "64x64x8 8x4 split 3", "64x128x8 8x8"}) {
      options.push_back({.kernel = Kernel::blocked, .blocked = parse_blocked_config(config)});
    }
    options.push_back({.kernel = Kernel::tiled, .tile = 8});
    options.push_back({.kernel = Kernel::tiled, .tile = 16});
    options.push_back({.kernel = Kernel::tiled, .tile = 16});  // twice: built once
    // Five main passes (the split one shares "64x64x8 8x4"'s pipeline: the split is a push constant) and the
    // split's reduce pass.
    const size_t built = e.prepare(d, options, 4);
    CHECK(built == 6);
    CHECK(e.prepare(d, options, 4) == 0);
    auto rng = test::case_rng("prepare");
    for (const GemmOptions& o : options) {
      const auto r = test::check_gemm_call(e, d, o, rng);
      CHECK_MESSAGE(r.passed, r.detail);
    }
    // gemm and prepare name pipelines alike: what a call built, prepare finds.
    const GemmOptions unprepared{.kernel = Kernel::tiled, .tile = 4};
    CHECK(test::check_gemm_call(e, d, unprepared, rng).passed);
    CHECK(e.prepare(d, {unprepared}) == 0);
    // A bad call is refused before anything is built, naming what is wrong.
    GemmOptions bad = options[0];
    bad.repeat = 0;
    CHECK_THROWS_AS(e.prepare(d, {options[1], bad}), Error);
  }
  TEST_CASE("prepare of several products: 16 threads at once, each pipeline built once, the products after it build none") {
    auto engine = test::make_engine();  // its own: every pipeline counted
    Engine& e = *engine;
    kernels::Pipelines& pipelines = *detail::Access::impl(e).pipelines;
    std::vector<std::pair<GemmDesc, GemmOptions>> calls;
    for (const uint32_t tile : {1u, 2u, 3u, 4u, 5u, 6u, 7u, 8u, 12u, 16u}) {
      GemmDesc d;
      d.m = 20 + tile, d.n = 17, d.k = 9 + tile;
      calls.push_back({d, {.kernel = Kernel::tiled, .tile = tile}});
      calls.push_back({d, {.kernel = Kernel::naive, .tile = tile}});
      d.type = DataType::f64;
      calls.push_back({d, {.kernel = Kernel::tiled, .tile = tile}});  // a shader of its own per type
    }
    GemmDesc emulated;
    emulated.m = 33, emulated.n = 21, emulated.k = 40;
    if (e.device().float64 && e.device().storage8) {  // the emulated product's passes and its fallback
      calls.push_back({emulated, {.kernel = Kernel::ozaki}});
    }
    calls.push_back(calls.front());  // twice: built once
    const size_t before = pipelines.created();
    const size_t built = e.prepare(calls, 16);
    CHECK(pipelines.created() - before == built);
    CHECK(built >= 30);
    CHECK(e.prepare(calls, 16) == 0);
    auto rng = test::case_rng("prepare several");
    for (const auto& [desc, options] : calls) {
      const auto r = test::check_gemm_call(e, desc, options, rng);
      CHECK_MESSAGE(r.passed, r.detail);
    }
    CHECK(pipelines.created() - before == built);  // every product found its pipelines built
    // A bad call among them is refused before anything is built: tile 10's pipeline is not built either.
    calls.push_back({calls.front().first, {.kernel = Kernel::tiled, .tile = 10}});
    calls.push_back({calls.front().first, {.kernel = Kernel::tiled, .tile = 10, .repeat = 0}});
    CHECK_THROWS_AS(e.prepare(calls, 16), Error);
    CHECK(pipelines.created() - before == built);
  }
}
