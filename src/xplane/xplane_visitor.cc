#include "src/xplane/xplane_visitor.h"

#include "absl/strings/match.h"
#include "src/xplane/schema.h"

namespace neuronprof {
namespace xplane {

using tensorflow::profiler::XEvent;
using tensorflow::profiler::XEventMetadata;
using tensorflow::profiler::XLine;
using tensorflow::profiler::XPlane;
using tensorflow::profiler::XSpace;

std::string_view StatVisitor::Name() const { return plane_->StatName(Id()); }

std::optional<int64_t> StatVisitor::IntValue() const { return xplane::IntValue(stat_); }

std::optional<std::string_view> StatVisitor::StrValue() const {
  return xplane::StrValue(plane_->raw(), stat_);
}

std::string_view StatVisitor::TextValue(std::string* scratch) const {
  return xplane::TextValue(plane_->raw(), *stat_, scratch);
}

EventVisitor::EventVisitor(const PlaneVisitor& plane, const XLine& line, const XEvent& event)
    : plane_(&plane),
      line_(&line),
      event_(&event),
      metadata_(plane.EventMetadata(event.metadata_id())) {
  CountWork();
}

std::string_view EventVisitor::Name() const {
  return metadata_ == nullptr ? std::string_view() : std::string_view(metadata_->name());
}

std::string_view EventVisitor::DisplayName() const {
  if (metadata_ != nullptr && !metadata_->display_name().empty()) return metadata_->display_name();
  return Name();
}

std::optional<StatVisitor> EventVisitor::Stat(int64_t stat_id) const {
  if (stat_id < 0) return std::nullopt;
  for (const auto& stat : event_->stats()) {
    if (stat.metadata_id() == stat_id) return StatVisitor(*plane_, stat);
  }
  if (metadata_ != nullptr) {
    for (const auto& stat : metadata_->stats()) {
      if (stat.metadata_id() == stat_id) return StatVisitor(*plane_, stat);
    }
  }
  return std::nullopt;
}

std::optional<int64_t> EventVisitor::IntStat(int64_t stat_id) const {
  const auto stat = Stat(stat_id);
  return stat ? stat->IntValue() : std::nullopt;
}

std::optional<std::string_view> EventVisitor::StrStat(int64_t stat_id) const {
  const auto stat = Stat(stat_id);
  return stat ? stat->StrValue() : std::nullopt;
}

std::optional<StatVisitor> EventVisitor::StatNamed(std::string_view name) const {
  return Stat(plane_->StatId(name));
}

std::optional<int64_t> EventVisitor::IntStatNamed(std::string_view name) const {
  return IntStat(plane_->StatId(name));
}

std::optional<std::string_view> EventVisitor::StrStatNamed(std::string_view name) const {
  return StrStat(plane_->StatId(name));
}

std::string_view LineVisitor::DisplayName() const {
  return line_->display_name().empty() ? line_->name() : line_->display_name();
}

PlaneVisitor::PlaneVisitor(const XPlane& plane) : plane_(&plane) {
  stat_ids_.reserve(plane.stat_metadata_size());
  for (const auto& [id, metadata] : plane.stat_metadata()) {
    // Two metadata of one name (a crafted file): the smallest id, so the
    // answer does not depend on the map's order.
    auto [it, inserted] = stat_ids_.try_emplace(metadata.name(), id);
    if (!inserted && id < it->second) it->second = id;
  }
}

int64_t PlaneVisitor::NumEvents() const {
  int64_t events = 0;
  for (const auto& line : plane_->lines()) events += line.events_size();
  return events;
}

int64_t PlaneVisitor::StatId(std::string_view name) const {
  auto it = stat_ids_.find(name);
  return it == stat_ids_.end() ? -1 : it->second;
}

std::string_view PlaneVisitor::StatName(int64_t id) const {
  auto it = plane_->stat_metadata().find(id);
  return it == plane_->stat_metadata().end() ? std::string_view() : it->second.name();
}

const XEventMetadata* PlaneVisitor::EventMetadata(int64_t id) const {
  auto it = plane_->event_metadata().find(id);
  return it == plane_->event_metadata().end() ? nullptr : &it->second;
}

std::optional<StatVisitor> PlaneVisitor::PlaneStat(std::string_view name) const {
  const int64_t id = StatId(name);
  if (id < 0) return std::nullopt;
  for (const auto& stat : plane_->stats()) {
    if (stat.metadata_id() == id) return StatVisitor(*this, stat);
  }
  return std::nullopt;
}

bool IsHostPlane(const XPlane& plane) { return absl::StartsWith(plane.name(), "/host:"); }

bool IsRuntimePlane(const XPlane& plane) {
  return absl::StartsWith(plane.name(), std::string(kHostPlaneName) + "-") &&
         absl::EndsWith(plane.name(), kRuntimePlaneSuffix);
}

bool IsDevicePlane(const XPlane& plane) {
  return absl::StartsWith(plane.name(), kDevicePlanePrefix);
}

int64_t NumEvents(const XSpace& space) {
  int64_t events = 0;
  for (const XPlane& plane : space.planes()) {
    for (const auto& line : plane.lines()) events += line.events_size();
  }
  return events;
}

}  // namespace xplane
}  // namespace neuronprof
