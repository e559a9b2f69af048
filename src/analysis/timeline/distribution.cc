#include "src/analysis/timeline/distribution.h"

#include <algorithm>
#include <cmath>

#include "src/xplane/saturating.h"

namespace neuronprof {
namespace analysis {

double Percentile(const std::vector<int64_t>& sorted, double q) {
  const double h = static_cast<double>(sorted.size() - 1) * q / 100.0;
  const size_t low = static_cast<size_t>(std::floor(h));
  if (low + 1 >= sorted.size()) return static_cast<double>(sorted.back());
  const double below = static_cast<double>(sorted[low]);
  const double above = static_cast<double>(sorted[low + 1]);
  return below + (h - static_cast<double>(low)) * (above - below);
}

Distribution Summarize(std::vector<int64_t>& durations) {
  Distribution d;
  if (durations.empty()) return d;
  std::sort(durations.begin(), durations.end());
  d.count = static_cast<int64_t>(durations.size());
  double sum = 0;  // the mean in double: a saturated total would bias it
  for (int64_t ps : durations) {
    d.total_ps = SaturatingAdd(d.total_ps, ps);
    sum += static_cast<double>(ps);
  }
  d.min_ps = durations.front();
  d.max_ps = durations.back();
  d.mean_ps = sum / static_cast<double>(d.count);
  d.p50_ps = Percentile(durations, 50);
  d.p90_ps = Percentile(durations, 90);
  d.p99_ps = Percentile(durations, 99);
  return d;
}

}  // namespace analysis
}  // namespace neuronprof
