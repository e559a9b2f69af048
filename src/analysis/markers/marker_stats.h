// Per-name statistics of markers and steps: calls, total (inclusive) and
// self time, mean and p50 / p90 / p99 / max of the durations, per name or
// split by thread or thread-name group.
#ifndef NEURONPROF_SRC_ANALYSIS_MARKERS_MARKER_STATS_H_
#define NEURONPROF_SRC_ANALYSIS_MARKERS_MARKER_STATS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "src/analysis/ops/device_attribution.h"
#include "src/analysis/timeline/distribution.h"
#include "src/analysis/timeline/host_spans.h"

namespace neuronprof {
namespace analysis {

// How rows are keyed besides the name (and, for markers, the source).
enum class GroupBy {
  kName,         // one row for all threads; thread is ""
  kThread,       // one row per thread (line) name
  kThreadGroup,  // threads whose names differ only in digits share a row
};

// A thread's group: every run of digits replaced by "*" ("worker-12" ->
// "worker-*", "pool-1-thread-3" -> "pool-*-thread-*").
std::string ThreadGroup(std::string_view thread);

struct SpanStats {
  std::string name;
  std::string source;     // "dir/file.cc:123" (NEURONPROF_SCOPE), or "".
  std::string thread;     // the thread or thread group; "" with GroupBy::kName
  Distribution duration;  // inclusive durations; count = calls
  int64_t self_ps = 0;    // summed self time (saturating)
  // Device work with this marker the innermost around its launch
  // (DeviceOpEvent::marker), not its nested markers'; 0 for steps.
  int64_t device_ps = 0, device_events = 0;
  int64_t device_flops = 0;  // as the runtime reported them
  int64_t calls() const { return duration.count; }
  int64_t total_ps() const { return duration.total_ps; }
};

// Markers per (name, source[, thread]), steps per (name[, thread]) and
// async spans per (name, track) (thread = the track, whatever group_by;
// self = duration: nothing nests on a track), each longest total first
// (then by name).
struct MarkerStats {
  std::vector<SpanStats> markers;
  std::vector<SpanStats> steps;
  std::vector<SpanStats> async_spans;
};

// `device`: device events attributed to `spans` (CollectDeviceEvents with
// the same spans), for the markers' device columns.
MarkerStats BuildMarkerStats(const HostSpans& spans, GroupBy group_by = GroupBy::kName,
                             const DeviceEvents* device = nullptr);

}  // namespace analysis
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_ANALYSIS_MARKERS_MARKER_STATS_H_
