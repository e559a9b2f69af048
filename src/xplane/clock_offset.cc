#include "src/xplane/clock_offset.h"

#include <string>

#include "src/xplane/saturating.h"
#include "src/xplane/schema.h"
#include "src/xplane/xplane_builder.h"
#include "src/xplane/xplane_visitor.h"

namespace neuronprof {
namespace xplane {
namespace {

bool IsClockStat(const std::string& name) {
  return name == kClockAlignmentStat || name == kClockOffsetStat ||
         name == kClockOffsetUncertaintyStat;
}

// The plane's stat named `name` (nullptr if none).
XStat* FindStat(XPlane* plane, std::string_view name) {
  for (XStat& stat : *plane->mutable_stats()) {
    auto it = plane->stat_metadata().find(stat.metadata_id());
    if (it != plane->stat_metadata().end() && it->second.name() == name) return &stat;
  }
  return nullptr;
}

void ShiftTimeStat(XPlane* plane, std::string_view name, int64_t offset_ns) {
  XStat* stat = FindStat(plane, name);
  if (stat == nullptr) return;
  // TSL and neuronprof write uint64; int64 from other writers is kept so.
  if (stat->value_case() == XStat::kUint64Value && stat->uint64_value() != 0) {
    stat->set_uint64_value(static_cast<uint64_t>(
        SaturatingSub(static_cast<int64_t>(stat->uint64_value()), offset_ns)));
  } else if (stat->value_case() == XStat::kInt64Value && stat->int64_value() != 0) {
    stat->set_int64_value(SaturatingSub(stat->int64_value(), offset_ns));
  }
}

}  // namespace

void RecordClockOffset(const std::optional<ClockOffset>& offset, XPlane* task_environment) {
  // Set, not appended: drop what an earlier call recorded.
  auto* stats = task_environment->mutable_stats();
  for (int i = stats->size() - 1; i >= 0; --i) {
    auto it = task_environment->stat_metadata().find(stats->Get(i).metadata_id());
    if (it != task_environment->stat_metadata().end() && IsClockStat(it->second.name())) {
      stats->DeleteSubrange(i, 1);
    }
  }
  XPlaneBuilder plane(task_environment);
  if (!offset) {
    plane.AddPlaneStat(kClockAlignmentStat, std::string_view(kClockUnmeasured));
    return;
  }
  ShiftTimeStat(task_environment, kProfileStartTimeStat, offset->offset_ns);
  ShiftTimeStat(task_environment, kProfileStopTimeStat, offset->offset_ns);
  plane.AddPlaneStat(kClockAlignmentStat, std::string_view(kClockAlignedToClient));
  plane.AddPlaneStat(kClockOffsetStat, offset->offset_ns);
  plane.AddPlaneStat(kClockOffsetUncertaintyStat, offset->uncertainty_ns);
}

void AlignSpaceClock(const std::optional<ClockOffset>& offset, XSpace* space) {
  RecordClockOffset(offset, FindOrAddPlane(space, kTaskEnvironmentPlaneName));
  if (!offset) return;
  for (XPlane& plane : *space->mutable_planes()) {
    for (XLine& line : *plane.mutable_lines()) {
      if (line.timestamp_ns() >= kEpochLineTimeNs) {
        line.set_timestamp_ns(SaturatingSub(line.timestamp_ns(), offset->offset_ns));
      }
    }
  }
}

std::optional<ClockOffset> ReadClockOffset(const XSpace& space) {
  const XPlane* plane = FindPlane(space, kTaskEnvironmentPlaneName);
  if (plane == nullptr) return std::nullopt;
  const PlaneVisitor visitor(*plane);
  const auto alignment = visitor.PlaneStat(kClockAlignmentStat);
  if (!alignment || alignment->StrValue().value_or("") != kClockAlignedToClient) {
    return std::nullopt;
  }
  ClockOffset offset;
  if (const auto stat = visitor.PlaneStat(kClockOffsetStat)) {
    offset.offset_ns = stat->IntValue().value_or(0);
  }
  if (const auto stat = visitor.PlaneStat(kClockOffsetUncertaintyStat)) {
    offset.uncertainty_ns = stat->IntValue().value_or(0);
  }
  return offset;
}

}  // namespace xplane
}  // namespace neuronprof
