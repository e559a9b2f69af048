// The tail explained: for each step name (any span kind whose instances
// break down into named parts), p50 / p99 / max and which parts make its
// slowest instances slower than its typical ones.
//
// Rule (docs/ANALYSIS.md, "The tail explained"):
//  - slowest: the ceil(1 %) longest instances, at least 1;
//  - typical: the median band, the instances ranked from 40 % to 60 % by
//    duration (the median one at least), never one of the slowest;
//  - gap: mean duration of the slowest minus that of the typical;
//  - a part's excess: its mean time in the slowest minus in the typical.
//    The parts of an instance add up to its duration, so the excesses add
//    up to the gap;
//  - there is a tail to explain when the gap is >= 10 % of the typical
//    mean; then each part whose excess is >= 10 % of the gap is named,
//    largest first, and the rest are summed as "others". Otherwise nothing
//    is blamed: the slowest differ from the typical by noise.
#ifndef NEURONPROF_SRC_ANALYSIS_MARKERS_TAIL_REPORT_H_
#define NEURONPROF_SRC_ANALYSIS_MARKERS_TAIL_REPORT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "src/analysis/timeline/host_spans.h"

namespace neuronprof {
namespace analysis {

inline constexpr double kTailSlowestFraction = 0.01;
inline constexpr double kTailBandLow = 0.40, kTailBandHigh = 0.60;
inline constexpr double kTailMinGap = 0.10;        // of the typical mean
inline constexpr double kTailMinLineShare = 0.10;  // of the gap
inline constexpr char kSelfPart[] = "(self)";

// One instance: its duration and the parts it is made of (a child's name,
// or kSelfPart for time no child covers), which add up to the duration. A
// name may appear more than once (a child called twice).
struct TailInstance {
  int64_t duration_ps = 0;
  std::vector<std::pair<std::string_view, int64_t>> parts;
};

struct TailLine {
  std::string part;  // a child's name, or "(self)"
  double excess_ps = 0;
  double slowest_mean_ps = 0, typical_mean_ps = 0;
};

struct TailReport {
  std::string name;
  std::string kind;  // "step" or "async"
  int64_t instances = 0;
  double p50_ps = 0, p99_ps = 0;
  int64_t max_ps = 0;
  int64_t slowest = 0, typical = 0;  // instances in each set
  double slowest_mean_ps = 0, typical_mean_ps = 0;
  bool has_tail = false;
  std::vector<TailLine> lines;  // named parts, largest excess first
  double others_excess_ps = 0;  // the parts below the line share, summed
  int64_t others = 0;
  double gap_ps() const { return slowest_mean_ps - typical_mean_ps; }
};

// `instances` of one name; empty instances give an empty report.
TailReport ExplainTail(std::string name, std::string kind, std::vector<TailInstance> instances);

// A producer's queue wait for its first consumer (flow_tails.h).
struct FlowWait {
  int32_t producer = -1, consumer = -1;  // indices into HostSpans::spans
  int64_t start_ps = 0, end_ps = 0;      // producer end, first consumer start
  std::string part;                      // "wait enqueue->infer"
};

// One report per step name (steps' direct children by name, the waits of
// the producers nested in the step, the markers of other threads linked
// to the step's markers, and "(self)"), by name. A wait or a linked marker
// counts for its time inside the step and outside the step's direct
// children (taken from "(self)"). `linked`: as FlowWait, `producer` the
// marker in the step, `consumer` the other thread's marker linked to it
// (produced or consumed context), `part` its name. The reports copy the
// names.
// `device`: device work, as FlowWait with `producer` the user marker that
// launched it and [start_ps, end_ps) its time on the device; it counts in
// the part of the step's direct child that holds the marker, for its time
// inside the step and outside the step's direct children (the host did not
// wait for it in a child: taken from "(self)").
std::vector<TailReport> BuildStepTails(const HostSpans& spans,
                                       const std::vector<FlowWait>& waits = {},
                                       const std::vector<FlowWait>& linked = {},
                                       const std::vector<FlowWait>& device = {});

// The part of [start, end) inside [lo, hi): 0 when they do not meet.
int64_t Overlap(int64_t start, int64_t end, int64_t lo, int64_t hi);

// "request: p50 4.1 ms, p99 41.2 ms, max 45 ms (200 instances); the
// slowest 1 % (2) spend +33.9 ms in queue_wait, +2.1 ms in infer".
std::string TailSentence(const TailReport& report);

// "41.2 ms", "512 us", "3 ns": three significant digits; "0".
std::string HumanDuration(double ps);

}  // namespace analysis
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_ANALYSIS_MARKERS_TAIL_REPORT_H_
