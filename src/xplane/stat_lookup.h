// Reading stats back out of an XPlane: resolve a stat name to its metadata
// id once per plane, then find stats by id (no name compare per event).
#ifndef NEURONPROF_SRC_XPLANE_STAT_LOOKUP_H_
#define NEURONPROF_SRC_XPLANE_STAT_LOOKUP_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "proto/xplane.pb.h"

namespace neuronprof {
namespace xplane {

// The metadata id of stat `name` in `plane`, or -1.
int64_t StatId(const tensorflow::profiler::XPlane& plane, std::string_view name);

// The event's stat with metadata id `id`, else its metadata's; nullptr when
// neither has one (or id < 0).
const tensorflow::profiler::XStat* FindStat(const tensorflow::profiler::XPlane& plane,
                                            const tensorflow::profiler::XEvent& event,
                                            int64_t id);

// A plane's own stat by name; nullptr when absent.
const tensorflow::profiler::XStat* FindPlaneStat(const tensorflow::profiler::XPlane& plane,
                                                 std::string_view name);

// int64 or uint64 values; nullopt for other kinds (or no stat).
std::optional<int64_t> IntValue(const tensorflow::profiler::XStat* stat);

// The text of a string or interned (ref_value) stat without copying it;
// numbers are printed into `scratch`.
std::string_view TextValue(const tensorflow::profiler::XPlane& plane,
                           const tensorflow::profiler::XStat& stat, std::string* scratch);

}  // namespace xplane
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_XPLANE_STAT_LOOKUP_H_
