#include "src/xplane/event_time.h"

#include "absl/strings/str_cat.h"

namespace neuronprof {
namespace xplane {

std::optional<EventTime> CheckedEventTime(const tensorflow::profiler::XLine& line,
                                          const tensorflow::profiler::XEvent& event) {
  EventTime time;
  time.duration_ns = event.duration_ps() / 1000;
  int64_t end = 0;
  if (time.duration_ns < 0 ||
      __builtin_add_overflow(line.timestamp_ns(), event.offset_ps() / 1000, &time.start_ns) ||
      __builtin_add_overflow(time.start_ns, time.duration_ns, &end)) {
    return std::nullopt;
  }
  return time;
}

std::string UnplaceableEventsWarning(int64_t count) {
  return absl::StrCat("neuronprof: left out ", count,
                      " events whose duration is negative or whose start or end "
                      "does not fit int64 nanoseconds (a corrupt or crafted XSpace)");
}

}  // namespace xplane
}  // namespace neuronprof
