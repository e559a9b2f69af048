// Time covered by a set of intervals, asked for many windows: built once in
// O(n log n), each window answered in O(log n). The step breakdown asks it
// once per step; scanning each step's window instead is quadratic when
// steps nest or share their events.
#ifndef NEURONPROF_SRC_ANALYSIS_TIMELINE_INTERVAL_COVERAGE_H_
#define NEURONPROF_SRC_ANALYSIS_TIMELINE_INTERVAL_COVERAGE_H_

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace neuronprof {
namespace analysis {

struct Interval {
  int64_t start, end;  // [start, end); empty when end <= start
  int category;        // 0 .. categories-1; higher wins where intervals overlap
};

// The timeline of the intervals: each instant given to the highest category
// active there.
class Coverage {
 public:
  Coverage(const std::vector<Interval>& intervals, int categories);

  // Time in [begin, end) whose highest active category is c, for each c.
  std::vector<int64_t> Covered(int64_t begin, int64_t end) const;
  // Time in [begin, end) that some interval covers.
  int64_t Busy(int64_t begin, int64_t end) const;
  // Time in [begin, end) that no interval covers, exact (an int64 window
  // can be longer than INT64_MAX).
  uint64_t Free(int64_t begin, int64_t end) const;

 private:
  uint64_t BusySpan(int64_t begin, int64_t end) const;
  // [first, last) of the segments that overlap [begin, end).
  std::pair<size_t, size_t> Overlapping(int64_t begin, int64_t end) const;

  int categories_;
  // Disjoint segments in time order, each with its highest category, and
  // per category the time of segments before k (disjoint int64 segments
  // sum to less than 2^64, so the sums and their differences are exact).
  std::vector<int64_t> starts_, ends_;
  std::vector<int> category_;
  std::vector<std::vector<uint64_t>> before_;
};

// The time between two instants a <= b, exact over the whole int64 range.
inline uint64_t TimeBetween(int64_t a, int64_t b) {
  return static_cast<uint64_t>(b) - static_cast<uint64_t>(a);
}
// A span clamped into int64.
int64_t ClampSpan(uint64_t span);

}  // namespace analysis
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_ANALYSIS_TIMELINE_INTERVAL_COVERAGE_H_
