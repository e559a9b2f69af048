#include "src/analysis/markers/tail_report.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <set>

#include "fmt/format.h"
#include "src/analysis/timeline/distribution.h"
#include "src/xplane/saturating.h"
#include "src/xplane/work_count.h"

namespace neuronprof {
namespace analysis {
namespace {

struct PartSums {
  double slowest = 0, typical = 0;
};

std::string Signed(double ps) { return (ps < 0 ? "-" : "+") + HumanDuration(std::fabs(ps)); }

// Ranks [first, last] of the median band, below the slowest `slowest`.
std::pair<size_t, size_t> TypicalBand(size_t n, size_t slowest) {
  const double top = static_cast<double>(n - 1);
  size_t last = static_cast<size_t>(std::ceil(kTailBandHigh * top));
  last = std::min(last, n - slowest - 1);
  const size_t first = std::min(static_cast<size_t>(std::floor(kTailBandLow * top)), last);
  return {first, last};
}

// Names the parts of a report with a tail, largest excess first.
void NameParts(const std::map<std::string_view, PartSums>& sums, TailReport& report) {
  const double slowest = static_cast<double>(report.slowest);
  const double typical = static_cast<double>(report.typical);
  for (const auto& [part, sum] : sums) {
    TailLine line{std::string(part), 0, sum.slowest / slowest, sum.typical / typical};
    line.excess_ps = line.slowest_mean_ps - line.typical_mean_ps;
    if (line.excess_ps >= kTailMinLineShare * report.gap_ps()) {
      report.lines.push_back(std::move(line));
    } else {
      report.others_excess_ps += line.excess_ps;
      ++report.others;
    }
  }
  std::stable_sort(report.lines.begin(), report.lines.end(),
                   [](const TailLine& a, const TailLine& b) { return a.excess_ps > b.excess_ps; });
}

}  // namespace

std::string HumanDuration(double ps) {
  static const char* const kUnits[] = {"ps", "ns", "us", "ms", "s"};
  if (ps == 0) return "0";
  int unit = 0;
  while (ps >= 999.5 && unit < 4) {
    ps /= 1000;
    ++unit;
  }
  if (ps >= 999.5) return fmt::format("{:.0f} s", ps);
  return fmt::format("{:.3g} {}", ps, kUnits[unit]);
}

TailReport ExplainTail(std::string name, std::string kind, std::vector<TailInstance> instances) {
  TailReport report;
  report.name = std::move(name);
  report.kind = std::move(kind);
  if (instances.empty()) return report;
  std::stable_sort(
      instances.begin(), instances.end(),
      [](const TailInstance& a, const TailInstance& b) { return a.duration_ps < b.duration_ps; });
  const size_t n = instances.size();
  std::vector<int64_t> durations(n);
  for (size_t i = 0; i < n; ++i) durations[i] = instances[i].duration_ps;
  report.instances = static_cast<int64_t>(n);
  report.p50_ps = Percentile(durations, 50);
  report.p99_ps = Percentile(durations, 99);
  report.max_ps = durations.back();
  const size_t slowest =
      std::max<size_t>(1, static_cast<size_t>(std::ceil(kTailSlowestFraction * n)));
  report.slowest = static_cast<int64_t>(slowest);
  if (n < 2) return report;  // nothing to compare with
  const auto [first, last] = TypicalBand(n, slowest);
  report.typical = static_cast<int64_t>(last - first + 1);
  std::map<std::string_view, PartSums> sums;
  auto add = [&](size_t i, double PartSums::*set, double& mean) {
    mean += static_cast<double>(instances[i].duration_ps);
    for (const auto& [part, ps] : instances[i].parts) sums[part].*set += static_cast<double>(ps);
  };
  for (size_t i = n - slowest; i < n; ++i) add(i, &PartSums::slowest, report.slowest_mean_ps);
  for (size_t i = first; i <= last; ++i) add(i, &PartSums::typical, report.typical_mean_ps);
  report.slowest_mean_ps /= static_cast<double>(report.slowest);
  report.typical_mean_ps /= static_cast<double>(report.typical);
  const double gap = report.gap_ps();
  report.has_tail = gap > 0 && gap >= kTailMinGap * report.typical_mean_ps;
  if (report.has_tail) NameParts(sums, report);
  return report;
}

int64_t Overlap(int64_t start, int64_t end, int64_t lo, int64_t hi) {
  return std::max<int64_t>(0, SaturatingSub(std::min(end, hi), std::max(start, lo)));
}

namespace {

int64_t EndPs(const HostSpan& span) { return SaturatingAdd(span.start_ps, span.duration_ps); }

// The direct children of a step, disjoint and in start order (a scope that
// starts inside a sibling nests in it): the time they cover of any window
// in O(log children).
class ChildCover {
 public:
  ChildCover(const HostSpans& spans, const std::vector<int32_t>& children) {
    covered_.push_back(0);
    xplane::CountWork(children.size());
    for (const int32_t c : children) {
      const HostSpan& child = spans.spans[c];
      starts_.push_back(child.start_ps);
      ends_.push_back(EndPs(child));
      covered_.push_back(
          SaturatingAdd(covered_.back(), SaturatingSub(ends_.back(), starts_.back())));
    }
  }

