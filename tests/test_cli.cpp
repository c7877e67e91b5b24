// The vkgemm program end to end: its commands, .npy in and out, and a clear error and exit code for each
// bad invocation. Runs the built binary (VKGEMM_BINARY) under validation (VKGEMM_VALIDATION=1).
#include <doctest/doctest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include <unistd.h>

#include "npy.hpp"
#include "support.hpp"
#include "vkgemm/half.hpp"

using namespace vkgemm;

namespace {

using Outcome = test::ProgramOutcome;

Outcome run_cli(const std::string& args) { return test::run_program(args); }

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// A file's whole text, or "" where it cannot be read (the checks on it then fail).
std::string read_all(const std::filesystem::path& path) {
  std::string all;
  FILE* f = fopen(path.c_str(), "rb");
  if (!f) return all;
  for (int ch; (ch = fgetc(f)) != EOF;) all.push_back(static_cast<char>(ch));
  fclose(f);
  return all;
}

std::filesystem::path scratch_dir() {
  auto dir = std::filesystem::temp_directory_path() / ("vkgemm-cli-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace

TEST_SUITE("cli") {
  TEST_CASE("devices lists lavapipe or whatever is there") {
    const auto r = run_cli("devices");
    CHECK(r.code == 0);
    CHECK(contains(r.output, "subgroup size"));
    CHECK(contains(r.output, "timestamps"));
  }

  TEST_CASE("run verifies each type and kernel") {
    // The quick tier runs one or two of the six (each a process that builds its pipelines), CI every one.
    const test::QuickSample quick = test::quick_sample("cli run");
    const char* const runs[] = {"--type f32 --kernel tiled --tile 8", "--type i32 --kernel naive", "--type f64 --kernel tiled --tile 32",
                                "--type f32 --kernel blocked --config '64x64x8 8x4 split 2'", "--type f64", "--type i32"};
    for (size_t i = 0; i < std::size(runs); ++i) {
      const char* args = runs[i];
      if (!quick.takes(i, std::size(runs))) {
        MESSAGE(args, ": not in this quick run's sample");
        continue;
      }
      const auto r = run_cli(std::string("run --m 65 --n 33 --k 17 --repeat 3 --verify --seed 42 ") + args);
      INFO(std::string(args), "\n", r.output);
      CHECK(r.code == 0);
      CHECK(contains(r.output, "verify:   passed"));
      CHECK(contains(r.output, "seed 42"));
    }
  }

  TEST_CASE("run: f16 inputs with C f32, C f16 and fp16 accumulation, and float16 .npy files") {
    for (const char* args : {"--kernel tiled", "--kernel naive --out-type f16", "--kernel tiled --f16-accumulate"}) {
      const auto r = run_cli(std::string("run --type f16 --m 65 --n 33 --k 17 --repeat 2 --verify --seed 7 ") + args);
      INFO(args, "\n", r.output);
      CHECK(r.code == 0);
      CHECK(contains(r.output, "verify:   passed"));
      CHECK(contains(r.output, std::string(args).find("kernel tiled") != std::string::npos &&
                                       std::string(args).find("accumulate") == std::string::npos
                                   ? "C f32"
                                   : "C f16"));
    }
    const auto dir = scratch_dir();
    // [1 2; 3 4] * [0.5 -1; 2 0.25] = [4.5 -0.5; 9.5 -2]: exact in fp16.
    const std::vector<uint16_t> a = {0x3c00, 0x4000, 0x4200, 0x4400}, b = {0x3800, 0xbc00, 0x4000, 0x3400};
    npy::write((dir / "a16.npy").string(), DataType::f16, 2, 2, a.data());
    npy::write((dir / "b16.npy").string(), DataType::f16, 2, 2, b.data());
    for (const char* out : {"f32", "f16"}) {
      const auto r = run_cli("run --a " + (dir / "a16.npy").string() + " --b " + (dir / "b16.npy").string() +
                             " --out-type " + out + " --out " + (dir / "c.npy").string() + " --verify");
      INFO(r.output);
      CHECK(r.code == 0);
      const auto c = npy::read((dir / "c.npy").string());
      std::vector<float> got(4);
      for (size_t i = 0; i < 4; ++i) {
        got[i] = c.type == DataType::f16 ? half_to_float(reinterpret_cast<const uint16_t*>(c.data.data())[i])
                                         : reinterpret_cast<const float*>(c.data.data())[i];
      }
      CHECK(c.type == (std::string(out) == "f16" ? DataType::f16 : DataType::f32));
      CHECK(got == std::vector<float>{4.5f, -0.5f, 9.5f, -2.0f});
    }
    std::filesystem::remove_all(dir);
  }

  TEST_CASE("run: bf16, i8 and u8 inputs, float32 files rounded to bf16 on request, bf16 .npy out") {
    for (const char* args : {"--type bf16 --kernel tiled", "--type bf16 --out-type bf16 --kernel naive", "--type i8",
                             "--type u8 --kernel naive --alpha 3 --beta 2"}) {
      const auto r = run_cli(std::string("run --m 65 --n 33 --k 17 --repeat 2 --verify --seed 5 ") + args);
      INFO(args, "\n", r.output);
      CHECK(r.code == 0);
      CHECK(contains(r.output, "verify:   passed"));
    }
    const auto dir = scratch_dir();
    // [1 2; 3 1.01171875] times the identity: 1.01171875 = 1 + 3 * 2^-8, a tie, rounds to even (up) in bf16,
    // 1.015625 (truncation would give 1.0078125).
    const std::vector<float> a = {1.0f, 2.0f, 3.0f, 1.01171875f}, b = {1.0f, 0.0f, 0.0f, 1.0f};
    npy::write((dir / "a.npy").string(), DataType::f32, 2, 2, a.data());
    npy::write((dir / "b.npy").string(), DataType::f32, 2, 2, b.data());
    const std::string files = " --a " + (dir / "a.npy").string() + " --b " + (dir / "b.npy").string();
    const auto r = run_cli("run" + files + " --type bf16 --out-type bf16 --out " + (dir / "c.npy").string() + " --verify");
    INFO(r.output);
    CHECK(r.code == 0);
    CHECK(contains(r.output, "rounded to bf16 (round to nearest even)"));
    const auto c = npy::read((dir / "c.npy").string());
    CHECK(c.type == DataType::bf16);
    std::vector<float> got(4);
    for (size_t i = 0; i < 4; ++i) got[i] = bfloat16_to_float(reinterpret_cast<const uint16_t*>(c.data.data())[i]);
    CHECK(got == std::vector<float>{1.0f, 2.0f, 3.0f, 1.015625f});
    const auto refused = run_cli("run" + files + " --type i8");
    CHECK(refused.code != 0);
    CHECK(contains(refused.output, "--type i8"));
    CHECK(contains(refused.output, "which --type bf16 rounds to bf16"));
    std::filesystem::remove_all(dir);
  }

  TEST_CASE("run with beta != 0 warms the device by time before its timed products, as with beta 0") {
    // Each timed product with beta != 0 is its own call (C updated in place); the warm-up runs the product with
    // beta 0 first, so that the timed calls do not find the device's clock idle.
    for (const char* beta : {"0", "-1"}) {
      CAPTURE(beta);
      const auto r = run_cli(std::string("run --m 33 --n 40 --k 50 --repeat 3 --warmup-ms 20 --verify --beta ") + beta);
      INFO(r.output);
      CHECK(r.code == 0);
      CHECK(contains(r.output, "verify:   passed"));
      CHECK_FALSE(contains(r.output, " 0 ms of warm-up before"));
      CHECK(contains(r.output, " ms of warm-up before"));
    }
  }

  TEST_CASE("run --max-k-per-submission: K cut into submissions, the same product") {
    for (const char* beta : {"0", "0.5"}) {
      const auto r = run_cli(std::string("run --m 40 --n 24 --k 300 --max-k-per-submission 64 --kernel tiled "
                                         "--repeat 1 --verify --beta ") + beta);
      INFO(r.output);
      CHECK(r.code == 0);
      CHECK(contains(r.output, "verify:   passed"));
      CHECK(contains(r.output, "submissions of K <= 64"));
    }
    const auto bad = run_cli("run --m 4 --n 4 --k 4 --max-k-per-submission 0");
    CHECK(bad.code == 2);
    CHECK(contains(bad.output, "--max-k-per-submission must be between 1"));
  }

  TEST_CASE("run reads and writes .npy") {
    const auto dir = scratch_dir();
    const std::vector<int32_t> a = {1, 4, 2, 5, 3, 6}, b = {7, 8, 9, 10, 11, 12};
    npy::write((dir / "a.npy").string(), DataType::i32, 3, 2, a.data());
    npy::write((dir / "b.npy").string(), DataType::i32, 2, 3, b.data());
    const auto r = run_cli("run --a " + (dir / "a.npy").string() + " --b " + (dir / "b.npy").string() + " --out " +
                           (dir / "c.npy").string() + " --verify");
    INFO(r.output);
    CHECK(r.code == 0);
    const auto c = npy::read((dir / "c.npy").string());
    CHECK(c.rows == 3);
    CHECK(c.cols == 3);
    const auto* v = reinterpret_cast<const int32_t*>(c.data.data());
    CHECK(std::vector<int32_t>(v, v + 9) == std::vector<int32_t>{47, 52, 57, 64, 71, 78, 81, 90, 99});

    // Mismatched inner dimensions and a malformed file are errors, and no output file appears.
    const auto mismatch = run_cli("run --a " + (dir / "a.npy").string() + " --b " + (dir / "a.npy").string() +
                                  " --out " + (dir / "bad.npy").string());
    CHECK(mismatch.code == 2);
    CHECK(contains(mismatch.output, "inner dimensions differ"));
    CHECK_FALSE(std::filesystem::exists(dir / "bad.npy"));
    {
      FILE* f = fopen((dir / "junk.npy").c_str(), "wb");
      fputs("this is not numpy", f);
      fclose(f);
    }
    const auto junk = run_cli("run --a " + (dir / "junk.npy").string() + " --b " + (dir / "b.npy").string());
    CHECK(junk.code == 2);
    CHECK(contains(junk.output, "bad magic"));
    std::filesystem::remove_all(dir);
  }

  TEST_CASE("run --verify on inputs with Inf and NaN: names them, and passes a result that matches the reference") {
    // A 6x4 A with an Inf and a NaN, a 4x5 B with a -Inf: whole rows and a column of C are Inf or NaN,
    // as the reference's are; the finite elements are judged as always. Each kernel that takes f32.
    const auto dir = scratch_dir();
    std::vector<float> a(24, 0.75f), b(20, 0.5f);
    a[1 * 4 + 2] = std::numeric_limits<float>::infinity();
    a[2 * 4 + 0] = std::numeric_limits<float>::quiet_NaN();
    b[1 * 5 + 3] = -std::numeric_limits<float>::infinity();
    npy::write((dir / "a.npy").string(), DataType::f32, 6, 4, a.data());
    npy::write((dir / "b.npy").string(), DataType::f32, 4, 5, b.data());
    for (const char* kernel : {"naive", "tiled", "blocked", "auto"}) {
      const auto r = run_cli("run --a " + (dir / "a.npy").string() + " --b " + (dir / "b.npy").string() +
                             " --verify --kernel " + kernel);
      INFO(kernel, "\n", r.output);
      CHECK(r.code == 0);
      CHECK(contains(r.output, "verify:   passed"));
      CHECK(contains(r.output, "A holds 2 non-finite value(s) (NaN or Inf), the first at index 6; B holds 1"));
      CHECK(contains(r.output, "the result's non-finite elements match the reference's"));
    }
    std::filesystem::remove_all(dir);
  }

  TEST_CASE("run --json carries the binary's own build_commit, the one --version prints") {
    const auto version = run_cli("--version");
    REQUIRE(version.code == 0);
    const auto from = version.output.find("(commit "), to = version.output.find(')', from);
    REQUIRE(from != std::string::npos);
    REQUIRE(to != std::string::npos);
    const std::string commit = version.output.substr(from + 8, to - from - 8);
    INFO(version.output);
    CHECK_FALSE(commit.empty());
    const auto json = scratch_dir() / "run.json";
    const auto r = run_cli("run --m 5 --n 6 --k 7 --repeat 1 --seed 1 --json " + json.string());
    REQUIRE(r.code == 0);
    std::string text;
    {
      FILE* f = fopen(json.c_str(), "rb");
      REQUIRE(f != nullptr);
      for (int ch; (ch = fgetc(f)) != EOF;) text.push_back(static_cast<char>(ch));
      fclose(f);
    }
    INFO(text);
    CHECK(contains(text, "\"build_commit\":\"" + commit + "\""));
    // vkgemm bench's files carry it too: vkgemm.commit in the JSON, vkgemm_commit in the CSV.
    const auto dir = json.parent_path();
    const auto bench = run_cli("bench --sizes 8 --kernels naive --tiles 8 --latency-sizes none --repeat 1 --no-progress "
                               "--json " + (dir / "b.json").string() + " --csv " + (dir / "b.csv").string());
    REQUIRE(bench.code == 0);
    CHECK(contains(read_all(dir / "b.json"), "\"commit\": \"" + commit + "\""));
    CHECK(contains(read_all(dir / "b.csv"), "," + commit + ","));
    std::filesystem::remove_all(dir);
  }

  TEST_CASE("run --kernel ozaki --moduli below the default: --verify holds C to the emulation's own bound, and says so") {
    const auto dir = scratch_dir();
    // Full (the default --verify-max) and sampled (--verify-max 1): both judged by the emulation's bound.
    for (const char* more : {"", " --verify-max 1"}) {
      const auto json = dir / "ozaki5.json";
      const auto r = run_cli(std::string("run --type f64 --kernel ozaki --moduli 5 --m 40 --n 36 --k 50 --alpha 1.5 "
                                         "--beta 0.5 --repeat 1 --verify --seed 3 --json ") + json.string() + more);
      INFO(r.output);
      CHECK(r.code == 0);
      CHECK(contains(r.output, "verify:   passed"));
      CHECK(contains(r.output, "the emulation's own bound (5 moduli)"));
      const std::string text = read_all(json);
      INFO(text);
      CHECK(contains(text, "\"check_bound\":\"emulation\""));
      CHECK(contains(text, "\"check_moduli\":5"));
      CHECK(contains(text, *more ? "\"check\":\"sampled\"" : "\"check\":\"full\""));
    }
    // The default moduli: the native kernel's bound, as for every other kernel.
    const auto json = dir / "ozaki.json";
    const auto r = run_cli("run --type f64 --kernel ozaki --m 40 --n 36 --k 50 --repeat 1 --verify --seed 3 --json " +
                           json.string());
    INFO(r.output);
    CHECK(r.code == 0);
    CHECK_FALSE(contains(r.output, "emulation's own bound"));
    CHECK(contains(read_all(json), "\"check_bound\":\"native\""));
    std::filesystem::remove_all(dir);
  }

  TEST_CASE("run --verify fails a C the product did not write: C starts poisoned when beta is 0") {
    // alpha 0: the right C is all zeros, which an unwritten C started at zero would match. A correct run
    // passes; the mutation that skips the dispatch (shown once by hand) fails with NaN or INT32_MIN in C.
    for (const char* type : {"f32", "i32", "f64", "f16"}) {
      const auto r = run_cli(std::string("run --m 9 --n 7 --k 5 --alpha 0 --repeat 2 --verify --seed 5 --type ") + type);
      INFO(type, "\n", r.output);
      CHECK(r.code == 0);
      CHECK(contains(r.output, "verify:   passed"));
    }
  }

  TEST_CASE("run with the BLAS flags: random inputs, every combination verified") {
    for (const char* args : {"--trans-a --layout col --alpha 2 --beta 0.5 --batch 3", "--trans-b --alpha -1.5",
                             "--type i32 --trans-a --trans-b --alpha 3 --beta -2 --layout col --batch 2",
                             "--type f64 --beta 1 --batch 1 --kernel naive"}) {
      const auto r = run_cli(std::string("run --m 19 --n 33 --k 17 --repeat 2 --verify --seed 7 ") + args);
      INFO(args, "\n", r.output);
      CHECK(r.code == 0);
      CHECK(contains(r.output, "verify:   passed"));
    }
  }

  TEST_CASE("run with .npy batches, a broadcast A, --c, alpha and beta, column-major") {
    const auto dir = scratch_dir();
    // A is 2 x 3 (broadcast), B is a batch of 2 matrices 3 x 2, C0 a batch of 2 matrices 2 x 2.
    const std::vector<int32_t> a = {1, 2, 3, 4, 5, 6}, b = {1, 0, 0, 1, 1, 1, 2, 0, 0, 2, 1, -1},
                               c0 = {1, 1, 1, 1, 0, 0, 0, 10};
    npy::write((dir / "a.npy").string(), DataType::i32, 2, 3, a.data());
    npy::write((dir / "b.npy").string(), DataType::i32, 2, 3, 2, b.data());
    npy::write((dir / "c.npy").string(), DataType::i32, 2, 2, 2, c0.data());
    for (const char* layout : {"row", "col"}) {
      const auto r = run_cli("run --a " + (dir / "a.npy").string() + " --b " + (dir / "b.npy").string() + " --c " +
                             (dir / "c.npy").string() + " --alpha 2 --beta -3 --layout " + layout + " --out " +
                             (dir / "out.npy").string() + " --verify");
      INFO(layout, "\n", r.output);
      CHECK(r.code == 0);
      CHECK(contains(r.output, "A broadcast"));
      const auto c = npy::read((dir / "out.npy").string());
      CHECK(c.batched);
      CHECK(c.batch == 2);
      CHECK(c.rows == 2);
      CHECK(c.cols == 2);
      // Entry 0: A B0 = [[4, 5], [10, 11]]; entry 1: A B1 = [[5, 1], [14, 4]]; C = 2 A B - 3 C0.
      const auto* v = reinterpret_cast<const int32_t*>(c.data.data());
      CHECK(std::vector<int32_t>(v, v + 8) == std::vector<int32_t>{5, 7, 17, 19, 10, 2, 28, -22});
    }
    const auto no_c = run_cli("run --a " + (dir / "a.npy").string() + " --b " + (dir / "b.npy").string() + " --beta 1");
    CHECK(no_c.code == 2);
    CHECK(contains(no_c.output, "give it with --c"));
    const auto bad_c = run_cli("run --a " + (dir / "a.npy").string() + " --b " + (dir / "b.npy").string() + " --c " +
                               (dir / "a.npy").string() + " --beta 1");
    CHECK(bad_c.code == 2);
    CHECK(contains(bad_c.output, "C must be 2x2x2"));
    std::filesystem::remove_all(dir);
  }

  TEST_CASE("bad invocations: a clear message on stderr and exit code 2") {
    const std::array<std::pair<const char*, const char*>, 25> cases = {{
        {"run --m 4 --n 4 --k 4 --type f16 --out-type i32", "f16 inputs give C of f32 or f16"},
        {"run --m 4 --n 4 --k 4 --type f32 --out-type f16", "f32 inputs give C of f32"},
        {"run --m 4 --n 4 --k 4 --type f16 --kernel coopmat --tile 32", "tile is 64 or 128"},
        {"run --m 4 --n 4 --k 4 --type f32 --kernel coopmat2", "multiplies f16, bf16, i8 and u8 matrices"},
        {"run --m 4 --n 4 --k 4 --type f32 --f16-accumulate", "f16 accumulation is for f16 inputs"},
        {"tune --type f16", "f16 is not tuned"},
        {"tune --ops nx", "ops \"nx\": expected nn, nt, tn or tt"},
        {"tune --shapes /dev/null --sizes 64", "--sizes excludes --shapes"},
        {"run --m -5 --n 4 --k 4", "--m must be between 0"},
        {"run --m 4 --n 4", "--k is required"},
        {"run --m 4 --n 4 --k 4 --kernel bogus", "--kernel bogus is unknown"},
        {"run --m 4 --n 4 --k 4 --type f8", "--type f8 is unknown"},
        {"run --m 4 --n 4 --k 4 --kernel tiled --tile 0", "--tile must be between 1"},
        {"run --m 4 --n 4 --k 4 --kernel tiled --tile 64", "maxComputeWorkGroupInvocations"},
        {"run --m 4 --n 4 --k 4 --tile 8", "--tile goes with --kernel naive or tiled"},
        {"run --m 4 --n 4 --k 4 --kernel blocked --config '64x64 8x8'", "wrong count of numbers"},
        {"run --m 4 --n 4 --k 4 --kernel blocked --config '64x64x8 8x8 lanes 3'", "lanes_n must divide 32"},
        {"run --m 4 --n 4 --k 4 --kernel tiled --config '64x64x8 8x8'", "--config goes with --kernel blocked"},
        {"run --m 4 --n 4 --k 4 --repeat 0", "--repeat must be between 1"},
        {"run --m 4 --n 4 --k 4 --layout diagonal", "--layout diagonal is unknown"},
        {"run --m 4 --n 4 --k 4 --type i32 --alpha 0.5", "alpha = 0.5 is not an int32"},
        {"run --m 4 --n 4 --k 4 --batch -1", "--batch must be between 0"},
        {"run --m 4 --n 4 --k 4 --device 99", "out of range"},
        {"run --m 4 --n 4 --k 4 --device no-such-gpu", "no device name contains"},
        {"run --a /nonexistent.npy --b /nonexistent.npy", "cannot open"},
    }};
    for (const auto& [args, words] : cases) {
      const auto r = run_cli(args);
      const std::string said = std::string(args) + "\n" + r.output;  // INFO captures: not a binding (clang 14)
      INFO(said);
      CHECK(r.code == 2);
      CHECK(contains(r.output, words));
    }
    const auto nothing = run_cli("");
    CHECK(nothing.code == 2);
    const auto help = run_cli("run --help");
    CHECK(help.code == 0);
    CHECK(contains(help.output, "--verify"));
  }

  TEST_CASE("the warm-up and steadiness options: a bad value refused before any work") {
    for (const auto& [args, words] : std::vector<std::pair<const char*, const char*>>{
             {"run --m 4 --n 4 --k 4 --warmup-ms -1", "--warmup-ms"},
             {"tune --warmup-ms 20000", "--warmup-ms"},
             {"peak --warmup-ms -3", "--warmup-ms"},
             {"bench --sizes 16 --warmup-ms -5", "--warmup-ms must be between 0 and 10000"},
             {"bench --sizes 16 --steady-tolerance 0", "--steady-tolerance must be a percentage above 0"}}) {
      const auto r = run_cli(args);
      const std::string said = std::string(args) + "\n" + r.output;  // INFO captures: not a binding (clang 14)
      INFO(said);
      CHECK(r.code == 2);
      CHECK(contains(r.output, words));
    }
  }

  TEST_CASE("run prints the steadiness check's verdict beside the warm-up it had") {
    const auto r = run_cli("run --m 64 --n 64 --k 64 --repeat 3 --seed 1");
    INFO(r.output);
    CHECK(r.code == 0);
    CHECK(contains(r.output, "ms of warm-up before"));
    CHECK(contains(r.output, "steady:   2 checks of f32 "));
  }

  TEST_CASE("demo: a size the device finishes in seconds, a CPU driver named, auto beside naive and tiled") {
    const auto r = run_cli("demo");
    INFO(r.output);
    CHECK(r.code == 0);
    CHECK(contains(r.output, "GPU naive"));
    CHECK(contains(r.output, "GPU tiled"));
    CHECK(contains(r.output, "GPU auto ("));
    CHECK(contains(r.output, "CPU driver") == contains(r.output, "(CPU, "));  // the device line's type
    // The same product in float64 after float32: three more checked GPU rows, or a skip naming the feature.
    CHECK(contains(r.output, "4. The same inputs as float64"));
    const size_t f64_part = r.output.find("4. The same inputs as float64");
    const std::string tail = f64_part == std::string::npos ? "" : r.output.substr(f64_part);
    CHECK((contains(tail, "skipped: ") ? contains(tail, "lacks shaderFloat64")
                                       : contains(tail, "GPU auto (") && contains(tail, "check: passed")));
  }

  TEST_CASE("empty products succeed without a dispatch") {
    const auto r = run_cli("run --m 0 --n 5 --k 5 --verify");
    INFO(r.output);
    CHECK(r.code == 0);
    CHECK(contains(r.output, "nothing dispatched"));
  }
}
