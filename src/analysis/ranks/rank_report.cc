#include "src/analysis/ranks/rank_report.h"

#include <algorithm>
#include <ctime>
#include <limits>
#include <map>
#include <set>
#include <utility>

#include "absl/strings/str_join.h"
#include "fmt/format.h"
#include "src/analysis/ranks/collective_matching.h"
#include "src/analysis/timeline/interval_coverage.h"
#include "src/xplane/collective_bandwidth.h"
#include "src/xplane/saturating.h"

namespace neuronprof {
namespace analysis {
namespace {

std::string Identity(const RankData& rank) {
  if (!rank.identity.distributed()) return fmt::format("{}: not a rank (world size 1)", rank.file);
  return fmt::format("{}: rank {} of world size {}", rank.file, rank.identity.rank,
                     rank.identity.world_size);
}

absl::Status CheckOneJob(const std::vector<RankData>& ranks) {
  std::set<int> sizes;
  for (const RankData& rank : ranks) sizes.insert(rank.identity.world_size);
  if (sizes.size() > 1) {
    std::vector<std::string> lines;
    for (const RankData& rank : ranks) lines.push_back(Identity(rank));
    return absl::InvalidArgumentError(
        fmt::format("the run's files are not the ranks of one job: their world sizes differ\n  {}",
                    absl::StrJoin(lines, "\n  ")));
  }
  for (size_t i = 1; i < ranks.size(); ++i) {
    if (ranks[i].identity.rank == ranks[i - 1].identity.rank) {
      return absl::InvalidArgumentError(
          fmt::format("rank {} is in two files: {} and {} (one run holds one capture per rank)",
                      ranks[i].identity.rank, ranks[i - 1].file, ranks[i].file));
    }
  }
  return absl::OkStatus();
}

// "2026-11-25 14:00:00.123456 UTC"
std::string Utc(int64_t epoch_ns) {
  const std::time_t seconds = static_cast<std::time_t>(epoch_ns / 1000000000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  return fmt::format("{:04}-{:02}-{:02} {:02}:{:02}:{:02}.{:06} UTC", tm.tm_year + 1900,
                     tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                     (epoch_ns % 1000000000) / 1000);
}

absl::Status CheckWindows(const std::vector<RankData>& ranks, int64_t* start, int64_t* stop) {
  for (const RankData& rank : ranks) {
    if (rank.start_ns <= 0 || rank.stop_ns <= rank.start_ns) {
      return absl::InvalidArgumentError(
          fmt::format("rank {} ({}) has no capture window (Task Environment profile_start_time and "
                      "profile_stop_time): its times cannot be put beside the other ranks'",
                      rank.identity.rank, rank.file));
    }
  }
  const auto latest = std::max_element(
      ranks.begin(), ranks.end(),
      [](const RankData& a, const RankData& b) { return a.start_ns < b.start_ns; });
  const auto earliest =
      std::min_element(ranks.begin(), ranks.end(),
                       [](const RankData& a, const RankData& b) { return a.stop_ns < b.stop_ns; });
  *start = latest->start_ns;
  *stop = earliest->stop_ns;
  if (*start < *stop) return absl::OkStatus();
  std::vector<std::string> windows;
  for (const RankData& rank : ranks) {
    windows.push_back(fmt::format("rank {}: {} .. {} ({})", rank.identity.rank, Utc(rank.start_ns),
                                  Utc(rank.stop_ns), rank.file));
  }
  return absl::InvalidArgumentError(
      fmt::format("the ranks' captures do not overlap in time: rank {} started after rank {} had "
                  "stopped, so they are not one window of the job (capture every rank at once: "
                  "neuronprof capture --service_addr with every rank's port)\n  {}",
                  latest->identity.rank, earliest->identity.rank, absl::StrJoin(windows, "\n  ")));
}

void Rebase(int64_t shift_ps, RankData* rank) {
  auto shift = [&](int64_t* t) { *t = SaturatingAdd(*t, shift_ps); };
  for (RankStep& s : rank->steps) shift(&s.start_ps), shift(&s.end_ps);
  for (SpanUnion* spans : {&rank->compute, &rank->comm}) {
    for (Span& s : *spans) shift(&s.start_ps), shift(&s.end_ps);
  }
  for (RankCollective& c : rank->collectives) {
    shift(&c.arrival_ps), shift(&c.start_ps), shift(&c.end_ps);
  }
}

// The rank's step holding time t, or -1.
int StepAt(const std::vector<RankStep>& steps, int64_t t) {
  auto it = std::upper_bound(steps.begin(), steps.end(), t,
                             [](int64_t x, const RankStep& s) { return x < s.start_ps; });
  if (it == steps.begin()) return -1;
  --it;
  return t < it->end_ps ? static_cast<int>(it - steps.begin()) : -1;
}

struct OpTotals {
  std::string collective;
  int64_t calls = 0, bytes = 0, total_ps = 0, wait_ps = 0;
  double algorithm_bytes = 0;
};

// A collective every rank recorded: each rank waited from its arrival to
// the last one (never more than it spent in the collective); the last
// arriver caused it. Returns the waiting, summed over the ranks.
int64_t AddWaiting(const std::vector<RankData>& ranks, const CollectiveInstance& instance,
                   RankReport* report, std::vector<std::vector<int64_t>>* step_wait) {
  int64_t last = std::numeric_limits<int64_t>::min();
  size_t last_rank = 0;
  for (size_t r = 0; r < ranks.size(); ++r) {
    const int64_t arrival = ranks[r].collectives[instance.member[r]].arrival_ps;
    if (arrival > last) {
      last = arrival;
      last_rank = r;
    }
  }
  int64_t caused = 0;
  for (size_t r = 0; r < ranks.size(); ++r) {
    const RankCollective& c = ranks[r].collectives[instance.member[r]];
    const int64_t waited = std::clamp<int64_t>(SaturatingSub(last, c.arrival_ps), 0,
                                               SaturatingSub(c.end_ps, c.arrival_ps));
    if (waited == 0) continue;
    caused = SaturatingAdd(caused, waited);
    report->ranks[r].waited_ps = SaturatingAdd(report->ranks[r].waited_ps, waited);
    const int step = StepAt(ranks[r].steps, c.arrival_ps);
    if (step >= 0) (*step_wait)[r][step] = SaturatingAdd((*step_wait)[r][step], waited);
  }
  report->total_wait_ps = SaturatingAdd(report->total_wait_ps, caused);
  if (caused > 0) {
    ++report->ranks[last_rank].last_arrivals;
    report->ranks[last_rank].caused_ps = SaturatingAdd(report->ranks[last_rank].caused_ps, caused);
  }
  return caused;
}

// Adds one collective to its op's totals: the ranks' mean span and bytes.
void AddCall(const std::vector<RankData>& ranks, const CollectiveInstance& instance, int world_size,
             OpTotals* op) {
  int64_t span_sum = 0, bytes_sum = 0, present = 0;
  for (size_t r = 0; r < ranks.size(); ++r) {
    if (instance.member[r] < 0) continue;
    const RankCollective& c = ranks[r].collectives[instance.member[r]];
    op->collective = c.collective;
    ++present;
    span_sum = SaturatingAdd(span_sum, SaturatingSub(c.end_ps, c.start_ps));
    bytes_sum = SaturatingAdd(bytes_sum, c.bytes);
  }
  ++op->calls;
  op->total_ps = SaturatingAdd(op->total_ps, span_sum / present);
  op->bytes = SaturatingAdd(op->bytes, bytes_sum / present);
  op->algorithm_bytes +=
      xplane::AlgorithmBytes(op->collective, static_cast<double>(bytes_sum) / present, world_size);
}

std::vector<CollectiveRow> CollectiveRows(const std::map<std::string, OpTotals>& ops,
                                          int world_size) {
  std::vector<CollectiveRow> rows;
  for (const auto& [name, op] : ops) {
    CollectiveRow row;
    row.op = name;
    row.collective = op.collective;
    row.calls = op.calls;
    row.bytes_per_call = op.bytes / op.calls;
    row.total_ps = op.total_ps;
    row.wait_ps = op.wait_ps;
    if (op.total_ps > 0 && op.algorithm_bytes > 0) {
      row.algbw_gbps = op.algorithm_bytes / (static_cast<double>(op.total_ps) * 1e-12) / 1e9;
      row.busbw_gbps = row.algbw_gbps * xplane::BusBandwidthFactor(op.collective, world_size);
    }
    rows.push_back(std::move(row));
  }
  std::stable_sort(rows.begin(), rows.end(), [](const CollectiveRow& a, const CollectiveRow& b) {
    return a.total_ps > b.total_ps;
  });
  return rows;
}

// Waiting, stragglers and the collectives table from matched collectives.
void AddCollectives(const std::vector<RankData>& ranks, int world_size, RankReport* report,
                    std::vector<std::vector<int64_t>>* step_wait) {
  std::vector<const std::vector<RankCollective>*> lists;
  for (const RankData& rank : ranks) lists.push_back(&rank.collectives);
  std::map<std::string, OpTotals> ops;
  for (const CollectiveInstance& instance : MatchCollectives(lists)) {
    size_t r = 0;  // The first rank that recorded it (one always did).
    while (instance.member[r] < 0) ++r;
    OpTotals& op = ops[ranks[r].collectives[instance.member[r]].op];
    AddCall(ranks, instance, world_size, &op);
    if (!instance.complete) {
      ++report->unmatched;
      continue;
    }
    ++report->matched;
    op.wait_ps = SaturatingAdd(op.wait_ps, AddWaiting(ranks, instance, report, step_wait));
  }
  report->collectives = CollectiveRows(ops, world_size);
}

}  // namespace

std::vector<RankRange> MissingRanks(int world_size, const std::vector<int>& present) {
  std::vector<RankRange> missing;
  int next = 0;  // the lowest rank not yet placed
  for (int rank : present) {
    if (rank < next || rank >= world_size) continue;
    if (rank > next) missing.push_back({next, rank - 1});
    next = rank + 1;
  }
  if (next < world_size) missing.push_back({next, world_size - 1});
  return missing;
}

int64_t RankCount(const std::vector<RankRange>& ranges) {
  int64_t count = 0;
  for (const RankRange& range : ranges) count += int64_t{range.last} - range.first + 1;
  return count;
}

std::string FormatRanks(const std::vector<RankRange>& ranges) {
  std::string text;
  for (const RankRange& range : ranges) {
    if (!text.empty()) text += ", ";
    if (range.last - range.first >= 2) {
      text += fmt::format("{}-{}", range.first, range.last);
    } else {
      text += std::to_string(range.first);
      if (range.last != range.first) text += fmt::format(", {}", range.last);
    }
  }
  return text;
}

absl::StatusOr<RankReport> BuildRankReport(std::vector<RankData> ranks) {
  if (ranks.empty()) return absl::InvalidArgumentError("no rank to summarize");
  std::stable_sort(ranks.begin(), ranks.end(), [](const RankData& a, const RankData& b) {
    return a.identity.rank < b.identity.rank;
  });
  if (auto status = CheckOneJob(ranks); !status.ok()) return status;
  RankReport report;
  if (auto status = CheckWindows(ranks, &report.window_start_ns, &report.window_stop_ns);
      !status.ok()) {
    return status;
  }
  report.world_size = ranks.front().identity.world_size;
  int64_t base_ns = ranks.front().start_ns;
  for (const RankData& rank : ranks) {
    base_ns = std::min(base_ns, rank.start_ns);
    if (report.backend.empty()) report.backend = rank.identity.backend;
  }
  for (RankData& rank : ranks) {
    Rebase(SaturatingMul(SaturatingSub(rank.start_ns, base_ns), 1000), &rank);
  }
  std::vector<int> present;
  for (const RankData& rank : ranks) present.push_back(rank.identity.rank);
  report.missing = MissingRanks(report.world_size, present);
  for (const RankData& rank : ranks) {
    RankTotals totals;
    totals.rank = rank.identity.rank;
    totals.file = rank.file;
    report.ranks.push_back(std::move(totals));
  }
  std::vector<std::vector<int64_t>> step_wait;
  for (const RankData& rank : ranks) step_wait.emplace_back(rank.steps.size(), 0);
  AddCollectives(ranks, report.world_size, &report, &step_wait);

  for (size_t r = 0; r < ranks.size(); ++r) {
    const RankData& rank = ranks[r];
    // Each step's share of the unions in O(log n): steps can nest, and a
    // scan of each step's window is quadratic then.
    auto coverage = [](const SpanUnion& spans) {
      std::vector<Interval> intervals;
      intervals.reserve(spans.size());
      for (const Span& s : spans) intervals.push_back({s.start_ps, s.end_ps, 0});
      return Coverage(intervals, 1);
    };
    const Coverage compute = coverage(rank.compute), comm = coverage(rank.comm),
                   overlap = coverage(IntersectSpans(rank.compute, rank.comm));
    RankTotals& totals = report.ranks[r];
    for (size_t s = 0; s < rank.steps.size(); ++s) {
      const RankStep& step = rank.steps[s];
      RankStepRow row;
      row.rank = rank.identity.rank;
      row.step = step.number;
      row.name = step.name;
      row.start_ps = step.start_ps;
      row.duration_ps = SaturatingSub(step.end_ps, step.start_ps);
      row.compute_ps = compute.Busy(step.start_ps, step.end_ps);
      row.comm_ps = comm.Busy(step.start_ps, step.end_ps);
      row.overlap_ps = overlap.Busy(step.start_ps, step.end_ps);
      row.idle_ps =
          SaturatingSub(row.duration_ps,
                        SaturatingSub(SaturatingAdd(row.compute_ps, row.comm_ps), row.overlap_ps));
      row.waited_ps = step_wait[r][s];
      ++totals.steps;
      totals.step_ps = SaturatingAdd(totals.step_ps, row.duration_ps);
      totals.compute_ps = SaturatingAdd(totals.compute_ps, row.compute_ps);
      totals.comm_ps = SaturatingAdd(totals.comm_ps, row.comm_ps);
      totals.overlap_ps = SaturatingAdd(totals.overlap_ps, row.overlap_ps);
      totals.idle_ps = SaturatingAdd(totals.idle_ps, row.idle_ps);
      report.steps.push_back(std::move(row));
    }
  }
  std::stable_sort(report.steps.begin(), report.steps.end(),
                   [](const RankStepRow& a, const RankStepRow& b) {
                     return a.step != b.step ? a.step < b.step : a.rank < b.rank;
                   });
  int64_t most = 0;
  for (const RankTotals& totals : report.ranks) {
    if (totals.caused_ps > most) {
      most = totals.caused_ps;
      report.straggler = totals.rank;
    }
  }
  return report;
}

}  // namespace analysis
}  // namespace neuronprof
