#include "src/xplane/stat_lookup.h"

#include "absl/strings/str_cat.h"

namespace neuronprof {
namespace xplane {

using tensorflow::profiler::XEvent;
using tensorflow::profiler::XPlane;
using tensorflow::profiler::XStat;

int64_t StatId(const XPlane& plane, std::string_view name) {
  for (const auto& [id, metadata] : plane.stat_metadata()) {
    if (metadata.name() == name) return id;
  }
  return -1;
}

const XStat* FindStat(const XPlane& plane, const XEvent& event, int64_t id) {
  if (id < 0) return nullptr;
  for (const XStat& stat : event.stats()) {
    if (stat.metadata_id() == id) return &stat;
  }
  auto metadata = plane.event_metadata().find(event.metadata_id());
  if (metadata != plane.event_metadata().end()) {
    for (const XStat& stat : metadata->second.stats()) {
      if (stat.metadata_id() == id) return &stat;
    }
  }
  return nullptr;
}

const XStat* FindPlaneStat(const XPlane& plane, std::string_view name) {
  const int64_t id = StatId(plane, name);
  if (id < 0) return nullptr;
  for (const XStat& stat : plane.stats()) {
    if (stat.metadata_id() == id) return &stat;
  }
  return nullptr;
}

std::optional<int64_t> IntValue(const XStat* stat) {
  if (stat == nullptr) return std::nullopt;
  if (stat->value_case() == XStat::kInt64Value) return stat->int64_value();
  if (stat->value_case() == XStat::kUint64Value) {
    return static_cast<int64_t>(stat->uint64_value());
  }
  return std::nullopt;
}

std::string_view TextValue(const XPlane& plane, const XStat& stat, std::string* scratch) {
  switch (stat.value_case()) {
    case XStat::kStrValue: return stat.str_value();
    case XStat::kRefValue: {
      auto it = plane.stat_metadata().find(static_cast<int64_t>(stat.ref_value()));
      return it == plane.stat_metadata().end() ? std::string_view() : it->second.name();
    }
    case XStat::kInt64Value: *scratch = absl::StrCat(stat.int64_value()); break;
    case XStat::kUint64Value: *scratch = absl::StrCat(stat.uint64_value()); break;
    case XStat::kDoubleValue: *scratch = absl::StrCat(stat.double_value()); break;
    default: scratch->clear(); break;
  }
  return *scratch;
}

}  // namespace xplane
}  // namespace neuronprof
