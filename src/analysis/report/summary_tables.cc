#include "src/analysis/report/summary_tables.h"

#include "fmt/format.h"
#include "src/analysis/report/device_sections.h"
#include "src/analysis/report/marker_sections.h"
#include "src/analysis/report/summary_sections.h"

namespace neuronprof {
namespace analysis {
namespace {

ReportTable TimeShareTable(const OpTable& table) {
  ReportTable out{"time_share", {"op", "calls", "self_us", "percent"}, {}};
  for (const OpShare& share : table.shares) {
    out.rows.push_back({Cell::Text(share.op), Cell::Int(share.calls), Cell::Micros(share.self_ps),
                        Cell::Number(share.percent, 6)});
  }
  return out;
}

// One row per step; device kinds as device_<kind>_us columns.
ReportTable StepsTable(const std::vector<StepBreakdown>& steps) {
  ReportTable out{"steps",
                  {"step", "start_us", "duration_us", "forward_us", "loss_us", "backward_us",
                   "optimizer_us", "other_ops_us", "markers_us", "idle_us", "device_busy_us"},
                  {}};
  std::vector<std::string> kinds;
  if (!steps.empty()) {
    for (const auto& [kind, ps] : steps.front().device_kind_ps) {
      kinds.push_back(kind);
      out.columns.push_back(fmt::format("device_{}_us", kind));
    }
  }
  for (const StepBreakdown& s : steps) {
    std::vector<Cell> row = {Cell::Text(s.name),
                             Cell::Micros(s.start_ps),
                             Cell::Micros(s.duration_ps),
                             Cell::Micros(s.forward_ps),
                             Cell::Micros(s.loss_ps),
                             Cell::Micros(s.backward_ps),
                             Cell::Micros(s.optimizer_ps),
                             Cell::Micros(s.other_ops_ps),
                             Cell::Micros(s.markers_ps),
                             Cell::Micros(s.idle_ps),
                             s.has_device ? Cell::Micros(s.device_busy_ps) : Cell::Empty()};
    for (const std::string& kind : kinds) {
      auto it = s.device_kind_ps.find(kind);
      row.push_back(it == s.device_kind_ps.end() ? Cell::Micros(0) : Cell::Micros(it->second));
    }
    out.rows.push_back(std::move(row));
  }
  return out;
}

ReportTable RecommendationsTable(const std::vector<Recommendation>& recommendations) {
  ReportTable out{"recommendations", {"id", "advice", "evidence"}, {}};
  for (const Recommendation& r : recommendations) {
    out.rows.push_back({Cell::Text(r.id), Cell::Text(r.advice), Cell::Text(r.evidence)});
  }
  return out;
}

}  // namespace

std::vector<ReportTable> SummaryTables(const Summary& summary) {
  std::vector<ReportTable> tables;
  tables.push_back(OpReportTable(summary.table));
  tables.push_back(TimeShareTable(summary.table));
  tables.push_back(StepsTable(summary.steps));
  tables.push_back(SpanStatsTable("step_stats", summary.markers.steps, false));
  tables.push_back(TailTable(summary.tails));
  tables.push_back(SpanStatsTable("markers", summary.markers.markers, true));
  tables.push_back(SpanStatsTable("async_spans", summary.markers.async_spans, false));
  tables.push_back(CounterTable(summary.serving.counters));
  tables.push_back(InstantTable(summary.serving.instants));
  tables.push_back(MemoryReportTable(summary.memory));
  tables.push_back(KernelReportTable(summary.kernels));
  tables.push_back(RecommendationsTable(summary.recommendations));
  return tables;
}

std::vector<std::string> SummaryTableNames() {
  return {"operators",   "time_share", "steps",    "step_stats", "tails",   "markers",
          "async_spans", "counters",   "instants", "memory",     "kernels", "recommendations"};
}

}  // namespace analysis
}  // namespace neuronprof
