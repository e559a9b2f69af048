#include "src/analysis/summary_report.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "src/analysis/saturating.h"

namespace neuronprof {
namespace analysis {
namespace {

std::string Us(int64_t ps) { return absl::StrFormat("%.3f", ps / 1e6); }
std::string Ms(int64_t ps) { return absl::StrFormat("%.3f", ps / 1e9); }

// 1234567 -> "1.23M".
std::string Si(double value) {
  static const char* const kUnits[] = {"", "K", "M", "G", "T", "P", "E"};
  int unit = 0;
  while (std::fabs(value) >= 1000 && unit < 6) {
    value /= 1000;
    ++unit;
  }
  return unit == 0 ? absl::StrFormat("%.0f", value) : absl::StrFormat("%.2f%s", value, kUnits[unit]);
}

// "-": every call unknown; "^": counted in the ops it calls; a trailing
// "?": some calls unknown.
std::string CostCell(const OpTableRow& row, int64_t value) {
  if (row.unknown_calls == row.calls) return "-";
  if (row.own_calls == 0 && row.unknown_calls == 0) return "^";
  return absl::StrCat(Si(static_cast<double>(value)), row.unknown_calls > 0 ? "?" : "");
}

std::string Shorten(const std::string& text, size_t width) {
  if (text.size() <= width) return text;
  return text.substr(0, width - 3) + "...";
}

// Left-aligned text columns, right-aligned numbers.
class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header, std::vector<bool> right)
      : right_(std::move(right)) {
    rows_.push_back(std::move(header));
  }
  void Add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  std::string Render() const {
    std::vector<size_t> width(right_.size(), 0);
    for (const auto& row : rows_) {
      for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
    }
    std::string out;
    for (const auto& row : rows_) {
      std::string line = " ";
      for (size_t i = 0; i < row.size(); ++i) {
        const std::string pad(width[i] - row[i].size(), ' ');
        absl::StrAppend(&line, " ", right_[i] ? pad + row[i] : row[i] + pad);
      }
      while (!line.empty() && line.back() == ' ') line.pop_back();
      absl::StrAppend(&out, line, "\n");
    }
    return out;
  }

