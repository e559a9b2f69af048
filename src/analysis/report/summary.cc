#include "src/analysis/report/summary.h"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "src/analysis/markers/flow_tails.h"
#include "src/xplane/saturating.h"
#include "src/xplane/xplane_visitor.h"

namespace neuronprof {
namespace analysis {
namespace {

// The time covered by a set of intervals (overlaps counted once).
int64_t Covered(std::vector<std::pair<int64_t, int64_t>> spans) {
  std::sort(spans.begin(), spans.end());
  int64_t covered = 0, reached = INT64_MIN;
  for (const auto& [start, end] : spans) {
    const int64_t from = std::max(start, reached);
    if (end > from) covered = SaturatingAdd(covered, SaturatingSub(end, from));
    reached = std::max(reached, end);
  }
  return covered;
}

// What MFU is measured over: the time covered by the steps (concurrent
// steps, a server's workers, count once), else the span of the operators,
// else that of the device events (a program with markers only).
int64_t WallPs(const std::vector<StepBreakdown>& steps, const OperatorEvents& ops,
               const DeviceEvents& device) {
  std::vector<std::pair<int64_t, int64_t>> spans;
  for (const StepBreakdown& step : steps) {
    spans.push_back({step.start_ps, SaturatingAdd(step.start_ps, step.duration_ps)});
  }
  if (spans.empty()) {
    int64_t first = INT64_MAX, last = INT64_MIN;
    auto extend = [&](int64_t start, int64_t duration) {
      first = std::min(first, start);
      last = std::max(last, SaturatingAdd(start, duration));
    };
    for (const OperatorEvent& op : ops.ops) extend(op.start_ps, op.duration_ps);
    if (ops.ops.empty()) {
      for (const DeviceOpEvent& event : device.events) extend(event.start_ps, event.duration_ps);
    }
    if (first < last) spans.push_back({first, last});
  }
  return Covered(std::move(spans));
}

}  // namespace

Summary Summarize(const tensorflow::profiler::XSpace& space, const PeakOptions& peaks,
                  GroupBy group_by) {
  const OperatorEvents ops = CollectOperatorEvents(space);
  Summary summary;
  for (const auto& raw : space.planes()) {
    xplane::PlaneVisitor(raw).ForEachEvent([&](const xplane::EventVisitor& event) {
      if (!EventTimesFit(event.line().timestamp_ns(), event.OffsetPs(), event.DurationPs())) {
        ++summary.clamped_events;
      }
    });
  }
  summary.capture_warnings.assign(space.warnings().begin(), space.warnings().end());
  for (const std::string& error : space.errors()) {
    summary.capture_warnings.push_back("error: " + error);
  }
  const HostSpans spans = CollectHostSpans(space);
  summary.device = CollectDeviceEvents(space, ops, &spans);
  summary.table = BuildOpTable(ops, &summary.device);
  summary.steps = BuildStepBreakdown(space, ops);
  AddLaunchedDeviceTime(summary.device, summary.steps);
  summary.markers = BuildMarkerStats(spans, group_by, &summary.device);
  summary.tails = BuildTails(space, spans, &summary.device);
  summary.serving = BuildServingEvents(space);
  summary.memory = BuildMemoryReport(space, ops, summary.steps);
  summary.kernels = BuildKernelTable(summary.device);
  summary.stacks = FoldCallStacks(space);
  summary.peaks = FindDevicePeaks(space, summary.device.planes, peaks);
  summary.roofline = BuildRoofline(summary.table, summary.peaks,
                                   WallPs(summary.steps, ops, summary.device), &summary.device);
  summary.recommendations =
      Recommend({summary.table, summary.device, summary.steps, summary.peaks, summary.roofline});
  return summary;
}

}  // namespace analysis
}  // namespace neuronprof
