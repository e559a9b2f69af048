// An event's start and duration in ns from the XSpace fields, which a
// crafted or corrupt file can set to anything: int64 arithmetic on them is
// checked, never wrapped (signed overflow is undefined behaviour).
#ifndef NEURONPROF_SRC_XPLANE_EVENT_TIME_H_
#define NEURONPROF_SRC_XPLANE_EVENT_TIME_H_

#include <cstdint>
#include <optional>
#include <string>

#include "proto/xplane.pb.h"

namespace neuronprof {
namespace xplane {

struct EventTime {
  int64_t start_ns = 0;                                      // line.timestamp_ns + offset_ps / 1000
  int64_t duration_ns = 0;                                   // duration_ps / 1000, >= 0
  int64_t end_ns() const { return start_ns + duration_ns; }  // Fits: checked.
};

// nullopt when the duration is negative or the start or end does not fit
// an int64 of ns; writers leave such an event out and count it.
std::optional<EventTime> CheckedEventTime(const tensorflow::profiler::XLine& line,
                                          const tensorflow::profiler::XEvent& event);

// What a writer says when it left out `count` such events.
std::string UnplaceableEventsWarning(int64_t count);

}  // namespace xplane
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_XPLANE_EVENT_TIME_H_
