#include "src/analysis/ops/step_breakdown.h"

#include <algorithm>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "src/analysis/ops/device_attribution.h"
#include "src/analysis/timeline/interval_coverage.h"
#include "src/xplane/host_events.h"
#include "src/xplane/saturating.h"
#include "src/xplane/schema.h"
#include "src/xplane/work_count.h"
#include "src/xplane/xplane_visitor.h"

namespace neuronprof {
namespace analysis {
namespace {

using tensorflow::profiler::XPlane;
using tensorflow::profiler::XSpace;

// The markers that follow a step in its line's nesting order (so start at
// or after it): their union as a stack of disjoint segments, earliest on
// top, filled from the line's last event backwards so that each step reads
// it once the events after it are in. Each segment carries the time no
// operator covers, summed from the bottom: a step's marker time is a
// difference of two sums, not a scan of its window.
class FollowingMarkers {
 public:
  explicit FollowingMarkers(const Coverage& ops) : ops_(ops) {}

  void Add(int64_t start, int64_t end) {
    if (start >= end) return;
    while (!stack_.empty() && stack_.back().start <= end) {
      xplane::CountWork();
      end = std::max(end, stack_.back().end);
      stack_.pop_back();
    }
    const uint64_t below = stack_.empty() ? 0 : stack_.back().free_sum;
    stack_.push_back({start, end, below + ops_.Free(start, end)});
  }

  // Marker time in [begin, end) that no operator covers; every marker in
  // the stack starts at or after `begin`.
  int64_t FreeTime(int64_t begin, int64_t end) const {
    if (begin >= end) return 0;
    xplane::CountWork();
    // Starts fall from bottom to top: those before `end` are the top ones.
    auto first = std::partition_point(stack_.begin(), stack_.end(),
                                      [&](const Segment& s) { return s.start >= end; });
    if (first == stack_.end()) return 0;
    const uint64_t below = first == stack_.begin() ? 0 : (first - 1)->free_sum;
    uint64_t time = stack_.back().free_sum - below;
    if (first->end > end) time -= ops_.Free(end, first->end);
    return ClampSpan(time);
  }