  int64_t Covered(int64_t lo, int64_t hi) const {
    xplane::CountWork();
    if (hi <= lo) return 0;
    const size_t first = std::upper_bound(ends_.begin(), ends_.end(), lo) - ends_.begin();
    const size_t last = std::lower_bound(starts_.begin(), starts_.end(), hi) - starts_.begin();
    if (first >= last) return 0;
    int64_t covered = SaturatingSub(covered_[last], covered_[first]);
    covered = SaturatingSub(covered, std::max<int64_t>(0, SaturatingSub(lo, starts_[first])));
    return SaturatingSub(covered, std::max<int64_t>(0, SaturatingSub(ends_[last - 1], hi)));
  }

 private:
  std::vector<int64_t> starts_, ends_;
  std::vector<int64_t> covered_;  // covered_[i]: the first i children's time
};

// A wait's time inside `step` and outside its direct children, moved from
// the instance's "(self)" (parts[0]) to a part of its own. `part` must
// outlive the instance (a view into the XSpace or `waits`).
void AddWait(const HostSpan& step, const ChildCover& children, const FlowWait& wait,
             TailInstance& instance, std::string_view part = {}) {
  if (part.empty()) part = wait.part;
  const int64_t lo = std::max(wait.start_ps, step.start_ps);
  const int64_t hi = std::min(wait.end_ps, EndPs(step));
  int64_t uncovered = std::max<int64_t>(0, SaturatingSub(hi, lo));
  uncovered = SaturatingSub(uncovered, children.Covered(lo, hi));
  int64_t& self = instance.parts.front().second;
  uncovered = std::min(std::max<int64_t>(0, uncovered), self);
  if (uncovered == 0) return;
  self -= uncovered;
  instance.parts.emplace_back(part, uncovered);
}

}  // namespace

std::vector<TailReport> BuildStepTails(const HostSpans& spans, const std::vector<FlowWait>& waits,
                                       const std::vector<FlowWait>& linked,
                                       const std::vector<FlowWait>& device) {
  std::map<std::string_view, std::vector<TailInstance>> by_name;
  std::vector<int> instance_of(spans.spans.size(), -1);  // a step's index in its list
  std::map<int32_t, std::vector<int32_t>> children;      // of each step with waits to place
  for (size_t i = 0; i < spans.spans.size(); ++i) {
    const HostSpan& span = spans.spans[i];
    if (span.parent >= 0 && instance_of[span.parent] >= 0) {  // a part of a step
      const HostSpan& step = spans.spans[span.parent];
      const int64_t end = std::min(EndPs(span), EndPs(step));
      by_name[step.name][instance_of[span.parent]].parts.emplace_back(
          span.name, SaturatingSub(end, span.start_ps));
      if (!waits.empty() || !linked.empty() || !device.empty()) {
        children[span.parent].push_back(static_cast<int32_t>(i));
      }
    }
    if (span.kind != SpanKind::kStep) continue;
    auto& list = by_name[span.name];
    instance_of[i] = static_cast<int>(list.size());
    list.push_back({span.duration_ps, {{kSelfPart, span.self_ps}}});
  }
  // Per span, in one pass (parents come first): the step around it, itself
  // included, and the step's direct child that holds it; -1: none.
  std::vector<int32_t> step_of(spans.spans.size(), -1), under_step(spans.spans.size(), -1);
  xplane::CountWork(spans.spans.size());
  for (size_t i = 0; i < spans.spans.size(); ++i) {
    const HostSpan& span = spans.spans[i];
    if (span.kind == SpanKind::kStep) {
      step_of[i] = static_cast<int32_t>(i);
    } else if (span.parent >= 0) {
      step_of[i] = step_of[span.parent];
    }
    if (span.parent >= 0) {
      under_step[i] = spans.spans[span.parent].kind == SpanKind::kStep ? static_cast<int32_t>(i)
                                                                       : under_step[span.parent];
    }
  }
  std::map<int32_t, ChildCover> covers;  // of each step with waits to place
  auto cover_of = [&](int32_t step) -> const ChildCover& {
    auto it = covers.find(step);
    if (it == covers.end()) it = covers.emplace(step, ChildCover(spans, children[step])).first;
    return it->second;
  };
  for (const FlowWait& wait : waits) {
    const int32_t parent = spans.spans[wait.producer].parent;
    const int32_t step = parent >= 0 ? step_of[parent] : -1;
    if (step < 0) continue;
    const HostSpan& s = spans.spans[step];
    AddWait(s, cover_of(step), wait, by_name[s.name][instance_of[step]]);
  }
  std::set<std::pair<int32_t, int32_t>> counted;  // (step, linked marker): once each
  for (const FlowWait& link : linked) {
    const int32_t step = link.producer >= 0 ? step_of[link.producer] : -1;
    if (step < 0 || !counted.insert({step, link.consumer}).second) continue;
    const HostSpan& s = spans.spans[step];
    AddWait(s, cover_of(step), link, by_name[s.name][instance_of[step]]);
  }
  for (const FlowWait& work : device) {
    const int32_t child = work.producer >= 0 ? under_step[work.producer] : -1;
    if (child < 0) continue;  // in no step, or the step itself
    const int32_t step = spans.spans[child].parent;
    const HostSpan& s = spans.spans[step];
    AddWait(s, cover_of(step), work, by_name[s.name][instance_of[step]], spans.spans[child].name);
  }
  std::vector<TailReport> reports;
  for (auto& [name, instances] : by_name) {
    reports.push_back(ExplainTail(std::string(name), "step", std::move(instances)));
  }
  return reports;
}

std::string TailSentence(const TailReport& r) {
  fmt::memory_buffer out;
  auto to = std::back_inserter(out);
  fmt::format_to(to, "{}: p50 {}, p99 {}, max {} ({} instance{})", r.name, HumanDuration(r.p50_ps),
                 HumanDuration(r.p99_ps), HumanDuration(static_cast<double>(r.max_ps)), r.instances,
                 r.instances == 1 ? "" : "s");
  if (r.instances < 2) {
    fmt::format_to(to, "; one instance, no tail to explain");
  } else if (!r.has_tail) {
    fmt::format_to(to,
                   "; the slowest 1 % ({}) are within {:.0f} % of the median band ({}): "
                   "nothing to blame",
                   r.slowest, kTailMinGap * 100, Signed(r.gap_ps()));
  } else {
    fmt::format_to(to, "; the slowest 1 % ({}) take {} over the median band, spending ", r.slowest,
                   Signed(r.gap_ps()));
    for (size_t i = 0; i < r.lines.size(); ++i) {
      fmt::format_to(to, "{}{} in {}", i == 0 ? "" : ", ", Signed(r.lines[i].excess_ps),
                     r.lines[i].part);
    }
    if (r.others > 0) {
      fmt::format_to(to, "{}{} in {} other part{}", r.lines.empty() ? "" : ", ",
                     Signed(r.others_excess_ps), r.others, r.others == 1 ? "" : "s");
    }
  }
  return fmt::to_string(out);
}

}  // namespace analysis
}  // namespace neuronprof
