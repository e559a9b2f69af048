// Rules about host events that every reader shares: the order of a line's
// events, what a step is, which planes hold a device runtime's calls. The
// analysis, the exporters and the CLI use these, so the summary and the
// trace files cannot disagree about them.
#ifndef NEURONPROF_SRC_XPLANE_HOST_EVENTS_H_
#define NEURONPROF_SRC_XPLANE_HOST_EVENTS_H_

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "proto/xplane.pb.h"
#include "src/xplane/xplane_visitor.h"

namespace neuronprof {
namespace xplane {

// Events of one line in nesting order (start, then longer first).
std::vector<int> SortedEventIndices(const tensorflow::profiler::XLine& line);

// The one step rule: a step is a host event with a non-zero _r stat that is
// not an operator (StepTrace's events). `root_level` is its _r stat,
// `is_operator` whether it has the framework-op stat.
inline bool IsStep(std::optional<int64_t> root_level, bool is_operator) {
  return root_level.value_or(0) != 0 && !is_operator;
}

// The step rule on a visitor, with the stat ids resolved once per plane; a
// step's step_num stat, when set, numbers it.
struct StepStatIds {
  explicit StepStatIds(const PlaneVisitor& plane);
  int64_t root = -1, framework = -1, step_num = -1;
};
bool IsStepEvent(const EventVisitor& event, const StepStatIds& ids);

// Planes whose events are a device runtime's calls on host threads: a
// plug-in's "/host:CPU-<TYPE>-runtime" (IsRuntimePlane) or CUPTI's
// "/host:CUPTI".
bool IsRuntimeCallsPlane(std::string_view plane_name);

}  // namespace xplane
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_XPLANE_HOST_EVENTS_H_
