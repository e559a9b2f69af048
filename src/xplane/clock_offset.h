// A remote host's clock relative to a reference clock (the capture
// client's), and putting that host's XSpace on the reference clock.
#ifndef NEURONPROF_SRC_XPLANE_CLOCK_OFFSET_H_
#define NEURONPROF_SRC_XPLANE_CLOCK_OFFSET_H_

#include <cstdint>
#include <optional>

#include "proto/xplane.pb.h"

namespace neuronprof {
namespace xplane {

struct ClockOffset {
  // The host's clock minus the reference clock, in ns: a time t on the
  // host is t - offset_ns on the reference clock.
  int64_t offset_ns = 0;
  // The true offset lies within offset_ns +- uncertainty_ns.
  int64_t uncertainty_ns = 0;
};

// Line timestamps at or above this are epoch times (TSL writes them so);
// below it they are relative to profile_start_time (neuronprof's, a window
// being far shorter than the three years this is).
inline constexpr int64_t kEpochLineTimeNs = int64_t{100'000'000'000'000'000};

// Shifts the Task Environment plane's times (profile_start_time,
// profile_stop_time) by -offset and records the clock stats (schema.h
// kClockAlignmentStat ...); without an offset records only that it is
// unmeasured. The plane's other stats stay. Adds the plane when missing.
void RecordClockOffset(const std::optional<ClockOffset>& offset,
                       tensorflow::profiler::XPlane* task_environment);

// The whole space: RecordClockOffset on its Task Environment plane, and
// every line with an epoch timestamp (kEpochLineTimeNs) shifted too; lines
// relative to profile_start_time move with it.
void AlignSpaceClock(const std::optional<ClockOffset>& offset, tensorflow::profiler::XSpace* space);

// What RecordClockOffset stored: the offset when measured, else nullopt.
std::optional<ClockOffset> ReadClockOffset(const tensorflow::profiler::XSpace& space);

}  // namespace xplane
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_XPLANE_CLOCK_OFFSET_H_
