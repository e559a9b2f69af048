// Small builders over the XSpace protobuf: interned event and stat metadata
// per plane, lines, events and typed stats.
//
// Every string a builder stores (plane, line, event and stat names, string
// stat values, warnings) is valid UTF-8: proto3 `string` fields with other
// bytes make the whole file unreadable (C++ and Python protobuf refuse to
// parse it), so ill-formed bytes become U+FFFD (utf8.h) on the way in.
#ifndef NEURONPROF_SRC_XPLANE_XPLANE_BUILDER_H_
#define NEURONPROF_SRC_XPLANE_XPLANE_BUILDER_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "proto/xplane.pb.h"

namespace neuronprof {
namespace xplane {

using tensorflow::profiler::XEvent;
using tensorflow::profiler::XEventMetadata;
using tensorflow::profiler::XLine;
using tensorflow::profiler::XPlane;
using tensorflow::profiler::XSpace;
using tensorflow::profiler::XStat;

// Finds the plane named `name` (made valid UTF-8) in `space`, or adds it.
XPlane* FindOrAddPlane(XSpace* space, std::string_view name);
const XPlane* FindPlane(const XSpace& space, std::string_view name);

// Epoch ns that line timestamps are relative to: the Task Environment
// plane's profile_start_time, or 0 when the space has none.
int64_t ProfileStartEpochNs(const XSpace& space);
// Its profile_stop_time, or 0.
int64_t ProfileStopEpochNs(const XSpace& space);
// Sets the Task Environment plane's start and stop times (adds the plane
// when missing); line times must be relative to that start.
void SetProfileTimes(XSpace* space, int64_t start_epoch_ns, int64_t stop_epoch_ns);

// Appends to the space's warnings / errors (made valid UTF-8).
void AddWarning(XSpace* space, std::string_view text);
void AddError(XSpace* space, std::string_view text);

class XPlaneBuilder {
 public:
  // Picks up metadata already in `plane`, so builders can be re-created.
  explicit XPlaneBuilder(XPlane* plane);

  XPlane* plane() const { return plane_; }
  // The plain metadata named `name` (no stats), made on first use.
  int64_t EventMetadataId(std::string_view name);
  int64_t StatMetadataId(std::string_view name);
  // A new metadata named `name` for stats that many events share (an
  // operator's inputs): the events point to it and keep only their own
  // stats. Our visitor's Stat() and TSL's GetEventOrMetadataStat read
  // both; EventMetadataId(name) never returns it.
  XEventMetadata* NewEventMetadata(std::string_view name);

  XLine* AddLine(int64_t id, std::string_view name, int64_t timestamp_ns);
  XEvent* AddEvent(XLine* line, int64_t metadata_id, int64_t offset_ps, int64_t duration_ps);

  void AddStat(XEvent* event, std::string_view name, int64_t value);
  void AddStat(XEvent* event, std::string_view name, uint64_t value);
  void AddStat(XEvent* event, std::string_view name, double value);
  void AddStat(XEvent* event, std::string_view name, std::string_view value);
  // A string stat whose value is interned as stat metadata (XStat
  // ref_value, as TSL writes repeated strings): one copy per distinct value
  // instead of one per event. xprof and our exporters read both forms.
  void AddRefStat(XEvent* event, std::string_view name, std::string_view value);
  void AddPlaneStat(std::string_view name, int64_t value);
  void AddPlaneStat(std::string_view name, uint64_t value);
  void AddPlaneStat(std::string_view name, std::string_view value);

 private:
  XStat* NewStat(google::protobuf::RepeatedPtrField<XStat>* stats, std::string_view name);
  XEventMetadata* AddEventMetadata(std::string_view valid_name);

  XPlane* plane_;
  absl::flat_hash_map<std::string, int64_t> event_ids_;
  absl::flat_hash_map<std::string, int64_t> stat_ids_;
};

}  // namespace xplane
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_XPLANE_XPLANE_BUILDER_H_
