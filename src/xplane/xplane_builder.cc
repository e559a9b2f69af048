#include "src/xplane/xplane_builder.h"

#include "src/xplane/schema.h"
#include "src/xplane/stat_lookup.h"
#include "src/xplane/utf8.h"
#include "src/xplane/xplane_visitor.h"

namespace neuronprof {
namespace xplane {

XPlane* FindOrAddPlane(XSpace* space, std::string_view raw_name) {
  std::string scratch;
  const std::string_view name = utf8::Valid(raw_name, &scratch);
  for (XPlane& plane : *space->mutable_planes()) {
    if (plane.name() == name) return &plane;
  }
  XPlane* plane = space->add_planes();
  plane->set_id(space->planes_size() - 1);
  plane->set_name(std::string(name));
  return plane;
}

const XPlane* FindPlane(const XSpace& space, std::string_view name) {
  for (const XPlane& plane : space.planes()) {
    if (plane.name() == name) return &plane;
  }
  return nullptr;
}

namespace {
int64_t TaskEnvironmentTime(const XSpace& space, std::string_view stat_name) {
  const XPlane* plane = FindPlane(space, kTaskEnvironmentPlaneName);
  if (plane == nullptr) return 0;
  const PlaneVisitor visitor(*plane);  // Outlives the stat visitor.
  const auto stat = visitor.PlaneStat(stat_name);
  return stat ? stat->IntValue().value_or(0) : 0;
}
}  // namespace

int64_t ProfileStartEpochNs(const XSpace& space) {
  return TaskEnvironmentTime(space, kProfileStartTimeStat);
}

int64_t ProfileStopEpochNs(const XSpace& space) {
  return TaskEnvironmentTime(space, kProfileStopTimeStat);
}

void SetProfileTimes(XSpace* space, int64_t start_epoch_ns, int64_t stop_epoch_ns) {
  XPlane* environment = FindOrAddPlane(space, kTaskEnvironmentPlaneName);
  environment->clear_stats();  // Set, not appended: a later call moves the times.
  XPlaneBuilder plane(environment);
  plane.AddPlaneStat(kProfileStartTimeStat, static_cast<uint64_t>(start_epoch_ns));
  plane.AddPlaneStat(kProfileStopTimeStat, static_cast<uint64_t>(stop_epoch_ns));
}

XPlaneBuilder::XPlaneBuilder(XPlane* plane) : plane_(plane) {
  for (const auto& [id, metadata] : plane->event_metadata()) {
    // Metadata with stats is shared by some events only, never a name's.
    if (metadata.stats_size() == 0) event_ids_.emplace(metadata.name(), id);
  }
  for (const auto& [id, metadata] : plane->stat_metadata()) {
    stat_ids_.emplace(metadata.name(), id);
  }
}

int64_t XPlaneBuilder::EventMetadataId(std::string_view raw_name) {
  std::string scratch;
  const std::string_view name = utf8::Valid(raw_name, &scratch);
  auto it = event_ids_.find(absl::string_view(name.data(), name.size()));
  if (it != event_ids_.end()) return it->second;
  const int64_t id = AddEventMetadata(name)->id();
  event_ids_.emplace(std::string(name), id);
  return id;
}

XEventMetadata* XPlaneBuilder::NewEventMetadata(std::string_view raw_name) {
  std::string scratch;
  return AddEventMetadata(utf8::Valid(raw_name, &scratch));
}

XEventMetadata* XPlaneBuilder::AddEventMetadata(std::string_view valid_name) {
  // Id 0 stays unused, as in TSL; a file read back may have gaps in its ids.
  auto* all = plane_->mutable_event_metadata();
  int64_t id = static_cast<int64_t>(all->size()) + 1;
  while (all->count(id) != 0) ++id;
  XEventMetadata& metadata = (*all)[id];
  metadata.set_id(id);
  metadata.set_name(std::string(valid_name));
  return &metadata;
}

int64_t XPlaneBuilder::StatMetadataId(std::string_view raw_name) {
  std::string scratch;
  const std::string_view name = utf8::Valid(raw_name, &scratch);
  auto it = stat_ids_.find(absl::string_view(name.data(), name.size()));
  if (it != stat_ids_.end()) return it->second;
  const int64_t id = static_cast<int64_t>(plane_->stat_metadata_size()) + 1;
  auto& metadata = (*plane_->mutable_stat_metadata())[id];
  metadata.set_id(id);
  metadata.set_name(std::string(name));
  stat_ids_.emplace(std::string(name), id);
  return id;
}

XLine* XPlaneBuilder::AddLine(int64_t id, std::string_view name, int64_t timestamp_ns) {
  XLine* line = plane_->add_lines();
  line->set_id(id);
  line->set_display_id(id);
  line->set_name(utf8::ToValid(name));
  line->set_timestamp_ns(timestamp_ns);
  return line;
}

XEvent* XPlaneBuilder::AddEvent(XLine* line, int64_t metadata_id, int64_t offset_ps,
                                int64_t duration_ps) {
  XEvent* event = line->add_events();
  event->set_metadata_id(metadata_id);
  event->set_offset_ps(offset_ps);
  event->set_duration_ps(duration_ps);
  return event;
}

XStat* XPlaneBuilder::NewStat(google::protobuf::RepeatedPtrField<XStat>* stats,
                              std::string_view name) {
  XStat* stat = stats->Add();
  stat->set_metadata_id(StatMetadataId(name));
  return stat;
}

void XPlaneBuilder::AddStat(XEvent* event, std::string_view name, int64_t value) {
  NewStat(event->mutable_stats(), name)->set_int64_value(value);
}
void XPlaneBuilder::AddStat(XEvent* event, std::string_view name, uint64_t value) {
  NewStat(event->mutable_stats(), name)->set_uint64_value(value);
}
void XPlaneBuilder::AddStat(XEvent* event, std::string_view name, double value) {
  NewStat(event->mutable_stats(), name)->set_double_value(value);
}
void XPlaneBuilder::AddStat(XEvent* event, std::string_view name, std::string_view value) {
  NewStat(event->mutable_stats(), name)->set_str_value(utf8::ToValid(value));
}
void XPlaneBuilder::AddRefStat(XEvent* event, std::string_view name, std::string_view value) {
  XStat* stat = NewStat(event->mutable_stats(), name);
  stat->set_ref_value(static_cast<uint64_t>(StatMetadataId(value)));
}
void XPlaneBuilder::AddPlaneStat(std::string_view name, int64_t value) {
  NewStat(plane_->mutable_stats(), name)->set_int64_value(value);
}
void XPlaneBuilder::AddPlaneStat(std::string_view name, uint64_t value) {
  NewStat(plane_->mutable_stats(), name)->set_uint64_value(value);
}
void XPlaneBuilder::AddPlaneStat(std::string_view name, std::string_view value) {
  NewStat(plane_->mutable_stats(), name)->set_str_value(utf8::ToValid(value));
}

void AddWarning(XSpace* space, std::string_view text) { space->add_warnings(utf8::ToValid(text)); }

void AddError(XSpace* space, std::string_view text) { space->add_errors(utf8::ToValid(text)); }

}  // namespace xplane
}  // namespace neuronprof
