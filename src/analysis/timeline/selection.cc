#include "src/analysis/timeline/selection.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "fmt/format.h"
#include "src/xplane/host_events.h"
#include "src/xplane/saturating.h"
#include "src/xplane/xplane_visitor.h"

namespace neuronprof {
namespace analysis {
namespace {

using tensorflow::profiler::XEvent;
using tensorflow::profiler::XSpace;

struct Window {
  int64_t begin_ps, end_ps;
  std::pair<int64_t, int64_t> steps;  // steps of other numbers are left out
  bool by_steps = false;
};

int64_t StartPs(const xplane::EventVisitor& event) {
  return SaturatingAdd(LineStartPs(event.line().timestamp_ns()), event.OffsetPs());
}

int64_t EndPs(const xplane::EventVisitor& event) {
  return SaturatingAdd(StartPs(event), std::max<int64_t>(0, event.DurationPs()));
}

// f(plane index, visitor, event visitor) for every event of the space.
template <typename F>
void ForEachEvent(const XSpace& space, F&& f) {
  for (int p = 0; p < space.planes_size(); ++p) {
    const xplane::PlaneVisitor plane(space.planes(p));
    const xplane::StepStatIds ids(plane);
    plane.ForEachEvent([&](const xplane::EventVisitor& event) { f(p, ids, event); });
  }
}

absl::StatusOr<Window> StepWindow(const XSpace& space, std::pair<int64_t, int64_t> range) {
  Window window{std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min(), range,
                true};
  int64_t selected = 0, lowest = std::numeric_limits<int64_t>::max(),
          highest = std::numeric_limits<int64_t>::min();
  ForEachEvent(space,
               [&](int p, const xplane::StepStatIds& ids, const xplane::EventVisitor& event) {
                 if (!xplane::IsHostPlane(space.planes(p)) || !xplane::IsStepEvent(event, ids))
                   return;
                 const std::optional<int64_t> number = event.IntStat(ids.step_num);
                 if (!number) return;
                 lowest = std::min(lowest, *number);
                 highest = std::max(highest, *number);
                 if (*number < range.first || *number > range.second) return;
                 ++selected;
                 window.begin_ps = std::min(window.begin_ps, StartPs(event));
                 window.end_ps = std::max(window.end_ps, EndPs(event));
               });
  if (selected == 0) {
    return absl::NotFoundError(
        lowest > highest
            ? std::string("the capture has no numbered steps (StepTrace events with step_num)")
            : fmt::format("no step numbered {}-{}: the capture's steps are numbered {}-{}",
                          range.first, range.second, lowest, highest));
  }
  return window;
}

int64_t FirstEventPs(const XSpace& space) {
  int64_t first = std::numeric_limits<int64_t>::max();
  ForEachEvent(space, [&](int, const xplane::StepStatIds&, const xplane::EventVisitor& event) {
    first = std::min(first, StartPs(event));
  });
  return first;
}

Window TimeWindow(int64_t first, std::pair<double, double> ms) {
  auto at = [&](double offset_ms) {
    const double ps = std::min(offset_ms * 1e9, 9.2e18);  // below int64's max
    return SaturatingAdd(first, static_cast<int64_t>(ps));
  };
  return Window{at(ms.first), at(ms.second), {}, false};
}

// "A-B" as (A, B), "A" as (A, A); absl's string_view (not std's in
// Debian's Abseil) for its number parsers.
std::pair<absl::string_view, absl::string_view> SplitRange(std::string_view text) {
  const absl::string_view all(text.data(), text.size());
  const size_t dash = all.find('-', 1);  // not a leading sign
  if (dash == absl::string_view::npos) return {all, all};
  return {all.substr(0, dash), all.substr(dash + 1)};
}

// Which events of a line the window keeps: those wholly inside it; by
// steps, not the steps of other numbers nor what is nested in them (a
// request that ran meanwhile on another thread, with its markers).
std::vector<bool> KeptEvents(const xplane::LineVisitor& line, const xplane::StepStatIds& ids,
                             bool host, const Window& window) {
  std::vector<bool> keep(line.NumEvents(), false);
  int64_t excluded_until = std::numeric_limits<int64_t>::min();
  for (int e : xplane::SortedEventIndices(line.raw())) {
    const xplane::EventVisitor event = line.Event(e);
    const int64_t start = StartPs(event), end = EndPs(event);
    if (start < window.begin_ps || end > window.end_ps) continue;
    if (window.by_steps && host) {
      if (start < excluded_until) continue;  // inside a step left out
      if (xplane::IsStepEvent(event, ids)) {
        const int64_t number = event.IntStat(ids.step_num).value_or(-1);
        if (number < window.steps.first || number > window.steps.second) {
          excluded_until = std::max(excluded_until, end);
          continue;
        }
      }
    }
    keep[e] = true;
  }
  return keep;
}

}  // namespace

absl::StatusOr<std::pair<int64_t, int64_t>> ParseStepRange(std::string_view text) {
  const auto [first, second] = SplitRange(text);
  int64_t a = 0, b = 0;
  if (!absl::SimpleAtoi(first, &a) || !absl::SimpleAtoi(second, &b) || a < 0 || b < a) {
    return absl::InvalidArgumentError(
        fmt::format("'{}' is not a step range A-B (step numbers, 0 <= A <= B)", text));
  }
  return std::make_pair(a, b);
}

absl::StatusOr<std::pair<double, double>> ParseWindowMs(std::string_view text) {
  const auto [first, second] = SplitRange(text);
  double a = 0, b = 0;
  if (!absl::SimpleAtod(first, &a) || !absl::SimpleAtod(second, &b) || !std::isfinite(a) ||
      !std::isfinite(b) || a < 0 || b < a) {
    return absl::InvalidArgumentError(
        fmt::format("'{}' is not a window A-B (milliseconds, 0 <= A <= B)", text));
  }
  return std::make_pair(a, b);
}

absl::StatusOr<Selected> Select(const XSpace& space, const Selection& selection) {
  if (selection.steps && selection.window_ms) {
    return absl::InvalidArgumentError("select steps or a window, not both");
  }
  if ((selection.steps && selection.steps->first > selection.steps->second) ||
      (selection.window_ms && !(selection.window_ms->first >= 0 &&
                                selection.window_ms->first <= selection.window_ms->second))) {
    return absl::InvalidArgumentError(
        "a selection's range must run from A to B >= A (and a "
        "window from A >= 0)");
  }
  Window window{};
  std::string what;
  if (selection.steps) {
    auto steps = StepWindow(space, *selection.steps);
    if (!steps.ok()) return steps.status();
    window = *steps;
    what = fmt::format("steps {}-{}", selection.steps->first, selection.steps->second);
  } else if (selection.window_ms) {
    window = TimeWindow(FirstEventPs(space), *selection.window_ms);
    what = fmt::format("window {}-{} ms", selection.window_ms->first, selection.window_ms->second);
  } else {
    return absl::InvalidArgumentError("no selection");
  }
  Selected out;
  out.space = space;
  for (int p = 0; p < space.planes_size(); ++p) {
    const xplane::PlaneVisitor plane(space.planes(p));
    const xplane::StepStatIds ids(plane);
    const bool host = xplane::IsHostPlane(space.planes(p));
    for (int l = 0; l < plane.NumLines(); ++l) {
      const std::vector<bool> keep = KeptEvents(plane.Line(l), ids, host, window);
      google::protobuf::RepeatedPtrField<XEvent> kept;
      auto* events = out.space.mutable_planes(p)->mutable_lines(l)->mutable_events();
      for (int e = 0; e < events->size(); ++e) {
        if (keep[e]) {
          kept.Add()->Swap(events->Mutable(e));
          ++out.kept_events;
        } else {
          ++out.left_out_events;
        }
      }
      events->Swap(&kept);
    }
  }
  const int64_t first = FirstEventPs(space);
  out.description = fmt::format(
      "{}: the {} events wholly inside {:.3f}-{:.3f} ms after the capture's first event ({} left "
      "out)",
      what, out.kept_events, SaturatingSub(window.begin_ps, first) / 1e9,
      SaturatingSub(window.end_ps, first) / 1e9, out.left_out_events);
  return out;
}

}  // namespace analysis
}  // namespace neuronprof
