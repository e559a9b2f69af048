// The multi-rank report as text and CSV.
#include "src/analysis/report/rank_sections.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "fmt/format.h"
#include "src/analysis/ranks/rank_report.h"
#include "src/analysis/report/rank_sections.h"
#include "src/analysis/text/terminal_text.h"
#include "src/analysis/text/text_table.h"
#include "src/xplane/saturating.h"

namespace neuronprof {
namespace analysis {
namespace {

std::string MeanMs(int64_t total_ps, int64_t count) {
  return count > 0 ? Ms(total_ps / count) : "-";
}

std::string Gbps(double value) { return value > 0 ? fmt::format("{:.2f}", value) : "-"; }

void AppendMissing(const RankReport& report, fmt::memory_buffer& out) {
  if (report.missing.empty()) return;
  std::vector<int> present;
  for (const RankTotals& r : report.ranks) present.push_back(r.rank);
  const bool one = RankCount(report.missing) == 1;
  fmt::format_to(std::back_inserter(out),
                 "MISSING: {} {} of world size {} {} no file in this run (a rank that died "
                 "or was not captured); the figures below are over rank{} {} only, and a "
                 "missing rank's late arrivals are not seen\n",
                 one ? "rank" : "ranks", FormatRanks(report.missing), report.world_size,
                 one ? "has" : "have", present.size() == 1 ? "" : "s",
                 absl::StrJoin(present, ", "));
}

void AppendStraggler(const RankReport& report, fmt::memory_buffer& out) {
  auto to = std::back_inserter(out);
  if (report.matched == 0) {
    fmt::format_to(to, "No collective was recorded by every rank: no straggler figures.\n");
  } else if (report.straggler < 0) {
    fmt::format_to(to, "No straggler: no rank waited for another in the {} collectives.\n",
                   report.matched);
  } else {
    const auto it = std::find_if(report.ranks.begin(), report.ranks.end(),
                                 [&](const RankTotals& r) { return r.rank == report.straggler; });
    fmt::format_to(to,
                   "Straggler: rank {}, last to arrive in {} of {} collectives; the other ranks "
                   "lost {} ms waiting for it ({} of all waiting in collectives, {} ms)\n",
                   report.straggler, it->last_arrivals, report.matched, Ms(it->caused_ps),
                   Percent(it->caused_ps, report.total_wait_ps), Ms(report.total_wait_ps));
  }
  if (report.unmatched > 0) {
    fmt::format_to(to,
                   "{} collective{} recorded by some ranks only (capture edges, a rank gone) "
                   "{} in the collectives table, not in the waiting figures\n",
                   report.unmatched, report.unmatched == 1 ? "" : "s",
                   report.unmatched == 1 ? "is" : "are");
  }
}

void AppendRanks(const RankReport& report, fmt::memory_buffer& out) {
  fmt::format_to(std::back_inserter(out),
                 "\nPer rank (step columns: mean per step, ms; waited and caused: total, ms)\n");
  TextTable table({"rank", "steps", "step time", "compute", "comm", "overlap", "idle/wait",
                   "waited", "last in", "caused", "file"},
                  {true, true, true, true, true, true, true, true, true, true, false});
  for (const RankTotals& r : report.ranks) {
    table.Add({std::to_string(r.rank), std::to_string(r.steps), MeanMs(r.step_ps, r.steps),
               MeanMs(r.compute_ps, r.steps), MeanMs(r.comm_ps, r.steps),
               MeanMs(r.overlap_ps, r.steps), MeanMs(r.idle_ps, r.steps), Ms(r.waited_ps),
               std::to_string(r.last_arrivals), Ms(r.caused_ps), r.file});
  }
  table.RenderTo(out);
}

// The steps whose slowest rank took longest, `top` rows at most, in order.
void AppendSteps(const RankReport& report, int top, fmt::memory_buffer& out) {
  if (report.steps.empty()) {
    fmt::format_to(std::back_inserter(out),
                   "\nNo steps (StepTrace) recorded: no per-step figures.\n");
    return;
  }
  struct StepRows {
    size_t first = 0, count = 0;
    int64_t longest = 0;
  };
  std::vector<StepRows> steps;
  for (size_t i = 0; i < report.steps.size(); ++i) {
    if (i == 0 || report.steps[i].step != report.steps[i - 1].step) steps.push_back({i, 0, 0});
    steps.back().count++;
    steps.back().longest = std::max(steps.back().longest, report.steps[i].duration_ps);
  }
  std::vector<size_t> shown(steps.size());
  for (size_t i = 0; i < shown.size(); ++i) shown[i] = i;
  const size_t per_step = std::max<size_t>(1, report.ranks.size());
  const size_t keep = top <= 0 ? steps.size() : std::max<size_t>(1, top / per_step);
  if (keep < steps.size()) {
    std::stable_sort(shown.begin(), shown.end(),
                     [&](size_t a, size_t b) { return steps[a].longest > steps[b].longest; });
    shown.resize(keep);
    std::sort(shown.begin(), shown.end());
  }
  fmt::format_to(std::back_inserter(out), "\nPer step and rank (ms){}\n",
                 shown.size() < steps.size()
                     ? fmt::format(": the {} longest of {} steps (--top N rows, --csv)",
                                   shown.size(), steps.size())
                     : "");
  TextTable table({"step", "rank", "time", "compute", "comm", "overlap", "idle/wait", "waited"},
                  {false, true, true, true, true, true, true, true});
  for (size_t index : shown) {
    for (size_t i = steps[index].first; i < steps[index].first + steps[index].count; ++i) {
      const RankStepRow& row = report.steps[i];
      table.Add({fmt::format("{} {}", row.name, row.step), std::to_string(row.rank),
                 Ms(row.duration_ps), Ms(row.compute_ps), Ms(row.comm_ps), Ms(row.overlap_ps),
                 Ms(row.idle_ps), Ms(row.waited_ps)});
    }
  }
  table.RenderTo(out);
}

void AppendCollectives(const RankReport& report, fmt::memory_buffer& out) {
  if (report.collectives.empty()) {
    fmt::format_to(std::back_inserter(out), "\nNo collectives recorded.\n");
    return;
  }
  fmt::format_to(std::back_inserter(out),
                 "\nCollectives (time: a call's mean span over the ranks; bandwidth: "
                 "nccl-tests' algbw and busbw over that time, GB/s)\n");
  TextTable table(
      {"op", "bytes/call", "calls", "total ms", "mean ms", "waiting ms", "algbw", "busbw"},
      {false, true, true, true, true, true, true, true});
  for (const CollectiveRow& row : report.collectives) {
    table.Add({row.op, Bytes(row.bytes_per_call), std::to_string(row.calls), Ms(row.total_ps),
               MeanMs(row.total_ps, row.calls), Ms(row.wait_ps), Gbps(row.algbw_gbps),
               Gbps(row.busbw_gbps)});
  }
  table.RenderTo(out);
}

}  // namespace

std::string FormatRankReportText(const RankReport& report, int top) {
  fmt::memory_buffer out;
  auto to = std::back_inserter(out);
  fmt::format_to(
      to, "Distributed job: {} of world size {}{}\n",
      report.ranks.size() == 1 ? "1 rank" : fmt::format("{} ranks", report.ranks.size()),
      report.world_size,
      report.backend.empty() ? "" : fmt::format(", backend {}", TerminalText(report.backend)));
  AppendMissing(report, out);
  fmt::format_to(
      to, "Every rank captured for {} ms together\n\n",
      Ms(SaturatingMul(SaturatingSub(report.window_stop_ns, report.window_start_ns), 1000)));
  AppendStraggler(report, out);
  AppendRanks(report, out);
  AppendSteps(report, top, out);
  AppendCollectives(report, out);
  return fmt::to_string(out);
}

std::string FormatRankStepsCsv(const RankReport& report) {
  fmt::memory_buffer out;
  auto to = std::back_inserter(out);
  fmt::format_to(to,
                 "rank,step,name,start_us,step_us,compute_us,comm_us,overlap_us,idle_us,"
                 "waited_us\n");
  for (const RankStepRow& row : report.steps) {
    fmt::format_to(to, "{},{},{},{},{},{},{},{},{},{}\n", row.rank, row.step, CsvField(row.name),
                   Us(row.start_ps), Us(row.duration_ps), Us(row.compute_ps), Us(row.comm_ps),
                   Us(row.overlap_ps), Us(row.idle_ps), Us(row.waited_ps));
  }
  return fmt::to_string(out);
}

std::string FormatCollectivesCsv(const RankReport& report) {
  fmt::memory_buffer out;
  auto to = std::back_inserter(out);
  fmt::format_to(to,
                 "op,collective,calls,bytes_per_call,total_us,mean_us,waiting_us,"
                 "algbw_gbps,busbw_gbps\n");
  for (const CollectiveRow& row : report.collectives) {
    fmt::format_to(to, "{},{},{},{},{},{},{},{:.3f},{:.3f}\n", CsvField(row.op),
                   CsvField(row.collective), row.calls, row.bytes_per_call, Us(row.total_ps),
                   Us(row.calls > 0 ? row.total_ps / row.calls : 0), Us(row.wait_ps),
                   row.algbw_gbps, row.busbw_gbps);
  }
  return fmt::to_string(out);
}

}  // namespace analysis
}  // namespace neuronprof
