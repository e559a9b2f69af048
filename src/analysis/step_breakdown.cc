#include "src/analysis/step_breakdown.h"

#include <algorithm>
#include <array>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "src/analysis/device_attribution.h"
#include "src/xplane/saturating.h"
#include "src/xplane/names.h"
#include "src/xplane/xplane_visitor.h"

namespace neuronprof {
namespace analysis {
namespace {

using tensorflow::profiler::XPlane;
using tensorflow::profiler::XSpace;

struct Interval {
  int64_t start, end;
  int category;  // higher wins where intervals overlap
};

// Time in [begin, end) covered by each category, each instant given to the
// highest category active there.
template <size_t N>
std::array<int64_t, N> Sweep(const std::vector<Interval>& intervals, int64_t begin, int64_t end) {
  std::vector<std::pair<int64_t, int>> edges;  // (time, +-(category + 1))
  for (const Interval& in : intervals) {
    const int64_t s = std::max(in.start, begin), e = std::min(in.end, end);
    if (s >= e) continue;
    edges.push_back({s, in.category + 1});
    edges.push_back({e, -(in.category + 1)});
  }
  std::sort(edges.begin(), edges.end());
  std::array<int64_t, N> covered{};
  std::array<int, N> active{};
  int64_t at = begin;
  for (const auto& [time, delta] : edges) {
    for (int c = static_cast<int>(N) - 1; c >= 0; --c) {
      if (active[c] > 0) {
        covered[c] = SaturatingAdd(covered[c], SaturatingSub(time, at));
        break;
      }
    }
    at = time;
    active[std::abs(delta) - 1] += delta > 0 ? 1 : -1;
  }
  return covered;
}

enum Category { kMarker, kOtherOp, kForward, kBackward, kCategories };

}  // namespace

StepStatIds::StepStatIds(const xplane::PlaneVisitor& plane)
    : root(plane.StatId(xplane::kRootLevelStat)),
      framework(plane.StatId(xplane::kOpFrameworkStat)),
      step_num(plane.StatId(xplane::kStepNumStat)) {}

bool IsStepEvent(const xplane::EventVisitor& event, const StepStatIds& ids) {
  return event.IntStat(ids.root).value_or(0) != 0 && !event.Stat(ids.framework);
}

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
  for (const auto& [kind, intervals] : device_by_kind) {
    device_all.insert(device_all.end(), intervals.begin(), intervals.end());
  }

  std::vector<StepBreakdown> steps;
  for (int p = 0; p < space.planes_size(); ++p) {
    if (!xplane::IsHostPlane(space.planes(p))) continue;
    const xplane::PlaneVisitor plane(space.planes(p));
    const StepStatIds ids(plane);
    // Operators of this plane by category.
    std::vector<Interval> op_intervals;
    int64_t longest_op = 0;
    for (const OperatorEvent& op : ops.ops) {
      if (op.plane != p) continue;
      const int category = op.direction == "bprop"   ? kBackward
                           : op.direction == "fprop" ? kForward
                                                     : kOtherOp;
      op_intervals.push_back({op.start_ps, SaturatingAdd(op.start_ps, op.duration_ps), category});
      longest_op = std::max(longest_op, op.duration_ps);
    }
    std::sort(op_intervals.begin(), op_intervals.end(),
              [](const Interval& a, const Interval& b) { return a.start < b.start; });
    for (int l = 0; l < plane.NumLines(); ++l) {
      const xplane::LineVisitor line = plane.Line(l);
      const int64_t line_ps = LineStartPs(line.TimestampNs());
      const std::vector<int> order = SortedEventIndices(line.raw());
      for (size_t i = 0; i < order.size(); ++i) {
        const xplane::EventVisitor step_event = line.Event(order[i]);
        if (!IsStepEvent(step_event, ids)) continue;
        StepBreakdown step;
        const std::string name(step_event.Name());
        const std::optional<int64_t> step_num = step_event.IntStat(ids.step_num);
        step.name = step_num ? absl::StrCat(name, " ", *step_num) : name;
        step.thread = line.Id();
        step.start_ps = SaturatingAdd(line_ps, step_event.OffsetPs());
        step.duration_ps = step_event.DurationPs();
        const int64_t end = SaturatingAdd(step.start_ps, step.duration_ps);
        // Markers nested in the step on its own line (the sorted order puts
        // them right after it).
        // Only ops that can overlap the window (starts are sorted).
        auto first = std::lower_bound(
            op_intervals.begin(), op_intervals.end(), SaturatingSub(step.start_ps, longest_op),
            [](const Interval& a, int64_t t) { return a.start < t; });
        std::vector<Interval> intervals;
        for (auto it = first; it != op_intervals.end() && it->start < end; ++it) {
          intervals.push_back(*it);
        }
        for (size_t j = i + 1; j < order.size(); ++j) {
          const xplane::EventVisitor inner = line.Event(order[j]);
          const int64_t s = SaturatingAdd(line_ps, inner.OffsetPs());
          if (s >= end) break;
          if (inner.Stat(ids.framework)) continue;
          intervals.push_back({s, SaturatingAdd(s, inner.DurationPs()), kMarker});
        }
        const auto covered = Sweep<kCategories>(intervals, step.start_ps, end);
        step.backward_ps = covered[kBackward];
        step.forward_ps = covered[kForward];
        step.other_ops_ps = covered[kOtherOp];
        step.markers_ps = covered[kMarker];
        step.idle_ps = step.duration_ps;
        for (int64_t busy : {step.backward_ps, step.forward_ps, step.other_ops_ps,
                             step.markers_ps}) {
          step.idle_ps = SaturatingSub(step.idle_ps, busy);
        }
        step.has_device = has_device;
        if (has_device) {
          step.device_busy_ps = Sweep<1>(device_all, step.start_ps, end)[0];
          for (const auto& [kind, list] : device_by_kind) {
            step.device_kind_ps[kind] = Sweep<1>(list, step.start_ps, end)[0];
          }
        }
        steps.push_back(std::move(step));
      }
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
    if (event.launch_ps >= 0) launches[event.launch_thread].push_back({event.launch_ps, event.duration_ps});
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
