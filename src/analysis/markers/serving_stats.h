// The summary's counter and instant tables: each TraceCounter's samples
// summarised (min / mean / max / last and the time-weighted mean) and each
// TraceInstant name counted.
#ifndef NEURONPROF_SRC_ANALYSIS_MARKERS_SERVING_STATS_H_
#define NEURONPROF_SRC_ANALYSIS_MARKERS_SERVING_STATS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "proto/xplane.pb.h"

namespace neuronprof {
namespace analysis {

// One counter (by name, over every host plane's "_counters_" line).
// time_weighted_mean: each sample holds from its time until the next
// sample, the last one until the capture's end (the latest end of any
// host event); the value before the first sample is unknown and does not
// count. Samples at one time: the last in the line's order holds. When no
// time passes after the first sample, it is the last value.
struct CounterStats {
  std::string name;
  int64_t samples = 0;
  int64_t nan_samples = 0;  // of `samples`: NaN, left out of the figures below
  // Over the samples that are numbers; NaN (unknown) when none is. `last`
  // is the last sample, NaN or not.
  double min = 0, mean = 0, max = 0, last = 0, time_weighted_mean = 0;
  // After the capture's first host event: the first and last sample, and
  // the capture's end that the last sample holds to.
  int64_t first_ps = 0, last_ps = 0, end_ps = 0;
};

struct InstantCount {
  std::string name;
  int64_t count = 0;
};

struct ServingEvents {
  std::vector<CounterStats> counters;  // by name
  std::vector<InstantCount> instants;  // most first, then by name
};

ServingEvents BuildServingEvents(const tensorflow::profiler::XSpace& space);

}  // namespace analysis
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_ANALYSIS_MARKERS_SERVING_STATS_H_
