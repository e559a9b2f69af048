// Durations summarised: count, total, mean, percentiles and extremes. The
// percentile method is numpy's default (linear interpolation between the
// two closest ranks, numpy.percentile(method="linear")), so figures can be
// checked against numpy on the same durations.
#ifndef NEURONPROF_SRC_ANALYSIS_TIMELINE_DISTRIBUTION_H_
#define NEURONPROF_SRC_ANALYSIS_TIMELINE_DISTRIBUTION_H_

#include <cstdint>
#include <vector>

namespace neuronprof {
namespace analysis {

// Times in picoseconds. Percentiles and the mean are doubles: linear
// interpolation falls between two durations.
struct Distribution {
  int64_t count = 0;
  int64_t total_ps = 0;  // saturating sum
  int64_t min_ps = 0, max_ps = 0;
  double mean_ps = 0, p50_ps = 0, p90_ps = 0, p99_ps = 0;
};

// The q-th percentile (0 <= q <= 100) of `sorted` (ascending, not empty):
// with h = (n - 1) * q / 100, sorted[floor(h)] + (h - floor(h)) *
// (sorted[floor(h) + 1] - sorted[floor(h)]).
double Percentile(const std::vector<int64_t>& sorted, double q);

// Sorts `durations` in place. An empty list gives all zeros.
Distribution Summarize(std::vector<int64_t>& durations);

}  // namespace analysis
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_ANALYSIS_TIMELINE_DISTRIBUTION_H_
