// The one reader of XPlanes: a visitor over a plane's lines, events and
// stats (the shape of TSL's xplane_visitor.h). Stat names are resolved to
// metadata ids once per plane, so per-event lookups compare ids, not
// strings; event names come from the plane's metadata without copies.
// Analysis, export, tools and tests read planes through it; values are read
// by the one rule of stat_lookup.h (IntValue / StrValue / TextValue).
//
// Visitors are views: they hold pointers into the XPlane, which must
// outlive them and not change while they are used. Line, event and stat
// visitors also point at the PlaneVisitor they came from: keep it in a
// named variable, never a temporary (`PlaneVisitor(p).PlaneStat(...)`
// leaves the stat visitor dangling).
#ifndef NEURONPROF_SRC_XPLANE_XPLANE_VISITOR_H_
#define NEURONPROF_SRC_XPLANE_XPLANE_VISITOR_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "proto/xplane.pb.h"
#include "src/xplane/event_time.h"
#include "src/xplane/stat_lookup.h"
#include "src/xplane/work_count.h"

namespace neuronprof {
namespace xplane {

class PlaneVisitor;

// One stat of an event, a plane or an event's metadata.
class StatVisitor {
 public:
  StatVisitor(const PlaneVisitor& plane, const tensorflow::profiler::XStat& stat)
      : plane_(&plane), stat_(&stat) {}

  int64_t Id() const { return stat_->metadata_id(); }
  std::string_view Name() const;                     // "" when the plane has no such metadata
  std::optional<int64_t> IntValue() const;           // stat_lookup's rule
  std::optional<std::string_view> StrValue() const;  // strings and refs
  // Strings and refs as they are; numbers printed into *scratch.
  std::string_view TextValue(std::string* scratch) const;
  const tensorflow::profiler::XStat& raw() const { return *stat_; }

 private:
  const PlaneVisitor* plane_;
  const tensorflow::profiler::XStat* stat_;
};

// One event on a line.
class EventVisitor {
 public:
  EventVisitor(const PlaneVisitor& plane, const tensorflow::profiler::XLine& line,
               const tensorflow::profiler::XEvent& event);
  // With the event's metadata already found (plane.EventMetadata of its
  // metadata_id): for writers that resolve a plane's metadata once.
  EventVisitor(const PlaneVisitor& plane, const tensorflow::profiler::XLine& line,
               const tensorflow::profiler::XEvent& event,
               const tensorflow::profiler::XEventMetadata* metadata)
      : plane_(&plane), line_(&line), event_(&event), metadata_(metadata) {
    CountWork();
  }

  int64_t MetadataId() const { return event_->metadata_id(); }
  std::string_view Name() const;         // the metadata's name ("" if none)
  std::string_view DisplayName() const;  // display_name, else name
  const tensorflow::profiler::XEventMetadata* Metadata() const { return metadata_; }

  int64_t OffsetPs() const { return event_->offset_ps(); }
  int64_t DurationPs() const { return event_->duration_ps(); }
  // Start and end in ns, checked (nullopt for times a crafted file sets
  // out of int64 range or a negative duration).
  std::optional<EventTime> Time() const { return CheckedEventTime(*line_, *event_); }

  // The event's own stat with metadata id `stat_id`, else its metadata's;
  // nullopt when neither has it (or stat_id < 0).
  std::optional<StatVisitor> Stat(int64_t stat_id) const;
  std::optional<int64_t> IntStat(int64_t stat_id) const;
  std::optional<std::string_view> StrStat(int64_t stat_id) const;
  // By stat name: one hash lookup per call, for tools, tests and writers
  // that read a few stats of few events; loops over many events resolve
  // the id once with PlaneVisitor::StatId.
  std::optional<StatVisitor> StatNamed(std::string_view name) const;
  std::optional<int64_t> IntStatNamed(std::string_view name) const;
  std::optional<std::string_view> StrStatNamed(std::string_view name) const;

  // Every stat once: the event's own, then its metadata's that the event
  // does not override. f(const StatVisitor&).
  template <typename F>
  void ForEachStat(F&& f) const;
  static constexpr int kFewStats = 8;  // ForEachStat compares these pairwise

  const tensorflow::profiler::XEvent& raw() const { return *event_; }
  const tensorflow::profiler::XLine& line() const { return *line_; }

