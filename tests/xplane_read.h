// Short reads of XPlanes for test assertions, all through the one reader
// (src/xplane/xplane_visitor.h), so tests see names and stats exactly as
// analysis and the exporters do.
#ifndef NEURONPROF_TESTS_XPLANE_READ_H_
#define NEURONPROF_TESTS_XPLANE_READ_H_

#include <string>
#include <string_view>

#include "proto/xplane.pb.h"
#include "src/xplane/xplane_visitor.h"

namespace neuronprof {
namespace testing {

inline std::string EventName(const tensorflow::profiler::XPlane& plane,
                             const tensorflow::profiler::XEvent& event) {
  const auto* metadata = xplane::PlaneVisitor(plane).EventMetadata(event.metadata_id());
  return metadata == nullptr ? "" : metadata->name();
}

inline std::string StatName(const tensorflow::profiler::XPlane& plane,
                            const tensorflow::profiler::XStat& stat) {
  return std::string(xplane::PlaneVisitor(plane).StatName(stat.metadata_id()));
}

// The event's stat `name` (its own, else its metadata's); nullptr if absent.
inline const tensorflow::profiler::XStat* FindStat(const tensorflow::profiler::XPlane& plane,
                                                   const tensorflow::profiler::XEvent& event,
                                                   std::string_view name) {
  const xplane::PlaneVisitor visitor(plane);
  tensorflow::profiler::XLine no_line;
  const auto stat = xplane::EventVisitor(visitor, no_line, event).StatNamed(name);
  return stat ? &stat->raw() : nullptr;
}

// The plane's own stat `name`; nullptr if absent.
inline const tensorflow::profiler::XStat* FindPlaneStat(const tensorflow::profiler::XPlane& plane,
                                                        std::string_view name) {
  const xplane::PlaneVisitor visitor(plane);
  const auto stat = visitor.PlaneStat(name);
  return stat ? &stat->raw() : nullptr;
}

// The event's stat `name` as text (numbers printed), or "<absent>".
inline std::string StatText(const tensorflow::profiler::XPlane& plane,
                            const tensorflow::profiler::XEvent& event, std::string_view name) {
  const xplane::PlaneVisitor visitor(plane);
  tensorflow::profiler::XLine no_line;
  const auto stat = xplane::EventVisitor(visitor, no_line, event).StatNamed(name);
  std::string scratch;
  return stat ? std::string(stat->TextValue(&scratch)) : "<absent>";
}

// The plane's own stat `name` as text, or "<absent>".
inline std::string PlaneStatText(const tensorflow::profiler::XPlane& plane, std::string_view name) {
  const xplane::PlaneVisitor visitor(plane);  // The stat visitor points into it.
  const auto stat = visitor.PlaneStat(name);
  std::string scratch;
  return stat ? std::string(stat->TextValue(&scratch)) : "<absent>";
}

// True if an event of `plane` is named `name` (or starts with it).
inline bool HasEvent(const tensorflow::profiler::XPlane& plane, std::string_view name,
                     bool prefix = false) {
  bool found = false;
  xplane::PlaneVisitor(plane).ForEachEvent([&](const xplane::EventVisitor& event) {
    found |= prefix ? event.Name().substr(0, name.size()) == name : event.Name() == name;
  });
  return found;
}

// True if any plane of `space` has such an event.
inline bool HasEvent(const tensorflow::profiler::XSpace& space, std::string_view name,
                     bool prefix = false) {
  for (const auto& plane : space.planes()) {
    if (HasEvent(plane, name, prefix)) return true;
  }
  return false;
}

// True if `plane` knows a stat named `name`.
inline bool HasStat(const tensorflow::profiler::XPlane& plane, std::string_view name) {
  return xplane::PlaneVisitor(plane).StatId(name) >= 0;
}

inline const tensorflow::profiler::XLine* FindLine(const tensorflow::profiler::XPlane& plane,
                                                   int64_t id) {
  for (const auto& line : plane.lines()) {
    if (line.id() == id) return &line;
  }
  return nullptr;
}

}  // namespace testing
}  // namespace neuronprof

#endif  // NEURONPROF_TESTS_XPLANE_READ_H_
