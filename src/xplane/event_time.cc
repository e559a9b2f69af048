#include "src/xplane/event_time.h"

#include "absl/strings/str_cat.h"
#include "src/xplane/saturating.h"

namespace neuronprof {
namespace xplane {

std::optional<EventTime> CheckedEventTime(const tensorflow::profiler::XLine& line,
                                          const tensorflow::profiler::XEvent& event) {
  EventTime time;
  time.duration_ns = event.duration_ps() / 1000;
  const Checked start = Checked(line.timestamp_ns()) + event.offset_ps() / 1000;
  if (time.duration_ns < 0 || !start.ok() || !(start + time.duration_ns).ok()) {
    return std::nullopt;
  }
  time.start_ns = start.value();
  return time;
}

std::string UnplaceableEventsWarning(int64_t count) {
  return absl::StrCat("neuronprof: left out ", count,
                      " events whose duration is negative or whose start or end "
                      "does not fit int64 nanoseconds (a corrupt or crafted XSpace)");
}

}  // namespace xplane
}  // namespace neuronprof
