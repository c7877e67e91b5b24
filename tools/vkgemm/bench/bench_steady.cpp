#include "bench_steady.hpp"

#include <algorithm>

namespace vkgemm::cli::bench {
namespace {

template <typename Result>
void judge(Result& r, const std::vector<Verdict>& verdicts) {
  if (r.status != Status::passed && r.status != Status::unverified) return;
  if (verdicts.empty()) return;
  const Verdict& v = verdicts[std::min(r.segment, verdicts.size() - 1)];
  if (v.steady) return;
  r.status = Status::unsteady;
  r.reason = v.reason;
}

}  // namespace

void apply_steadiness(Run& run) {
  const auto verdicts = judge_segments(run.steadiness.checks, run.settings.steady_tolerance_pct);
  for (CaseResult& c : run.cases) judge(c, verdicts);
  for (LatencyResult& l : run.latency) judge(l, verdicts);
  for (HostResult& h : run.host_products) judge(h, verdicts);
}

size_t unsettled_count(const Run& run) {
  size_t n = 0;
  for (const CaseResult& c : run.cases) n += c.timed() && c.warmup.dispatches > 0 && !c.warmup.settled;
  for (const LatencyResult& l : run.latency) n += l.timed() && l.warmup.dispatches > 0 && !l.warmup.settled;
  for (const HostResult& h : run.host_products) n += h.timed() && h.warmup.dispatches > 0 && !h.warmup.settled;
  return n;
}

size_t unsteady_count(const Run& run) {
  size_t n = 0;
  for (const CaseResult& c : run.cases) n += c.status == Status::unsteady;
  for (const LatencyResult& l : run.latency) n += l.status == Status::unsteady;
  for (const HostResult& h : run.host_products) n += h.status == Status::unsteady;
  return n;
}

}  // namespace vkgemm::cli::bench
