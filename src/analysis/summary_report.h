// `neuronprof summary`'s output: the op table, the time share per framework
// op, the step breakdown and memory as text, and the op and memory tables
// as CSV.
#ifndef NEURONPROF_SRC_ANALYSIS_SUMMARY_REPORT_H_
#define NEURONPROF_SRC_ANALYSIS_SUMMARY_REPORT_H_

#include <string>
#include <vector>

#include "proto/xplane.pb.h"
#include "src/analysis/call_stacks.h"
#include "src/analysis/device_attribution.h"
#include "src/analysis/device_peaks.h"
#include "src/analysis/kernel_table.h"
#include "src/analysis/marker_stats.h"
#include "src/analysis/memory_report.h"
#include "src/analysis/op_table.h"
#include "src/analysis/recommendations.h"
#include "src/analysis/report_table.h"
#include "src/analysis/serving_stats.h"
#include "src/analysis/step_breakdown.h"
#include "src/analysis/tail_report.h"
#include "src/analysis/utilisation.h"

namespace neuronprof {
namespace analysis {

// Views into the XSpace (device event and kernel names): it must outlive
// the Summary.
struct Summary {
  // Markers (not operators, steps or memory events) and steps per name:
  // calls, inclusive and self time, percentiles.
  MarkerStats markers;
  OpTable table;
  std::vector<StepBreakdown> steps;
  std::vector<TailReport> tails;  // per step name, then per async span name
  ServingEvents serving;          // counters and instants
  MemoryReport memory;  // Empty when the capture recorded no memory.
  DeviceEvents device;  // Empty without device planes.
  KernelTable kernels;
  DevicePeaks peaks;
  Utilisation utilisation;
  std::vector<Recommendation> recommendations;
  FoldedStacks stacks;  // Empty without recorded call stacks.
  // Events whose start or end in picoseconds lies outside int64 (only a
  // corrupt or crafted file has them): their times were clamped.
  int64_t clamped_events = 0;
  // The capture's own warnings and errors (XSpace warnings/errors): what it
  // lost (a window that ended early, dropped events, markers too large).
  std::vector<std::string> capture_warnings;
};

// `peaks` gives the CPU's peak (no probing: the user knows the machine);
// `group_by` splits the markers and step statistics by thread.
Summary Summarize(const tensorflow::profiler::XSpace& space, const PeakOptions& peaks = {},
                  GroupBy group_by = GroupBy::kName);

// `top`: rows of the op table and of the time share printed (the rest is
// folded into one line), and the longest `top` steps; <= 0 prints all.
std::string FormatSummaryText(const Summary& summary, int top);

// "operators": every row; times in microseconds, FLOPs and bytes as
// integers (empty when every call's cost is unknown).
ReportTable OpReportTable(const OpTable& table);
std::string FormatOpTableCsv(const OpTable& table);  // its CSV

// "memory": the memory-by-operator rows of every allocator, bytes as
// integers.
ReportTable MemoryReportTable(const MemoryReport& memory);
std::string FormatMemoryCsv(const MemoryReport& memory);  // its CSV

}  // namespace analysis
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_ANALYSIS_SUMMARY_REPORT_H_
