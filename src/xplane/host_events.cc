#include "src/xplane/host_events.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "src/xplane/schema.h"

namespace neuronprof {
namespace xplane {

using tensorflow::profiler::XEvent;
using tensorflow::profiler::XLine;

std::vector<int> SortedEventIndices(const XLine& line) {
  std::vector<int> order(line.events_size());
  for (int i = 0; i < line.events_size(); ++i) order[i] = i;
  auto before = [&](int a, int b) {
    const XEvent& x = line.events(a);
    const XEvent& y = line.events(b);
    if (x.offset_ps() != y.offset_ps()) return x.offset_ps() < y.offset_ps();
    return x.duration_ps() > y.duration_ps();
  };
  // Our own host planes are written in this order already.
  if (!std::is_sorted(order.begin(), order.end(), before)) {
    std::stable_sort(order.begin(), order.end(), before);
  }
  return order;
}

StepStatIds::StepStatIds(const PlaneVisitor& plane)
    : root(plane.StatId(kRootLevelStat)),
      framework(plane.StatId(kOpFrameworkStat)),
      step_num(plane.StatId(kStepNumStat)) {}

bool IsStepEvent(const EventVisitor& event, const StepStatIds& ids) {
  const std::optional<int64_t> root = event.IntStat(ids.root);
  // The framework stat is looked up only for events that may be steps.
  return IsStep(root, root.value_or(0) != 0 && event.Stat(ids.framework).has_value());
}

bool IsRuntimeCallsPlane(std::string_view name) {
  const absl::string_view view(name.data(), name.size());
  return name == kCuptiPlaneName ||
         (absl::StartsWith(view, "/host:") && absl::EndsWith(view, kRuntimePlaneSuffix));
}

}  // namespace xplane
}  // namespace neuronprof
