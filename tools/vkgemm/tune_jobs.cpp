#include "tune_jobs.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "vkgemm/error.hpp"

namespace vkgemm::cli {
namespace {

std::pair<Op, Op> parse_op_pair(const std::string& text) {
  if (text.size() != 2 || (text[0] != 'n' && text[0] != 't') || (text[1] != 'n' && text[1] != 't')) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("ops \"{}\": expected nn, nt, tn or tt (op(A) then op(B); t: stored transposed), or all",
                            text));
  }
  return {text[0] == 't' ? Op::t : Op::n, text[1] == 't' ? Op::t : Op::n};
}

char op_letter(Op op) { return op == Op::t ? 't' : 'n'; }

bool same_job(const TuneJob& x, const TuneJob& y) {
  return x.shape.m == y.shape.m && x.shape.n == y.shape.n && x.shape.k == y.shape.k && x.op_a == y.op_a &&
         x.op_b == y.op_b;
}

// One case of a shape set: its shape, ops and layout; false when it is batched.
bool job_of_case(const nlohmann::json& c, TuneJob& job) {
  if (c.value("batch", 1) != 1) return false;
  job.shape = parse_shape(c.at("shape").get<std::string>());
  std::tie(job.op_a, job.op_b) = parse_op_pair(c.value("ops", std::string("nn")));
  if (c.value("layout", std::string("row")) == "col") {  // C^T = op(B)^T op(A)^T: B and A swap places
    std::swap(job.shape.m, job.shape.n);
    std::swap(job.op_a, job.op_b);
  }
  return true;
}

}  // namespace

std::vector<std::pair<Op, Op>> parse_ops(const std::vector<std::string>& texts) {
  std::vector<std::pair<Op, Op>> out;
  for (const std::string& text : texts) {
    std::stringstream items(text);
    for (std::string item; std::getline(items, item, ',');) {
      if (item == "all") {
        for (const char* all : {"nn", "nt", "tn", "tt"}) out.push_back(parse_op_pair(all));
      } else {
        out.push_back(parse_op_pair(item));
      }
    }
  }
  if (out.empty()) throw Error(ErrorCode::invalid_argument, "--ops names no op combination");
  return out;
}

std::vector<TuneJob> jobs_of(const std::vector<Shape>& shapes, const std::vector<std::pair<Op, Op>>& ops) {
  std::vector<TuneJob> out;
  for (const Shape& s : shapes) {
    for (const auto& [a, b] : ops) {
      const TuneJob job{s, a, b};
      if (std::none_of(out.begin(), out.end(), [&](const TuneJob& j) { return same_job(j, job); })) out.push_back(job);
    }
  }
  return out;
}

std::vector<TuneJob> jobs_from_shape_set(const std::string& path, DataType type, size_t& skipped) {
  std::ifstream in(path);
  if (!in) throw Error(ErrorCode::io_error, fmt::format("--shapes {}: cannot read the file", path));
  std::vector<TuneJob> out;
  skipped = 0;
  const std::string key(vkgemm::to_string(type));
  try {
    const nlohmann::json set = nlohmann::json::parse(in);
    if (!set.contains(key) || !set.at(key).is_array() || set.at(key).empty()) {
      throw Error(ErrorCode::file_format, fmt::format("--shapes {}: the set has no {} cases", path, key));
    }
    for (const auto& c : set.at(key)) {
      TuneJob job;
      if (!job_of_case(c, job)) {
        ++skipped;
      } else if (std::none_of(out.begin(), out.end(), [&](const TuneJob& j) { return same_job(j, job); })) {
        out.push_back(job);
      }
    }
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorCode::file_format, fmt::format("--shapes {}: not a shape set: {}", path, e.what()));
  }
  return out;
}

std::string to_string(const TuneJob& job) {
  return fmt::format("{}x{}x{} {}{}", job.shape.m, job.shape.n, job.shape.k, op_letter(job.op_a), op_letter(job.op_b));
}

}  // namespace vkgemm::cli