 private:
  std::vector<bool> right_;
  std::vector<std::vector<std::string>> rows_;
};

std::string CsvField(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  return absl::StrCat("\"", absl::StrReplaceAll(text, {{"\"", "\"\""}}), "\"");
}

std::string Percent(int64_t part, int64_t whole) {
  return whole > 0 ? absl::StrFormat("%.1f%%", 100.0 * part / whole) : "-";
}

void AppendOpTable(const OpTable& table, size_t top, std::string* out) {
  absl::StrAppend(out, "Operators: ", table.calls, " calls, ", table.rows.size(),
                  " distinct (layer, direction, op, params); FLOPs ", Si(table.total_flops),
                  ", bytes ", Si(table.total_bytes), " (self costs, no double counting)\n");
  if (table.unknown_calls > 0) {
    absl::StrAppend(out, "  ", table.unknown_calls,
                    " calls have an unknown cost (no formula, or shapes not recorded): "
                    "'-' in the table, not counted in the totals\n");
  }
  if (table.malformed_inputs > 0) {
    absl::StrAppend(out, "  warning: ", table.malformed_inputs,
                    " operator events had malformed input stats (costed as unknown); first: ",
                    table.first_input_error, "\n");
  }
  if (table.rows.empty()) {
    absl::StrAppend(out, "  (no operator events: capture with profile_type = kOperator)\n");
    return;
  }
  TextTable text({"Layer", "Direction", "Op", "Params", "Calls", "Total(us)", "Self(us)",
                  "FLOPs", "Bytes", "FLOP/s"},
                 {false, false, false, false, true, true, true, true, true, true});
  const size_t shown = std::min(top, table.rows.size());
  for (size_t i = 0; i < shown; ++i) {
    const OpTableRow& row = table.rows[i];
    const double rate = row.FlopsPerSecond();
    text.Add({row.layer.empty() ? "-" : row.layer, row.direction.empty() ? "-" : row.direction,
              row.op, row.params.empty() ? "-" : Shorten(row.params, 60),
              absl::StrCat(row.calls), Us(row.total_ps), Us(row.self_ps),
              CostCell(row, row.flops), CostCell(row, row.bytes),
              rate > 0 ? Si(rate) : "-"});
  }
  absl::StrAppend(out, text.Render());
  if (shown < table.rows.size()) {
    absl::StrAppend(out, "  ... ", table.rows.size() - shown, " more rows (--top N, --csv)\n");
  }
  absl::StrAppend(out,
                  "  FLOPs/Bytes: self cost; ^ = counted in the ops it calls, - = unknown, "
                  "? = some calls unknown. FLOP/s = FLOPs / total time.\n");
}

void AppendShares(const OpTable& table, size_t top, std::string* out) {
  if (table.shares.empty()) return;
  absl::StrAppend(out, "\nTime share by framework op (self time of all operators: ",
                  Ms(table.total_self_ps), " ms)\n");
  TextTable text({"Op", "Calls", "Self(ms)", "Time %", ""},
                 {false, true, true, true, false});
  const size_t shown = std::min(top, table.shares.size());
  int64_t rest_ps = 0, rest_calls = 0;
  for (size_t i = shown; i < table.shares.size(); ++i) {
    rest_ps = SaturatingAdd(rest_ps, table.shares[i].self_ps);
    rest_calls += table.shares[i].calls;
  }
  for (size_t i = 0; i < shown; ++i) {
    const OpShare& s = table.shares[i];
    text.Add({s.op, absl::StrCat(s.calls), Ms(s.self_ps), absl::StrFormat("%.1f%%", s.percent),
              std::string(static_cast<size_t>(std::lround(s.percent / 2.5)), '#')});
  }
  if (shown < table.shares.size()) {
    text.Add({absl::StrCat("(", table.shares.size() - shown, " other ops)"),
              absl::StrCat(rest_calls), Ms(rest_ps), Percent(rest_ps, table.total_self_ps), ""});
  }
  absl::StrAppend(out, text.Render());
}

void AppendSteps(const std::vector<StepBreakdown>& steps, size_t top, std::string* out) {
  absl::StrAppend(out, "\nSteps: ", steps.size(), steps.empty() ? " (no StepTrace events)\n" : "\n");
  if (steps.empty()) return;
  const bool device = steps.front().has_device;
  std::vector<std::string> header = {"Step", "Time(ms)", "Forward", "Backward", "Other ops",
                                     "Markers", "Idle"};
  std::vector<std::string> kinds;
  if (device) {
    header.push_back("Device busy");
    for (const auto& [kind, ps] : steps.front().device_kind_ps) {
      kinds.push_back(kind);
      header.push_back(kind);
    }
  }
  TextTable text(header, std::vector<bool>(header.size(), true));
  StepBreakdown sum;
  sum.name = "all steps";
  auto add = [&](const StepBreakdown& s) {
    std::vector<std::string> row = {
        s.name, Ms(s.duration_ps), Percent(s.forward_ps, s.duration_ps),
        Percent(s.backward_ps, s.duration_ps), Percent(s.other_ops_ps, s.duration_ps),
        Percent(s.markers_ps, s.duration_ps), Percent(s.idle_ps, s.duration_ps)};
    if (device) {
      row.push_back(Percent(s.device_busy_ps, s.duration_ps));
      for (const std::string& kind : kinds) {
        auto it = s.device_kind_ps.find(kind);
        row.push_back(Percent(it == s.device_kind_ps.end() ? 0 : it->second, s.duration_ps));
      }
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
    sum.forward_ps = SaturatingAdd(sum.forward_ps, s.forward_ps);
    sum.backward_ps = SaturatingAdd(sum.backward_ps, s.backward_ps);
    sum.other_ops_ps = SaturatingAdd(sum.other_ops_ps, s.other_ops_ps);
    sum.markers_ps = SaturatingAdd(sum.markers_ps, s.markers_ps);
    sum.idle_ps = SaturatingAdd(sum.idle_ps, s.idle_ps);
    sum.device_busy_ps = SaturatingAdd(sum.device_busy_ps, s.device_busy_ps);
    for (const auto& [kind, ps] : s.device_kind_ps) {
      sum.device_kind_ps[kind] = SaturatingAdd(sum.device_kind_ps[kind], ps);
    }
  }
  add(sum);
  absl::StrAppend(out, text.Render());
  if (shown.size() < steps.size()) {
    absl::StrAppend(out, "  ", shown.size(), " longest of ", steps.size(),
                    " steps shown (--top 0 shows all); 'all steps' covers every step\n");
  }
  absl::StrAppend(out,
                  "  % of step time; each instant counted once: backward > forward > other ops "
                  "(no direction) > markers only > idle",
                  device ? "; device columns: any device event in the step's window" : "", "\n");
}

}  // namespace

Summary Summarize(const tensorflow::profiler::XSpace& space) {
  const OperatorEvents ops = CollectOperatorEvents(space);
  Summary summary;
  for (const auto& plane : space.planes()) {
    for (const auto& line : plane.lines()) {
      for (const auto& event : line.events()) {
        if (!EventTimesFit(line.timestamp_ns(), event.offset_ps(), event.duration_ps())) {
          ++summary.clamped_events;
        }
      }
    }
  }
  summary.table = BuildOpTable(ops);
  summary.steps = BuildStepBreakdown(space, ops);
  return summary;
}

std::string FormatSummaryText(const Summary& summary, int top) {
  const size_t limit = top <= 0 ? SIZE_MAX : static_cast<size_t>(top);
  std::string out;
  if (summary.clamped_events > 0) {
    absl::StrAppend(&out, "warning: ", summary.clamped_events,
                    " events have times beyond the int64 picosecond range (a corrupt or "
                    "crafted file); their times were clamped\n");
  }
  AppendOpTable(summary.table, limit, &out);
  AppendShares(summary.table, limit, &out);
  AppendSteps(summary.steps, limit, &out);
  return out;
}

std::string FormatOpTableCsv(const OpTable& table) {
  std::string out =
      "layer,direction,op,params,calls,total_us,self_us,flops,bytes,flops_per_s,cost,"
      "unknown_calls\n";
  for (const OpTableRow& row : table.rows) {
    const bool all_unknown = row.unknown_calls == row.calls;
    const char* cost = all_unknown                                     ? "unknown"
                       : row.own_calls == 0 && row.unknown_calls == 0 ? "in_children"
                       : row.unknown_calls > 0                         ? "partial"
                                                                       : "own";
    const double rate = row.FlopsPerSecond();
    absl::StrAppend(&out, CsvField(row.layer), ",", CsvField(row.direction), ",",
                    CsvField(row.op), ",", CsvField(row.params), ",", row.calls, ",",
                    Us(row.total_ps), ",", Us(row.self_ps), ",",
                    all_unknown ? "" : absl::StrCat(row.flops), ",",
                    all_unknown ? "" : absl::StrCat(row.bytes), ",",
                    rate > 0 ? absl::StrFormat("%.6g", rate) : "", ",", cost, ",",
                    row.unknown_calls, "\n");
  }
  return out;
}

}  // namespace analysis
}  // namespace neuronprof