 private:
  const PlaneVisitor* plane_;
  const tensorflow::profiler::XLine* line_;
  const tensorflow::profiler::XEvent* event_;
  const tensorflow::profiler::XEventMetadata* metadata_;  // nullptr if absent
};

// One line (a thread, a stream).
class LineVisitor {
 public:
  LineVisitor(const PlaneVisitor& plane, const tensorflow::profiler::XLine& line)
      : plane_(&plane), line_(&line) {}

  int64_t Id() const { return line_->id(); }
  int64_t DisplayId() const { return line_->display_id(); }
  std::string_view Name() const { return line_->name(); }
  std::string_view DisplayName() const;  // display_name, else name
  int64_t TimestampNs() const { return line_->timestamp_ns(); }
  int NumEvents() const { return line_->events_size(); }
  EventVisitor Event(int index) const {
    return EventVisitor(*plane_, *line_, line_->events(index));
  }

  template <typename F>
  void ForEachEvent(F&& f) const {  // f(const EventVisitor&)
    for (const auto& event : line_->events()) f(EventVisitor(*plane_, *line_, event));
  }

  const tensorflow::profiler::XLine& raw() const { return *line_; }

 private:
  const PlaneVisitor* plane_;
  const tensorflow::profiler::XLine* line_;
};

// One plane. Construction indexes its stat metadata (names both ways).
class PlaneVisitor {
 public:
  explicit PlaneVisitor(const tensorflow::profiler::XPlane& plane);
  PlaneVisitor(const PlaneVisitor&) = delete;  // Line/event visitors point here.
  PlaneVisitor& operator=(const PlaneVisitor&) = delete;

  int64_t Id() const { return plane_->id(); }
  std::string_view Name() const { return plane_->name(); }
  int NumLines() const { return plane_->lines_size(); }
  int64_t NumEvents() const;  // over every line

  // The metadata id of stat `name`, or -1 when the plane has none.
  int64_t StatId(std::string_view name) const;
  std::string_view StatName(int64_t id) const;  // "" when absent
  const tensorflow::profiler::XEventMetadata* EventMetadata(int64_t id) const;

  // The plane's own stat named `name`.
  std::optional<StatVisitor> PlaneStat(std::string_view name) const;
  template <typename F>
  void ForEachPlaneStat(F&& f) const {  // f(const StatVisitor&)
    for (const auto& stat : plane_->stats()) f(StatVisitor(*this, stat));
  }

  LineVisitor Line(int index) const { return LineVisitor(*this, plane_->lines(index)); }
  template <typename F>
  void ForEachLine(F&& f) const {  // f(const LineVisitor&)
    for (const auto& line : plane_->lines()) f(LineVisitor(*this, line));
  }
  template <typename F>
  void ForEachEvent(F&& f) const {  // f(const EventVisitor&), line by line
    ForEachLine([&](const LineVisitor& line) { line.ForEachEvent(f); });
  }

  const tensorflow::profiler::XPlane& raw() const { return *plane_; }

 private:
  const tensorflow::profiler::XPlane* plane_;
  absl::flat_hash_map<std::string_view, int64_t> stat_ids_;
};

// Planes of a space (FindPlane is in xplane_builder.h).
bool IsHostPlane(const tensorflow::profiler::XPlane& plane);    // "/host:..."
bool IsDevicePlane(const tensorflow::profiler::XPlane& plane);  // "/device:..."
// A device runtime's calls: "/host:CPU-<TYPE>-runtime" (a host plane).
bool IsRuntimePlane(const tensorflow::profiler::XPlane& plane);
int64_t NumEvents(const tensorflow::profiler::XSpace& space);

template <typename F>
void EventVisitor::ForEachStat(F&& f) const {
  for (const auto& stat : event_->stats()) f(StatVisitor(*plane_, stat));
  if (metadata_ == nullptr || metadata_->stats().empty()) return;
  const int own = event_->stats_size();
  CountWork(own + metadata_->stats_size());
  if (own <= kFewStats) {
    for (const auto& stat : metadata_->stats()) {
      bool overridden = false;
      for (const auto& mine : event_->stats()) {
        overridden |= mine.metadata_id() == stat.metadata_id();
      }
      if (!overridden) f(StatVisitor(*plane_, stat));
    }
    return;
  }
  // Many stats of its own (a crafted event): a set, not a search per stat.
  absl::flat_hash_set<int64_t> ids;
  ids.reserve(own);
  for (const auto& mine : event_->stats()) ids.insert(mine.metadata_id());
  for (const auto& stat : metadata_->stats()) {
    if (!ids.contains(stat.metadata_id())) f(StatVisitor(*plane_, stat));
  }
}

}  // namespace xplane
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_XPLANE_XPLANE_VISITOR_H_
