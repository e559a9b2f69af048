// `neuronprof summary`'s marker sections: markers, steps and async spans
// per name with self time and percentiles, the tail of each step and async
// span name, counters and instants, as text and
// as report tables (CSV, JSON).
#ifndef NEURONPROF_SRC_ANALYSIS_REPORT_MARKER_SECTIONS_H_
#define NEURONPROF_SRC_ANALYSIS_REPORT_MARKER_SECTIONS_H_

#include <cstddef>
#include <vector>

#include "fmt/format.h"
#include "src/analysis/markers/marker_stats.h"
#include "src/analysis/markers/serving_stats.h"
#include "src/analysis/markers/tail_report.h"
#include "src/analysis/text/report_table.h"

namespace neuronprof {
namespace analysis {

// The first `top` rows of each table (the rest are counted).
void AppendStepStats(const std::vector<SpanStats>& steps, size_t top, fmt::memory_buffer& out);
void AppendTails(const std::vector<TailReport>& tails, size_t top, fmt::memory_buffer& out);
void AppendMarkerStats(const std::vector<SpanStats>& markers, size_t top, fmt::memory_buffer& out);
void AppendAsyncStats(const std::vector<SpanStats>& spans, size_t top, fmt::memory_buffer& out);
void AppendCounters(const std::vector<CounterStats>& counters, size_t top, fmt::memory_buffer& out);
void AppendInstants(const std::vector<InstantCount>& instants, size_t top, fmt::memory_buffer& out);

// "markers" and "step_stats": name, [source,] thread, calls, total_us,
// self_us, mean_us, p50_us, p90_us, p99_us, max_us[, device_us,
// device_events, device_flops] (with_source: the markers).
ReportTable SpanStatsTable(const char* name, const std::vector<SpanStats>& rows, bool with_source);
// "counters": name, samples, min, mean, max, last, time_weighted_mean,
// first_us, last_us, end_us.
ReportTable CounterTable(const std::vector<CounterStats>& counters);
// "instants": name, count.
ReportTable InstantTable(const std::vector<InstantCount>& instants);
// "tails": one row per named part (and one for the others) of each name,
// or one row with an empty part when there is nothing to blame.
ReportTable TailTable(const std::vector<TailReport>& tails);

}  // namespace analysis
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_ANALYSIS_REPORT_MARKER_SECTIONS_H_
