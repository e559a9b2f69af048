// `neuronprof summary`'s analysis of one host's capture: every section's
// data (summary_sections.h formats it).
#ifndef NEURONPROF_SRC_ANALYSIS_REPORT_SUMMARY_H_
#define NEURONPROF_SRC_ANALYSIS_REPORT_SUMMARY_H_

#include <string>
#include <vector>

#include "proto/xplane.pb.h"
#include "src/analysis/devices/device_peaks.h"
#include "src/analysis/devices/kernel_table.h"
#include "src/analysis/devices/recommendations.h"
#include "src/analysis/devices/roofline.h"
#include "src/analysis/markers/call_stacks.h"
#include "src/analysis/markers/marker_stats.h"
#include "src/analysis/markers/serving_stats.h"
#include "src/analysis/markers/tail_report.h"
#include "src/analysis/memory/memory_report.h"
#include "src/analysis/ops/device_attribution.h"
#include "src/analysis/ops/op_table.h"
#include "src/analysis/ops/step_breakdown.h"
#include "src/analysis/text/report_table.h"

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
  MemoryReport memory;            // Empty when the capture recorded no memory.
  DeviceEvents device;            // Empty without device planes.
  KernelTable kernels;
  DevicePeaks peaks;
  Roofline roofline;
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

}  // namespace analysis
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_ANALYSIS_REPORT_SUMMARY_H_
