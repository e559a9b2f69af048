#include "src/analysis/timeline/interval_coverage.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <utility>

#include "src/xplane/work_count.h"

namespace neuronprof {
namespace analysis {

int64_t ClampSpan(uint64_t span) {
  constexpr uint64_t kMax = std::numeric_limits<int64_t>::max();
  return static_cast<int64_t>(std::min(span, kMax));
}

Coverage::Coverage(const std::vector<Interval>& intervals, int categories)
    : categories_(categories), before_(categories, std::vector<uint64_t>(1, 0)) {
  std::vector<std::pair<int64_t, int>> edges;  // (time, +-(category + 1))
  edges.reserve(intervals.size() * 2);
  for (const Interval& in : intervals) {
    if (in.start >= in.end) continue;
    edges.push_back({in.start, in.category + 1});
    edges.push_back({in.end, -(in.category + 1)});
  }
  std::sort(edges.begin(), edges.end());
  xplane::CountWork(edges.size());
  std::vector<int64_t> active(categories, 0);
  int64_t at = 0;
  for (const auto& [time, delta] : edges) {
    int top = categories - 1;
    while (top >= 0 && active[top] == 0) --top;
    if (top >= 0 && time > at) {
      if (!category_.empty() && category_.back() == top && ends_.back() == at) {
        ends_.back() = time;  // Extends the segment before.
      } else {
        starts_.push_back(at);
        ends_.push_back(time);
        category_.push_back(top);
      }
    }
    at = time;
    active[std::abs(delta) - 1] += delta > 0 ? 1 : -1;
  }
  for (int c = 0; c < categories_; ++c) before_[c].reserve(starts_.size() + 1);
  for (size_t k = 0; k < starts_.size(); ++k) {
    for (int c = 0; c < categories_; ++c) {
      const uint64_t own = category_[k] == c ? TimeBetween(starts_[k], ends_[k]) : 0;
      before_[c].push_back(before_[c].back() + own);
    }
  }
}

std::pair<size_t, size_t> Coverage::Overlapping(int64_t begin, int64_t end) const {
  xplane::CountWork();
  const size_t first = std::upper_bound(ends_.begin(), ends_.end(), begin) - ends_.begin();
  const size_t last = std::lower_bound(starts_.begin(), starts_.end(), end) - starts_.begin();
  return {first, std::max(first, last)};
}

std::vector<int64_t> Coverage::Covered(int64_t begin, int64_t end) const {
  std::vector<int64_t> covered(categories_, 0);
  if (begin >= end) return covered;
  const auto [first, last] = Overlapping(begin, end);
  if (first == last) return covered;
  for (int c = 0; c < categories_; ++c) {
    uint64_t time = before_[c][last] - before_[c][first];
    // The first and last segments may stick out of the window.
    if (category_[first] == c && starts_[first] < begin) {
      time -= TimeBetween(starts_[first], begin);
    }
    if (category_[last - 1] == c && ends_[last - 1] > end) {
      time -= TimeBetween(end, ends_[last - 1]);
    }
    covered[c] = ClampSpan(time);
  }
  return covered;
}

int64_t Coverage::Busy(int64_t begin, int64_t end) const { return ClampSpan(BusySpan(begin, end)); }

uint64_t Coverage::BusySpan(int64_t begin, int64_t end) const {
  if (begin >= end) return 0;
  const auto [first, last] = Overlapping(begin, end);
  if (first == last) return 0;
  uint64_t time = 0;
  for (int c = 0; c < categories_; ++c) time += before_[c][last] - before_[c][first];
  if (starts_[first] < begin) time -= TimeBetween(starts_[first], begin);
  if (ends_[last - 1] > end) time -= TimeBetween(end, ends_[last - 1]);
  return time;
}

uint64_t Coverage::Free(int64_t begin, int64_t end) const {
  if (begin >= end) return 0;
  return TimeBetween(begin, end) - BusySpan(begin, end);
}

}  // namespace analysis
}  // namespace neuronprof
