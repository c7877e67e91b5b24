// What `vkgemm tune` tunes (tools/vkgemm/tune_jobs.hpp): shapes × op combinations, and a shape set's cases as
// the kernel runs them; and how it times its last round (tools/vkgemm/time_in_turns.hpp). No Vulkan.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "time_in_turns.hpp"
#include "tune_jobs.hpp"
#include "vkgemm/error.hpp"

using namespace vkgemm;
using namespace vkgemm::cli;

namespace {

std::string write_set(const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() / ("vkgemm-set-" + std::to_string(getpid()) + ".json");
  std::ofstream(path) << text;
  return path.string();
}

}  // namespace

TEST_SUITE("tune jobs") {
  TEST_CASE("ops: each combination, all, and a clear refusal") {
    const auto ops = parse_ops({"nt,tn", "all"});
    REQUIRE(ops.size() == 6);
    CHECK(ops[0] == std::pair{Op::n, Op::t});
    CHECK(ops[1] == std::pair{Op::t, Op::n});
    CHECK(ops[5] == std::pair{Op::t, Op::t});
    CHECK_THROWS_WITH_AS(parse_ops({"nx"}), doctest::Contains("expected nn, nt, tn or tt"), Error);
    // Each shape with each combination, once.
    const auto jobs = jobs_of({{64, 32, 16}, {64, 32, 16}}, parse_ops({"nn,tt"}));
    REQUIRE(jobs.size() == 2);
    CHECK(to_string(jobs[1]) == "64x32x16 tt");
  }

  TEST_CASE("a shape set: its cases of the type, column-major ones turned, batched ones left out") {
    const std::string path = write_set(R"({"f32": [
        {"shape": "100x200x300"}, {"shape": "100x200x300", "ops": "nt", "layout": "col"},
        {"shape": "64", "batch": 8}, {"shape": "100x200x300"}],
      "f16": [{"shape": "512"}]})");
    size_t skipped = 0;
    const auto jobs = jobs_from_shape_set(path, DataType::f32, skipped);
    CHECK(skipped == 1);
    REQUIRE(jobs.size() == 2);
    CHECK(to_string(jobs[0]) == "100x200x300 nn");
    // C^T = op(B)^T op(A)^T: m and n swap, and so do the operands with their ops.
    CHECK(to_string(jobs[1]) == "200x100x300 tn");
    CHECK_THROWS_WITH_AS(jobs_from_shape_set(path, DataType::f64, skipped), doctest::Contains("has no f64 cases"), Error);
    CHECK_THROWS_WITH_AS(jobs_from_shape_set(write_set("{\"f32\": [{\"shape\": \"4x\"}]}"), DataType::f32, skipped),
                         doctest::Contains("4x"), Error);
    CHECK_THROWS_WITH_AS(jobs_from_shape_set(write_set("not json"), DataType::f32, skipped),
                         doctest::Contains("not a shape set"), Error);
    CHECK_THROWS_WITH_AS(jobs_from_shape_set("/nonexistent/set.json", DataType::f32, skipped),
                         doctest::Contains("cannot read"), Error);
    std::filesystem::remove(path);
  }
  TEST_CASE("time in turns: a clock drifting through the series does not pick the winner") {
    // The fastest contender timed last, on a clock that adds 0.03 ms per call (a GPU cooling down): timed
    // round after round in one order, the first contender would read fastest (1.155 against 1.195 ms).
    const std::vector<double> truth = {1.02, 1.04, 1.00};
    int calls = 0;
    const auto drifting = [&](size_t i) { return truth[i] + 0.03 * calls++; };
    const auto medians = time_in_turns(truth.size(), 4, drifting);
    CHECK(calls == 12);
    REQUIRE(medians.size() == 3);
    CHECK(std::min_element(medians.begin(), medians.end()) - medians.begin() == 2);
    // Linear drift moves every median alike: the differences are the true ones.
    CHECK(medians[0] - medians[2] == doctest::Approx(0.02));
    CHECK(medians[1] - medians[2] == doctest::Approx(0.04));
  }
  TEST_CASE("time in turns: one slow reading (a clock still ramping) does not count") {
    const std::vector<double> truth = {2.0, 1.0};
    int calls = 0;
    const auto first_slow = [&](size_t i) { return truth[i] * (calls++ == 0 ? 3.0 : 1.0); };
    const auto medians = time_in_turns(truth.size(), 3, first_slow);
    CHECK(medians[0] == doctest::Approx(2.0));
    CHECK(medians[1] == doctest::Approx(1.0));
    CHECK(time_in_turns(0, 4, first_slow).empty());
  }
}