 private:
  struct Segment {
    int64_t start, end;
    uint64_t free_sum;  // operator-free time of this segment and those below
  };
  const Coverage& ops_;
  std::vector<Segment> stack_;
};

// Higher wins where ops overlap (an op on one thread during another's).
enum Category { kMarker, kOtherOp, kForward, kLoss, kOptimizer, kBackward, kCategories };

}  // namespace

std::vector<StepBreakdown> BuildStepBreakdown(const XSpace& space, const OperatorEvents& ops) {
  // Device activity, per kind, over the whole space.
  std::map<std::string, std::vector<Interval>> device_by_kind;
  bool has_device = false;
  for (const XPlane& raw : space.planes()) {
    if (!xplane::IsDevicePlane(raw)) continue;
    has_device = true;
    const xplane::PlaneVisitor plane(raw);
    plane.ForEachEvent([&](const xplane::EventVisitor& event) {
      const int64_t start =
          SaturatingAdd(LineStartPs(event.line().timestamp_ns()), event.OffsetPs());
      device_by_kind[DeviceEventKind(plane, event)].push_back(
          {start, SaturatingAdd(start, event.DurationPs()), 0});
    });
  }
  std::vector<Interval> device_all;
  std::map<std::string, Coverage> device_kinds;
  for (const auto& [kind, intervals] : device_by_kind) {
    device_all.insert(device_all.end(), intervals.begin(), intervals.end());
    device_kinds.emplace(kind, Coverage(intervals, 1));
  }
  const Coverage device(device_all, 1);

  std::vector<StepBreakdown> steps;
  for (int p = 0; p < space.planes_size(); ++p) {
    if (!xplane::IsHostPlane(space.planes(p))) continue;
    const xplane::PlaneVisitor plane(space.planes(p));
    const xplane::StepStatIds ids(plane);
    // Operators of this plane by category.
    std::vector<Interval> op_intervals;
    for (const OperatorEvent& op : ops.ops) {
      if (op.plane != p) continue;
      const int category = op.direction == "bprop"       ? kBackward
                           : op.direction == "optimizer" ? kOptimizer
                           : op.direction == "loss"      ? kLoss
                           : op.direction == "fprop"     ? kForward
                                                         : kOtherOp;
      op_intervals.push_back({op.start_ps, SaturatingAdd(op.start_ps, op.duration_ps), category});
    }
    const Coverage op_time(op_intervals, kCategories);
    for (int l = 0; l < plane.NumLines(); ++l) {
      const xplane::LineVisitor line = plane.Line(l);
      const int64_t line_ps = LineStartPs(line.TimestampNs());
      const std::vector<int> order = xplane::SortedEventIndices(line.raw());
      // Markers nested in a step on its own line follow it in this order.
      FollowingMarkers markers(op_time);
      std::vector<StepBreakdown> line_steps;
      for (size_t i = order.size(); i-- > 0;) {
        const xplane::EventVisitor event = line.Event(order[i]);
        const int64_t start = SaturatingAdd(line_ps, event.OffsetPs());
        const int64_t end = SaturatingAdd(start, event.DurationPs());
        if (xplane::IsStepEvent(event, ids)) {
          StepBreakdown step;
          const std::string name(event.Name());
          const std::optional<int64_t> step_num = event.IntStat(ids.step_num);
          step.name = step_num ? absl::StrCat(name, " ", *step_num) : name;
          step.thread = line.Id();
          step.start_ps = start;
          step.duration_ps = event.DurationPs();
          const std::vector<int64_t> covered = op_time.Covered(start, end);
          step.backward_ps = covered[kBackward];
          step.forward_ps = covered[kForward];
          step.loss_ps = covered[kLoss];
          step.optimizer_ps = covered[kOptimizer];
          step.other_ops_ps = covered[kOtherOp];
          step.markers_ps = markers.FreeTime(start, end);
          step.idle_ps = step.duration_ps;
          for (int64_t busy : {step.backward_ps, step.forward_ps, step.loss_ps, step.optimizer_ps,
                               step.other_ops_ps, step.markers_ps}) {
            step.idle_ps = SaturatingSub(step.idle_ps, busy);
          }
          step.has_device = has_device;
          if (has_device) {
            step.device_busy_ps = device.Busy(start, end);
            for (const auto& [kind, time] : device_kinds) {
              step.device_kind_ps[kind] = time.Busy(start, end);
            }
          }
          line_steps.push_back(std::move(step));
        }
        if (!event.Stat(ids.framework)) markers.Add(start, end);
      }
      steps.insert(steps.end(), std::make_move_iterator(line_steps.rbegin()),
                   std::make_move_iterator(line_steps.rend()));
    }
  }
  std::stable_sort(steps.begin(), steps.end(), [](const StepBreakdown& a, const StepBreakdown& b) {
    return a.start_ps < b.start_ps;
  });
  return steps;
}

void AddLaunchedDeviceTime(const DeviceEvents& device, std::vector<StepBreakdown>& steps) {
  // Per thread: launches in time order with the running sum of device time.
  std::map<int64_t, std::vector<std::pair<int64_t, int64_t>>> launches;  // (time, duration)
  for (const DeviceOpEvent& event : device.events) {
    if (event.launch_ps >= 0)
      launches[event.launch_thread].push_back({event.launch_ps, event.duration_ps});
  }
  std::map<int64_t, std::vector<int64_t>> prefix;  // prefix[t][i]: time of the first i
  for (auto& [thread, list] : launches) {
    std::sort(list.begin(), list.end());
    std::vector<int64_t>& sums = prefix[thread];
    sums.push_back(0);
    for (const auto& launch : list) sums.push_back(SaturatingAdd(sums.back(), launch.second));
  }
  for (StepBreakdown& step : steps) {
    auto it = launches.find(step.thread);
    if (it == launches.end()) continue;
    const auto& list = it->second;
    auto index = [&](int64_t time) {
      return std::lower_bound(list.begin(), list.end(), std::make_pair(time, INT64_MIN)) -
             list.begin();
    };
    const auto& sums = prefix[step.thread];
    step.launched_device_ps = SaturatingSub(
        sums[index(SaturatingAdd(step.start_ps, step.duration_ps))], sums[index(step.start_ps)]);
  }
}

}  // namespace analysis
}  // namespace neuronprof
