// The summary's marker tables in process: markers and steps per name with
// self time and percentiles, and the tail of each step name explained,
// from a Profiler's result or a FlightRecorder dump's, as plain structs, so
// a server can log its own p99 breakdown:
//
//   absl::StatusOr<neuronprof::ProfileResult> dump = recorder.Dump("periodic", 60000);
//   if (dump.ok()) {
//     auto summary = neuronprof::SummarizeMarkers(*dump);
//     if (summary.ok()) {
//       for (const neuronprof::TailExplanation& tail : summary->tails) LOG(INFO) << tail.text;
//     }
//   }
//
// The figures are those of `neuronprof summary` on the run's .xplane.pb
// (its "Step times by name", "Tail", "Markers", "Async spans",
// "Counters" and "Instants" sections; the rules are
// in docs/ANALYSIS.md). Reading the run takes time proportional to its
// events: call it off the serving path.
#ifndef NEURONPROF_SUMMARY_H_
#define NEURONPROF_SUMMARY_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "neuronprof/export.h"
#include "neuronprof/profiler.h"

namespace neuronprof {

struct MarkerSummaryOptions {
  enum class GroupBy {
    kName,         // one row per name (and source, for markers)
    kThread,       // one row per name and thread
    kThreadGroup,  // threads whose names differ only in digits share a row
  };
  GroupBy group_by = GroupBy::kName;
  // At most one selection: steps numbered first..second (both included,
  // StepTrace's step number) and the events wholly inside their span, or
  // the events wholly inside [first, second] ms after the first event.
  std::optional<std::pair<int64_t, int64_t>> steps;
  std::optional<std::pair<double, double>> window_ms;
};

// Durations in nanoseconds. Percentiles interpolate linearly between the
// two closest ranks (numpy.percentile's default).
struct DurationStats {
  int64_t calls = 0;
  int64_t total_ns = 0;  // inclusive time, summed
  int64_t self_ns = 0;   // time outside the markers and operators nested in each call
  double mean_ns = 0, p50_ns = 0, p90_ns = 0, p99_ns = 0;
  int64_t max_ns = 0;
};

struct MarkerStatsRow {
  std::string name;
  std::string source;  // "dir/file.cc:123" of a NEURONPROF_SCOPE, else ""
  std::string thread;  // the thread or thread group; "" with GroupBy::kName
  DurationStats stats;
  // Markers: the device work (neuronprof/device.h plug-ins, CUPTI) launched
  // with this marker the innermost around the launch call; 0 for steps.
  int64_t device_ns = 0;
  int64_t device_events = 0;
  int64_t device_flops = 0;  // as the device runtime reported them
};

// One part of a step or async span that its slowest instances spend
// longer in.
struct TailPart {
  // A child marker's name, a marker linked to an async span's id, a queue
  // wait "wait <producer>-><consumer>" (producer end to its first
  // consumer's start), or "(self)".
  std::string part;
  double excess_ns = 0;  // mean time in the slowest minus in the typical
};

struct TailExplanation {
  std::string kind;  // "step" or "async"
  std::string name;  // the step's name; an async span's "track/name" (its name when equal)
  int64_t instances = 0;
  double p50_ns = 0, p99_ns = 0;
  int64_t max_ns = 0;
  int64_t slowest = 0;  // the slowest 1 % (at least 1)
  // Mean duration of the slowest minus that of the median band (the
  // instances ranked 40-60 %).
  double gap_ns = 0;
  // False when the gap is below 10 % of the band's mean: nothing blamed.
  bool has_tail = false;
  std::vector<TailPart> parts;  // >= 10 % of the gap each, largest first
  // "request: p50 4.1 ms, p99 41.2 ms, ...; the slowest 1 % (2) take
  // +36.2 ms over the median band, spending +33.9 ms in queue_wait, ..."
  std::string text;
};

// A TraceCounter's samples. time_weighted_mean: each sample holds until the
// next one, the last until the capture's last event ends.
struct CounterSummary {
  std::string name;
  int64_t samples = 0;
  double min = 0, mean = 0, max = 0, last = 0, time_weighted_mean = 0;
};

struct InstantSummary {
  std::string name;  // a TraceInstant's name
  int64_t count = 0;
};

struct MarkerSummary {
  std::vector<MarkerStatsRow> markers;  // longest total first
  std::vector<MarkerStatsRow> steps;    // per step name, longest total first
  // Per step name by name, then per async span (track, name) by name.
  std::vector<TailExplanation> tails;
  // AsyncTrace spans per (name, track): thread = the track, self = total.
  std::vector<MarkerStatsRow> async_spans;
  std::vector<CounterSummary> counters;  // by name
  std::vector<InstantSummary> instants;  // most first
};

// Summarises the host markers of `result`'s run (its .xplane.pb). Errors:
// NotFound when the result lists no .xplane.pb file or no step has a number
// in options.steps; InvalidArgument for both selections at once or a bad
// range; the reader's error for a file that is gone or corrupt.
// Thread-safety: any threads at once (each call reads the file into state
// of its own).
NEURONPROF_API absl::StatusOr<MarkerSummary> SummarizeMarkers(
    const ProfileResult& result, const MarkerSummaryOptions& options = {});

}  // namespace neuronprof

#endif  // NEURONPROF_SUMMARY_H_
