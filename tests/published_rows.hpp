// The check that the published H200 results (docs/results/h200, rows written by tools/gpu/sets/bench-vs-cublas.py;
// the tests read their copies in tests/data)
// describe this tree: each row planned on a described device with the built-in tuning tables must get the
// kernel and configuration it was measured with. A change to the tuning table or the planner that plans a
// case otherwise leaves that number describing code that no longer runs: measure the set again
// (tools/gpu/sets/published.sh), publish it under docs/results/h200 and copy it to tests/data.
#pragma once

#include <fstream>
#include <string>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "plan/schedule.hpp"
#include "tuning/tuning_table.hpp"

namespace vkgemm::test {

// `types`: the rows' element types (type and c_type; the rest of `types` is taken from each row).
inline void check_published_rows(const char* path, const GemmDesc& types, const DeviceInfo& device) {
  std::ifstream file(path);
  REQUIRE_MESSAGE(file, "cannot read ", path);
  const auto result = nlohmann::json::parse(file);
  const auto& rows = result.at("rows");
  // A published set has at least 30 cases per type; one measured in part (bench-vs-cublas.py --combine
  // --partial) names the cases it lacks, and most must be there.
  const size_t missing = result.contains("missing") ? result.at("missing").size() : 0;
  REQUIRE(rows.size() + missing >= 30);
  REQUIRE(rows.size() >= 20);
  tuning::Table table;
  for (const auto& [name, text] : tuning::builtin_tables()) table.add_json(text, name);
  for (const auto& r : rows) {
    GemmDesc desc = types;
    desc.layout = r.at("layout") == "col" ? Layout::col_major : Layout::row_major;
    desc.op_a = r.at("op_a") == "t" ? Op::t : Op::n;
    desc.op_b = r.at("op_b") == "t" ? Op::t : Op::n;
    desc.m = r.at("m"), desc.n = r.at("n"), desc.k = r.at("k"), desc.batch = r.at("batch");
    const auto plan = detail::schedule_product(desc, {}, device, table);
    CAPTURE(r.dump());
    CHECK(std::string(to_string(plan.kernel)) == r.at("kernel").get<std::string>());
    CHECK(plan.config == r.at("config").get<std::string>());
  }
}

}  // namespace vkgemm::test
