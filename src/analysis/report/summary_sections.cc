#include "src/analysis/report/summary_sections.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <map>

#include "absl/strings/str_replace.h"
#include "fmt/format.h"
#include "fmt/ranges.h"
#include "src/analysis/markers/flow_tails.h"
#include "src/analysis/report/device_sections.h"
#include "src/analysis/report/marker_sections.h"
#include "src/analysis/text/terminal_text.h"
#include "src/analysis/text/text_table.h"
#include "src/xplane/saturating.h"
#include "src/xplane/schema.h"
#include "src/xplane/xplane_visitor.h"

namespace neuronprof {
namespace analysis {
namespace {

// "-": every call unknown; "^": counted in the ops it calls; a trailing
// "?": some calls unknown.
std::string CostCell(const OpTableRow& row, int64_t value) {
  if (row.unknown_calls == row.calls) return "-";
  if (row.own_calls == 0 && row.unknown_calls == 0) return "^";
  return fmt::format("{}{}", Si(static_cast<double>(value)), row.unknown_calls > 0 ? "?" : "");
}

void AppendOpTable(const OpTable& table, size_t top, fmt::memory_buffer& out) {
  if (table.rows.empty()) return;  // Named in the "Not in this capture" line.
  auto to = std::back_inserter(out);
  fmt::format_to(to,
                 "Operators: {} calls, {} distinct (layer, direction, op, params); FLOPs {}, "
                 "bytes {} (self costs, no double counting)\n",
                 table.calls, table.rows.size(), Si(table.total_flops), Si(table.total_bytes));
  if (table.unknown_calls > 0) {
    fmt::format_to(to,
                   "  {} calls have an unknown cost (no formula, or shapes not recorded): "
                   "'-' in the table, not counted in the totals\n",
                   table.unknown_calls);
  }
  if (table.malformed_inputs > 0) {
    fmt::format_to(to,
                   "  warning: {} operator events had malformed input stats (costed as "
                   "unknown); first: {}\n",
                   table.malformed_inputs, TerminalText(table.first_input_error));
  }
  std::vector<std::string> header = {"Layer",     "Direction", "Op",    "Params", "Calls",
                                     "Total(us)", "Self(us)",  "FLOPs", "Bytes",  "FLOP/s"};
  // Device columns only when some op launched device work.
  const bool device = table.total_device_ps > 0;
  if (device) header.insert(header.end(), {"Device(us)", "Kernels", "Dev FLOP/s"});
  std::vector<bool> right(header.size(), true);
  std::fill(right.begin(), right.begin() + 4, false);
  TextTable text(header, right);
  const size_t shown = std::min(top, table.rows.size());
  for (size_t i = 0; i < shown; ++i) {
    const OpTableRow& row = table.rows[i];
    const double rate = row.FlopsPerSecond();
    std::vector<std::string> cells = {row.layer.empty() ? "-" : row.layer,
                                      row.direction.empty() ? "-" : row.direction,
                                      row.op,
                                      row.params.empty() ? "-" : Shorten(row.params, 60),
                                      fmt::format("{}", row.calls),
                                      Us(row.total_ps),
                                      Us(row.self_ps),
                                      CostCell(row, row.flops),
                                      CostCell(row, row.bytes),
                                      rate > 0 ? Si(rate) : "-"};
    if (device) {
      const double device_rate = row.DeviceFlopsPerSecond();
      cells.insert(cells.end(),
                   {row.device_ps > 0 ? Us(row.device_ps) : "-", fmt::format("{}", row.kernels),
                    device_rate > 0 ? Si(device_rate) : "-"});
    }
    text.Add(std::move(cells));
  }
  text.RenderTo(out);
  if (shown < table.rows.size()) {
    fmt::format_to(to, "  ... {} more rows (--top N, --csv)\n", table.rows.size() - shown);
  }
  fmt::format_to(to,
                 "  FLOPs/Bytes: self cost; ^ = counted in the ops it calls, - = unknown, "
                 "? = some calls unknown. FLOP/s = FLOPs / total time.{}\n",
                 device ? " Device: time of the device work the op launched itself; Dev FLOP/s "
                          "= FLOPs / device time."
                        : "");
}

void AppendShares(const OpTable& table, size_t top, fmt::memory_buffer& out) {
  if (table.shares.empty()) return;
  fmt::format_to(std::back_inserter(out),
                 "\nTime share by framework op (self time of all operators: {} ms)\n",
                 Ms(table.total_self_ps));
  TextTable text({"Op", "Calls", "Self(ms)", "Time %", ""}, {false, true, true, true, false});
  const size_t shown = std::min(top, table.shares.size());
  int64_t rest_ps = 0, rest_calls = 0;
  for (size_t i = shown; i < table.shares.size(); ++i) {
    rest_ps = SaturatingAdd(rest_ps, table.shares[i].self_ps);
    rest_calls += table.shares[i].calls;
  }
  for (size_t i = 0; i < shown; ++i) {
    const OpShare& s = table.shares[i];
    text.Add({s.op, fmt::format("{}", s.calls), Ms(s.self_ps), fmt::format("{:.1f}%", s.percent),
              std::string(static_cast<size_t>(std::lround(s.percent / 2.5)), '#')});
  }
  if (shown < table.shares.size()) {
    text.Add({fmt::format("({} other ops)", table.shares.size() - shown),
              fmt::format("{}", rest_calls), Ms(rest_ps), Percent(rest_ps, table.total_self_ps),
              ""});
  }
  text.RenderTo(out);
}

void AppendSteps(const std::vector<StepBreakdown>& steps, size_t top, fmt::memory_buffer& out) {
  if (steps.empty()) return;  // Named in the "Not in this capture" line.
  auto to = std::back_inserter(out);
  fmt::format_to(to, "\nSteps: {}\n", steps.size());
  const bool device = steps.front().has_device;
  // An operator column only when some step has time in it: an inference
  // run has no Backward, a capture without operators none of them.
  struct OpColumn {
    const char* title;
    const char* legend;
    int64_t StepBreakdown::*ps;
  };
  static constexpr OpColumn kOpColumns[] = {
      {"Forward", "forward", &StepBreakdown::forward_ps},
      {"Loss", "loss", &StepBreakdown::loss_ps},
      {"Backward", "backward", &StepBreakdown::backward_ps},
      {"Optimizer", "optimizer", &StepBreakdown::optimizer_ps},
      {"Other ops", "other ops (no direction)", &StepBreakdown::other_ops_ps}};
  // Which one an instant counts in, first to last (the legend's order).
  static constexpr size_t kPrecedence[] = {2, 3, 1, 0, 4};
  std::vector<const OpColumn*> op_columns;
  std::vector<std::string> header = {"Step", "Time(ms)"};
  for (const OpColumn& column : kOpColumns) {
    if (std::any_of(steps.begin(), steps.end(),
                    [&](const StepBreakdown& s) { return s.*column.ps > 0; })) {
      op_columns.push_back(&column);
      header.push_back(column.title);
    }
  }
  header.insert(header.end(), {"Markers", "Idle"});
  std::vector<std::string> kinds;
  if (device) {
    header.push_back("Device busy");
    for (const auto& [kind, ps] : steps.front().device_kind_ps) {
      kinds.push_back(kind);
      header.push_back(kind);
    }
    header.push_back("Launched(ms)");
  }
  TextTable text(header, std::vector<bool>(header.size(), true));
  StepBreakdown sum;
  sum.name = "all steps";
  auto add = [&](const StepBreakdown& s) {
    std::vector<std::string> row = {s.name, Ms(s.duration_ps)};
    for (const OpColumn* column : op_columns) {
      row.push_back(Percent(s.*column->ps, s.duration_ps));
    }
    row.insert(row.end(),
               {Percent(s.markers_ps, s.duration_ps), Percent(s.idle_ps, s.duration_ps)});
    if (device) {
      row.push_back(Percent(s.device_busy_ps, s.duration_ps));
      for (const std::string& kind : kinds) {
        auto it = s.device_kind_ps.find(kind);
        row.push_back(Percent(it == s.device_kind_ps.end() ? 0 : it->second, s.duration_ps));
      }
      row.push_back(Ms(s.launched_device_ps));
    }
    text.Add(std::move(row));
  };
  // Beyond `top` steps, the longest ones are shown (in start order): the
  // outliers are what a long run's reader looks for.
  std::vector<size_t> shown(steps.size());
  for (size_t i = 0; i < shown.size(); ++i) shown[i] = i;
  if (shown.size() > top) {
    std::stable_sort(shown.begin(), shown.end(), [&](size_t a, size_t b) {
      return steps[a].duration_ps > steps[b].duration_ps;
    });
    shown.resize(top);
    std::sort(shown.begin(), shown.end());
  }
  for (size_t i : shown) add(steps[i]);
  for (const StepBreakdown& s : steps) {
    sum.duration_ps = SaturatingAdd(sum.duration_ps, s.duration_ps);
    for (const OpColumn& column : kOpColumns) {
      sum.*column.ps = SaturatingAdd(sum.*column.ps, s.*column.ps);
    }
    sum.markers_ps = SaturatingAdd(sum.markers_ps, s.markers_ps);
    sum.idle_ps = SaturatingAdd(sum.idle_ps, s.idle_ps);
    sum.device_busy_ps = SaturatingAdd(sum.device_busy_ps, s.device_busy_ps);
    sum.launched_device_ps = SaturatingAdd(sum.launched_device_ps, s.launched_device_ps);
    for (const auto& [kind, ps] : s.device_kind_ps) {
      sum.device_kind_ps[kind] = SaturatingAdd(sum.device_kind_ps[kind], ps);
    }
  }
  add(sum);
  text.RenderTo(out);
  if (shown.size() < steps.size()) {
    fmt::format_to(to,
                   "  {} longest of {} steps shown (--top 0 shows all); 'all steps' covers "
                   "every step\n",
                   shown.size(), steps.size());
  }
  std::string precedence;
  for (size_t i : kPrecedence) {
    if (std::find(op_columns.begin(), op_columns.end(), &kOpColumns[i]) != op_columns.end()) {
      precedence += std::string(kOpColumns[i].legend) + " > ";
    }
  }
  fmt::format_to(to, "  % of step time; each instant counted once: {}markers only > idle{}\n",
                 precedence,
                 device ? "; device columns: any device event in the step's window; Launched: "
                          "device time of the work launched inside the step, on its thread"
                        : "");
}

std::string SignedBytes(int64_t bytes) { return (bytes > 0 ? "+" : "") + Bytes(bytes); }

// An allocator that ends every one of at least two steps holding more than
// it started with: what a leak looks like.
void AppendLeakVerdict(const AllocatorMemory& memory, fmt::memory_buffer& out) {
  if (memory.steps.size() < 2) return;
  int64_t growth = 0;
  for (const StepMemory& step : memory.steps) {
    if (step.growth_bytes <= 0) return;
    growth = SaturatingAdd(growth, step.growth_bytes);
  }
  fmt::format_to(std::back_inserter(out),
                 "  LEAK? {} grew in every step ({} per step on average, {} over {} steps)",
                 TerminalText(memory.allocator),
                 SignedBytes(growth / static_cast<int64_t>(memory.steps.size())),
                 SignedBytes(growth), memory.steps.size());
  // The suspect: the op holding blocks from the most steps, then the most bytes.
  const OpMemory* suspect = nullptr;
  for (const OpMemory& op : memory.by_op) {
    if (op.steps_holding == 0) continue;
    if (suspect == nullptr || op.steps_holding > suspect->steps_holding ||
        (op.steps_holding == suspect->steps_holding && op.net_bytes() > suspect->net_bytes())) {
      suspect = &op;
    }
  }
  if (suspect != nullptr) {
    fmt::format_to(std::back_inserter(out), "; {} holds blocks it allocated in {} of {} steps ({})",
                   TerminalText(suspect->op), suspect->steps_holding, memory.steps.size(),
                   Bytes(suspect->net_bytes()));
  }
  fmt::format_to(std::back_inserter(out), "\n");
}

void AppendMemory(const MemoryReport& report, size_t top, fmt::memory_buffer& out) {
  auto to = std::back_inserter(out);
  for (const AllocatorMemory& memory : report.allocators) {
    fmt::format_to(to, "\nMemory of {}: peak {} allocated", TerminalText(memory.allocator),
                   Bytes(memory.peak_allocated_bytes));
    if (memory.peak_reserved_bytes > 0) {
      fmt::format_to(to, " ({} reserved at most)", Bytes(memory.peak_reserved_bytes));
    }
    fmt::format_to(to, " at {} ms, in {}\n", Ms(memory.peak_time_ps), TerminalText(memory.peak_op));
    fmt::format_to(to, "  {} allocations, {} frees; {} before the first, {} after the last ({})\n",
                   memory.allocations, memory.frees, Bytes(memory.start_bytes),
                   Bytes(memory.end_bytes), SignedBytes(memory.end_bytes - memory.start_bytes));
    if (memory.anomalies > 0) {
      fmt::format_to(to, "  warning: {} ill-formed memory reports; first: {}\n", memory.anomalies,
                     TerminalText(memory.first_anomaly));
    }
    AppendLeakVerdict(memory, out);
    TextTable ops({"Allocating op", "Allocs", "Allocated", "Freed", "Still held", "Calls"},
                  {false, true, true, true, true, true});
    const size_t shown = std::min(top, memory.by_op.size());
    for (size_t i = 0; i < shown; ++i) {
      const OpMemory& op = memory.by_op[i];
      ops.Add({op.op, fmt::format("{}", op.allocations), Bytes(op.allocated_bytes),
               Bytes(op.freed_bytes), Bytes(op.net_bytes()), fmt::format("{}", op.calls)});
    }
    ops.RenderTo(out);
    if (shown < memory.by_op.size()) {
      fmt::format_to(to, "  ... {} more rows (--top N, --memory_csv)\n",
                     memory.by_op.size() - shown);
    }
    if (memory.steps.empty()) continue;
    TextTable steps({"Step", "Peak", "Growth"}, {false, true, true});
    for (const StepMemory& step : memory.steps) {
      steps.Add({step.step, Bytes(step.peak_bytes), SignedBytes(step.growth_bytes)});
    }
    steps.RenderTo(out);
  }
  if (!report.allocators.empty()) {
    fmt::format_to(to,
                   "  Still held: bytes an op allocated that were not freed before the capture "
                   "ended; Growth: allocated at the step's end minus at its start\n");
  }
}

}  // namespace

// The tables this capture cannot have, each with why and what records it:
// one line instead of empty sections.
void AppendAbsentTables(const Summary& summary, fmt::memory_buffer& out) {
  std::vector<std::string> absent;
  if (summary.table.rows.empty()) {
    absent.push_back(
        "operator table (no operator events: capture with ProfilerOptions::profile_type = "
        "ProfileType::kOperator and neuronprof::EnableTorchOperators())");
  }
  if (summary.steps.empty()) {
    absent.push_back(
        "step breakdown (no StepTrace events: mark each step with "
        "neuronprof::StepTrace)");
  }
  if (summary.memory.empty()) {
    absent.push_back(
        "memory (no allocation events: libtorch's allocator or a device "
        "plug-in's memory reports)");
  }
  if (summary.device.planes.empty()) {
    absent.push_back(
        "kernels (no device planes: a device plug-in or CUPTI, "
        "device_tracer_level >= 1)");
  }
  if (absent.empty()) return;
  // Sections after the op table open with their own blank line.
  fmt::format_to(std::back_inserter(out), "Not in this capture: {}\n{}", fmt::join(absent, "; "),
                 summary.table.rows.empty() ? "" : "\n");
}

std::string FormatSummaryText(const Summary& summary, int top) {
  const size_t limit = top <= 0 ? SIZE_MAX : static_cast<size_t>(top);
  fmt::memory_buffer out;
  for (const std::string& warning : summary.capture_warnings) {
    fmt::format_to(std::back_inserter(out), "warning: {}\n", TerminalText(warning));
  }
  if (!summary.capture_warnings.empty()) fmt::format_to(std::back_inserter(out), "\n");
  if (summary.clamped_events > 0) {
    fmt::format_to(std::back_inserter(out),
                   "warning: {} events have times beyond the int64 picosecond range (a corrupt "
                   "or crafted file); their times were clamped\n",
                   summary.clamped_events);
  }
  AppendAbsentTables(summary, out);
  AppendOpTable(summary.table, limit, out);
  AppendShares(summary.table, limit, out);
  fmt::format_to(std::back_inserter(out), "{}", FormatStackTree(summary.stacks, limit));
  AppendSteps(summary.steps, limit, out);
  AppendStepStats(summary.markers.steps, limit, out);
  AppendTails(summary.tails, limit, out);
  AppendMarkerStats(summary.markers.markers, limit, out);
  AppendAsyncStats(summary.markers.async_spans, limit, out);
  AppendCounters(summary.serving.counters, limit, out);
  AppendInstants(summary.serving.instants, limit, out);
  AppendMemory(summary.memory, limit, out);
  AppendKernelTable(summary.kernels, summary.device, limit, out);
  AppendRoofline(summary.roofline, summary.table, summary.peaks, limit, out);
  AppendRecommendations(summary.recommendations, out);
  return fmt::to_string(out);
}

ReportTable OpReportTable(const OpTable& table) {
  ReportTable out{
      "operators",
      {"layer", "direction", "op", "params", "calls", "total_us", "self_us", "flops", "bytes",
       "flops_per_s", "cost", "unknown_calls", "device_us", "kernels", "device_flops_per_s"},
      {}};
  for (const OpTableRow& row : table.rows) {
    const bool all_unknown = row.unknown_calls == row.calls;
    const char* cost = all_unknown                                    ? "unknown"
                       : row.own_calls == 0 && row.unknown_calls == 0 ? "in_children"
                       : row.unknown_calls > 0                        ? "partial"
                                                                      : "own";
    // Unknown costs are empty cells, never 0.
    auto known = [&](int64_t value) { return all_unknown ? Cell::Empty() : Cell::Int(value); };
    auto rate = [](double value) { return value > 0 ? Cell::Number(value, 6) : Cell::Empty(); };
    out.rows.push_back({Cell::Text(row.layer), Cell::Text(row.direction), Cell::Text(row.op),
                        Cell::Text(row.params), Cell::Int(row.calls), Cell::Micros(row.total_ps),
                        Cell::Micros(row.self_ps), known(row.flops), known(row.bytes),
                        rate(row.FlopsPerSecond()), Cell::Text(cost), Cell::Int(row.unknown_calls),
                        Cell::Micros(row.device_ps), Cell::Int(row.kernels),
                        rate(row.DeviceFlopsPerSecond())});
  }
  return out;
}

std::string FormatOpTableCsv(const OpTable& table) { return FormatCsv(OpReportTable(table)); }

ReportTable MemoryReportTable(const MemoryReport& memory) {
  ReportTable out{
      "memory",
      {"allocator", "op", "allocations", "allocated_bytes", "freed_bytes", "held_bytes", "calls"},
      {}};
  for (const AllocatorMemory& allocator : memory.allocators) {
    for (const OpMemory& op : allocator.by_op) {
      out.rows.push_back({Cell::Text(allocator.allocator), Cell::Text(op.op),
                          Cell::Int(op.allocations), Cell::Int(op.allocated_bytes),
                          Cell::Int(op.freed_bytes), Cell::Int(op.net_bytes()),
                          Cell::Int(op.calls)});
    }
  }
  return out;
}

std::string FormatMemoryCsv(const MemoryReport& memory) {
  return FormatCsv(MemoryReportTable(memory));
}

}  // namespace analysis
}  // namespace neuronprof
