// `neuronprof summary`'s output: the op table, the time share per framework
// op, the step breakdown and memory as text, and the op and memory tables
// as CSV.
#ifndef NEURONPROF_SRC_ANALYSIS_SUMMARY_REPORT_H_
#define NEURONPROF_SRC_ANALYSIS_SUMMARY_REPORT_H_

#include <string>
#include <vector>

#include "proto/xplane.pb.h"
#include "src/analysis/device_attribution.h"
#include "src/analysis/device_peaks.h"
#include "src/analysis/kernel_table.h"
#include "src/analysis/memory_report.h"
#include "src/analysis/op_table.h"
#include "src/analysis/recommendations.h"
#include "src/analysis/step_breakdown.h"
#include "src/analysis/utilisation.h"

namespace neuronprof {
namespace analysis {

// Host markers (not operators, steps or memory events) per (name,
// source): PyProf's markers with their "call trace". Inclusive times.
struct MarkerRow {
  std::string name;
  std::string source;  // "dir/file.cc:123" (last two path parts), or "".
  int64_t calls = 0;
  int64_t total_ps = 0;
};

// Views into the XSpace (device event and kernel names): it must outlive
// the Summary.
struct Summary {
  std::vector<MarkerRow> markers;  // Longest total first.
  OpTable table;
  std::vector<StepBreakdown> steps;
  MemoryReport memory;  // Empty when the capture recorded no memory.
  DeviceEvents device;  // Empty without device planes.
  KernelTable kernels;
  DevicePeaks peaks;
  Utilisation utilisation;
  std::vector<Recommendation> recommendations;
  // Events whose start or end in picoseconds lies outside int64 (only a
  // corrupt or crafted file has them): their times were clamped.
  int64_t clamped_events = 0;
};

// The markers of the host planes, longest total first.
std::vector<MarkerRow> BuildMarkerTable(const tensorflow::profiler::XSpace& space);

// The last two components of a path ("src/dir/file.cc:12" -> "dir/file.cc:12").
std::string ShortSource(std::string_view source);

// `peaks` gives the CPU's peak (no probing: the user knows the machine).
Summary Summarize(const tensorflow::profiler::XSpace& space, const PeakOptions& peaks = {});

// `top`: rows of the op table and of the time share printed (the rest is
// folded into one line), and the longest `top` steps; <= 0 prints all.
std::string FormatSummaryText(const Summary& summary, int top);

// Every row, header first; times in microseconds, FLOPs and bytes as
// integers (empty when every call's cost is unknown).
std::string FormatOpTableCsv(const OpTable& table);

// The memory-by-operator rows of every allocator, header first, bytes as
// integers.
std::string FormatMemoryCsv(const MemoryReport& memory);

}  // namespace analysis
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_ANALYSIS_SUMMARY_REPORT_H_
