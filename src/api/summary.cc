// neuronprof::SummarizeMarkers (public summary.h): the run's XSpace read
// back and summarised by the same code as `neuronprof summary`.
#include "neuronprof/summary.h"

#include <cmath>

#include "absl/strings/match.h"
#include "src/analysis/markers/flow_tails.h"
#include "src/analysis/markers/marker_stats.h"
#include "src/analysis/markers/serving_stats.h"
#include "src/analysis/markers/tail_report.h"
#include "src/analysis/timeline/selection.h"
#include "src/export/logdir.h"
#include "src/export/xspace_file.h"

namespace neuronprof {
namespace {

int64_t Ns(int64_t ps) { return ps / 1000; }
double Ns(double ps) { return ps / 1000; }

analysis::GroupBy GroupByOf(MarkerSummaryOptions::GroupBy group_by) {
  switch (group_by) {
    case MarkerSummaryOptions::GroupBy::kThread:
      return analysis::GroupBy::kThread;
    case MarkerSummaryOptions::GroupBy::kThreadGroup:
      return analysis::GroupBy::kThreadGroup;
    case MarkerSummaryOptions::GroupBy::kName:
      break;
  }
  return analysis::GroupBy::kName;
}

std::vector<MarkerStatsRow> Rows(const std::vector<analysis::SpanStats>& stats) {
  std::vector<MarkerStatsRow> rows;
  rows.reserve(stats.size());
  for (const analysis::SpanStats& s : stats) {
    const analysis::Distribution& d = s.duration;
    rows.push_back({s.name, s.source, s.thread,
                    DurationStats{d.count, Ns(d.total_ps), Ns(s.self_ps), Ns(d.mean_ps),
                                  Ns(d.p50_ps), Ns(d.p90_ps), Ns(d.p99_ps), Ns(d.max_ps)},
                    Ns(s.device_ps), s.device_events, s.device_flops});
  }
  return rows;
}

TailExplanation Tail(const analysis::TailReport& report) {
  TailExplanation tail{report.kind,
                       report.name,
                       report.instances,
                       Ns(report.p50_ps),
                       Ns(report.p99_ps),
                       Ns(report.max_ps),
                       report.slowest,
                       Ns(report.gap_ps()),
                       report.has_tail,
                       {},
                       analysis::TailSentence(report)};
  for (const analysis::TailLine& line : report.lines) {
    tail.parts.push_back({line.part, Ns(line.excess_ps)});
  }
  return tail;
}

}  // namespace

absl::StatusOr<MarkerSummary> SummarizeMarkers(const ProfileResult& result,
                                               const MarkerSummaryOptions& options) {
  if (options.steps && options.window_ms) {
    return absl::InvalidArgumentError("select steps or a window, not both");
  }
  const std::string* file = nullptr;
  for (const std::string& path : result.files) {
    if (absl::EndsWith(path, exporter::kXPlaneSuffix)) file = &path;
  }
  if (file == nullptr) {
    return absl::NotFoundError("the result lists no .xplane.pb file (was the run written?)");
  }
  auto space = exporter::ReadXSpaceFile(*file);
  if (!space.ok()) return space.status();
  analysis::Selection selection;
  selection.steps = options.steps;
  selection.window_ms = options.window_ms;
  if (!selection.empty()) {
    auto selected = analysis::Select(*space, selection);
    if (!selected.ok()) return selected.status();
    *space = std::move(selected->space);
  }
  const analysis::HostSpans spans = analysis::CollectHostSpans(*space);
  const analysis::DeviceEvents device =
      analysis::CollectDeviceEvents(*space, analysis::CollectOperatorEvents(*space), &spans);
  const analysis::MarkerStats stats =
      analysis::BuildMarkerStats(spans, GroupByOf(options.group_by), &device);
  MarkerSummary summary;
  summary.markers = Rows(stats.markers);
  summary.steps = Rows(stats.steps);
  summary.async_spans = Rows(stats.async_spans);
  for (const analysis::TailReport& report : analysis::BuildTails(*space, spans, &device)) {
    summary.tails.push_back(Tail(report));
  }
  const analysis::ServingEvents serving = analysis::BuildServingEvents(*space);
  for (const analysis::CounterStats& c : serving.counters) {
    summary.counters.push_back(
        {c.name, c.samples, c.min, c.mean, c.max, c.last, c.time_weighted_mean});
  }
  for (const analysis::InstantCount& i : serving.instants) {
    summary.instants.push_back({i.name, i.count});
  }
  return summary;
}

}  // namespace neuronprof
