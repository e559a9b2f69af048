#include "src/analysis/report/marker_sections.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <string>

#include "src/analysis/text/terminal_text.h"
#include "src/analysis/text/text_table.h"

namespace neuronprof {
namespace analysis {
namespace {

std::string UsCell(double ps) { return Cell::Micros(ps).Csv(); }
std::string MsCell(double ps) { return fmt::format("{:.3f}", ps / 1e9); }

bool HasThreads(const std::vector<SpanStats>& rows) {
  return std::any_of(rows.begin(), rows.end(),
                     [](const SpanStats& row) { return !row.thread.empty(); });
}

bool HasDevice(const std::vector<SpanStats>& rows) {
  return std::any_of(rows.begin(), rows.end(),
                     [](const SpanStats& row) { return row.device_events > 0; });
}

// Name, [source,] [thread,] calls, total and self in ms, then the
// distribution in `unit` (MsCell or UsCell).
void AppendSpanTable(const std::vector<SpanStats>& rows, size_t top, bool with_source,
                     const char* first, const char* unit, std::string (*cell)(double),
                     fmt::memory_buffer& out) {
  const bool threads = HasThreads(rows);
  std::vector<std::string> header = {first};
  if (with_source) header.push_back("Source");
  if (threads) header.push_back("Thread");
  const size_t text_columns = header.size();
  header.insert(header.end(), {"Calls", "Total(ms)", "Self(ms)"});
  for (const char* column : {"Mean", "p50", "p90", "p99", "Max"}) {
    header.push_back(fmt::format("{}({})", column, unit));
  }
  // Device columns only when some row launched device work.
  const bool device = HasDevice(rows);
  if (device) header.insert(header.end(), {"Device(ms)", "Dev events", "Dev FLOPs"});
  std::vector<bool> right(header.size(), true);
  std::fill(right.begin(), right.begin() + text_columns, false);
  TextTable text(header, right);
  const size_t shown = std::min(top, rows.size());
  for (size_t i = 0; i < shown; ++i) {
    const SpanStats& row = rows[i];
    const Distribution& d = row.duration;
    std::vector<std::string> cells = {Shorten(row.name, 60)};
    if (with_source) cells.push_back(row.source.empty() ? "-" : row.source);
    if (threads) cells.push_back(Shorten(row.thread, 30));
    cells.insert(cells.end(), {fmt::format("{}", d.count), Ms(d.total_ps), Ms(row.self_ps),
                               cell(d.mean_ps), cell(d.p50_ps), cell(d.p90_ps), cell(d.p99_ps),
                               cell(static_cast<double>(d.max_ps))});
    if (device) {
      cells.insert(
          cells.end(),
          {row.device_events > 0 ? Ms(row.device_ps) : "-", fmt::format("{}", row.device_events),
           row.device_flops > 0 ? Si(static_cast<double>(row.device_flops)) : "-"});
    }
    text.Add(std::move(cells));
  }
  text.RenderTo(out);
  if (shown < rows.size()) {
    fmt::format_to(std::back_inserter(out), "  ... {} more rows (--top N, --csv)\n",
                   rows.size() - shown);
  }
}

}  // namespace

void AppendStepStats(const std::vector<SpanStats>& steps, size_t top, fmt::memory_buffer& out) {
  if (steps.empty()) return;
  fmt::format_to(std::back_inserter(out), "\nStep times by name\n");
  AppendSpanTable(steps, top, false, "Step", "ms", MsCell, out);
  fmt::format_to(std::back_inserter(out),
                 "  Self: step time outside the markers and ops nested in it; percentiles "
                 "interpolate linearly between ranks (numpy's default)\n");
}

void AppendTails(const std::vector<TailReport>& tails, size_t top, fmt::memory_buffer& out) {
  if (tails.empty()) return;
  auto to = std::back_inserter(out);
  fmt::format_to(to,
                 "\nTail: the slowest 1 % of each step and async span name against its "
                 "median band\n");
  const size_t shown = std::min(top, tails.size());
  for (size_t i = 0; i < shown; ++i) {
    fmt::format_to(to, "  {}\n", TerminalText(TailSentence(tails[i])));  // Names inside.
  }
  if (shown < tails.size()) fmt::format_to(to, "  ... {} more names\n", tails.size() - shown);
  fmt::format_to(to,
                 "  Median band: the instances ranked 40-60 % by duration. Parts: the step's "
                 "direct children by name, an async span's markers linked to its id (any "
                 "thread), a step's markers of other threads linked to its own, device time "
                 "in the part of the marker that launched it, queue waits (wait P->C: "
                 "producer end to first consumer start) and (self); "
                 "a part is named when it accounts for "
                 ">= {:.0f} % of the excess, and only when the slowest exceed the band by "
                 ">= {:.0f} %\n",
                 kTailMinLineShare * 100, kTailMinGap * 100);
}

void AppendMarkerStats(const std::vector<SpanStats>& markers, size_t top, fmt::memory_buffer& out) {
  if (markers.empty()) return;
  auto to = std::back_inserter(out);
  fmt::format_to(to, "\nMarkers: {} (name, source{})\n", markers.size(),
                 HasThreads(markers) ? ", thread" : "");
  AppendSpanTable(markers, top, true, "Marker", "us", UsCell, out);
  fmt::format_to(to,
                 "  Total: inclusive time (nested markers count in each); Self: time outside "
                 "the markers and ops nested in it; Source: file:line of a NEURONPROF_SCOPE "
                 "without arguments, - for other markers{}\n",
                 HasDevice(markers) ? "; Device: time of the device work launched with this "
                                      "marker the innermost around the launch; Dev FLOPs: as "
                                      "the runtime reported them"
                                    : "");
}

void AppendAsyncStats(const std::vector<SpanStats>& spans, size_t top, fmt::memory_buffer& out) {
  if (spans.empty()) return;
  fmt::format_to(std::back_inserter(out), "\nAsync spans: {} (name, track)\n", spans.size());
  AppendSpanTable(spans, top, false, "Span", "ms", MsCell, out);
  fmt::format_to(std::back_inserter(out),
                 "  Thread: the span's track; Self equals Total (nothing nests on a track)\n");
}

void AppendCounters(const std::vector<CounterStats>& counters, size_t top,
                    fmt::memory_buffer& out) {
  if (counters.empty()) return;
  auto to = std::back_inserter(out);
  fmt::format_to(to, "\nCounters: {}\n", counters.size());
  TextTable text({"Counter", "Samples", "Min", "Mean", "Max", "Last", "TimeWeightedMean"},
                 {false, true, true, true, true, true, true});
  auto num = [](double v) { return std::isnan(v) ? std::string("-") : fmt::format("{:.6g}", v); };
  const size_t shown = std::min(top, counters.size());
  for (size_t i = 0; i < shown; ++i) {
    const CounterStats& c = counters[i];
    text.Add({Shorten(c.name, 60), fmt::format("{}", c.samples), num(c.min), num(c.mean),
              num(c.max), num(c.last), num(c.time_weighted_mean)});
  }
  text.RenderTo(out);
  if (shown < counters.size()) fmt::format_to(to, "  ... {} more rows\n", counters.size() - shown);
  fmt::format_to(to,
                 "  TimeWeightedMean: each sample holds until the next one, the last until the "
                 "capture's last event ends\n");
  for (size_t i = 0; i < shown; ++i) {
    const CounterStats& c = counters[i];
    if (c.nan_samples == 0) continue;
    fmt::format_to(to,
                   "  {}: {} of {} samples are NaN, left out of Min, Mean, Max and "
                   "TimeWeightedMean ('-': no sample is a number)\n",
                   Shorten(c.name, 60), c.nan_samples, c.samples);
  }
}

void AppendInstants(const std::vector<InstantCount>& instants, size_t top,
                    fmt::memory_buffer& out) {
  if (instants.empty()) return;
  auto to = std::back_inserter(out);
  fmt::format_to(to, "\nInstants: {}\n", instants.size());
  TextTable text({"Instant", "Count"}, {false, true});
  const size_t shown = std::min(top, instants.size());
  for (size_t i = 0; i < shown; ++i) {
    text.Add({Shorten(instants[i].name, 60), fmt::format("{}", instants[i].count)});
  }
  text.RenderTo(out);
  if (shown < instants.size()) fmt::format_to(to, "  ... {} more rows\n", instants.size() - shown);
}

ReportTable CounterTable(const std::vector<CounterStats>& counters) {
  ReportTable table{"counters",
                    {"name", "samples", "min", "mean", "max", "last", "time_weighted_mean",
                     "first_us", "last_us", "end_us", "nan_samples"},
                    {}};
  // NaN (unknown) is an empty CSV cell and null in JSON.
  auto number = [](double v) { return std::isnan(v) ? Cell::Empty() : Cell::Number(v, 9); };
  for (const CounterStats& c : counters) {
    table.rows.push_back({Cell::Text(c.name), Cell::Int(c.samples), number(c.min), number(c.mean),
                          number(c.max), number(c.last), number(c.time_weighted_mean),
                          Cell::Micros(c.first_ps), Cell::Micros(c.last_ps), Cell::Micros(c.end_ps),
                          Cell::Int(c.nan_samples)});
  }
  return table;
}

ReportTable InstantTable(const std::vector<InstantCount>& instants) {
  ReportTable table{"instants", {"name", "count"}, {}};
  for (const InstantCount& i : instants) {
    table.rows.push_back({Cell::Text(i.name), Cell::Int(i.count)});
  }
  return table;
}

ReportTable SpanStatsTable(const char* name, const std::vector<SpanStats>& rows, bool with_source) {
  ReportTable table{name, {"name"}, {}};
  if (with_source) table.columns.push_back("source");
  table.columns.insert(table.columns.end(), {"thread", "calls", "total_us", "self_us", "mean_us",
                                             "p50_us", "p90_us", "p99_us", "max_us"});
  if (with_source) {  // markers: the device work each launched
    table.columns.insert(table.columns.end(), {"device_us", "device_events", "device_flops"});
  }
  for (const SpanStats& row : rows) {
    const Distribution& d = row.duration;
    std::vector<Cell> cells = {Cell::Text(row.name)};
    if (with_source) cells.push_back(Cell::Text(row.source));
    cells.insert(cells.end(),
                 {Cell::Text(row.thread), Cell::Int(d.count), Cell::Micros(d.total_ps),
                  Cell::Micros(row.self_ps), Cell::Micros(d.mean_ps), Cell::Micros(d.p50_ps),
                  Cell::Micros(d.p90_ps), Cell::Micros(d.p99_ps), Cell::Micros(d.max_ps)});
    if (with_source) {
      cells.insert(cells.end(), {Cell::Micros(row.device_ps), Cell::Int(row.device_events),
                                 row.device_flops > 0 ? Cell::Int(row.device_flops)
                                                      : Cell::Empty()});  // unknown: null
    }
    table.rows.push_back(std::move(cells));
  }
  return table;
}

ReportTable TailTable(const std::vector<TailReport>& tails) {
  ReportTable table{"tails",
                    {"kind", "name", "instances", "p50_us", "p99_us", "max_us", "slowest",
                     "typical", "slowest_mean_us", "typical_mean_us", "has_tail", "part",
                     "excess_us", "part_slowest_mean_us", "part_typical_mean_us"},
                    {}};
  for (const TailReport& t : tails) {
    const std::vector<Cell> head = {Cell::Text(t.kind),
                                    Cell::Text(t.name),
                                    Cell::Int(t.instances),
                                    Cell::Micros(t.p50_ps),
                                    Cell::Micros(t.p99_ps),
                                    Cell::Micros(t.max_ps),
                                    Cell::Int(t.slowest),
                                    Cell::Int(t.typical),
                                    Cell::Micros(t.slowest_mean_ps),
                                    Cell::Micros(t.typical_mean_ps),
                                    Cell::Int(t.has_tail ? 1 : 0)};
    auto add = [&](Cell part, Cell excess, Cell slowest, Cell typical) {
      std::vector<Cell> row = head;
      row.insert(row.end(),
                 {std::move(part), std::move(excess), std::move(slowest), std::move(typical)});
      table.rows.push_back(std::move(row));
    };
    for (const TailLine& line : t.lines) {
      add(Cell::Text(line.part), Cell::Micros(line.excess_ps), Cell::Micros(line.slowest_mean_ps),
          Cell::Micros(line.typical_mean_ps));
    }
    if (t.others > 0) {
      add(Cell::Text(fmt::format("({} others)", t.others)), Cell::Micros(t.others_excess_ps),
          Cell::Empty(), Cell::Empty());
    }
    if (t.lines.empty() && t.others == 0) {
      add(Cell::Empty(), Cell::Empty(), Cell::Empty(), Cell::Empty());
    }
  }
  return table;
}

}  // namespace analysis
}  // namespace neuronprof
