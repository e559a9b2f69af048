// Maps the recorder's raw ticks (TSC cycles or CLOCK_MONOTONIC ns) to
// nanoseconds since the Unix epoch. Calibration runs off the hot path: once
// when a capture starts and once when it stops.
#ifndef NEURONPROF_SRC_CORE_CLOCK_H_
#define NEURONPROF_SRC_CORE_CLOCK_H_

#include <cstdint>
#include <string>

#include "neuronprof/export.h"

// NEURONPROF_API here: exported from libneuronprof_markers for the other
// neuronprof libraries (not public API; see neuronprof/export.h).

namespace neuronprof {
namespace core {

// One simultaneous reading of the tick counter and both system clocks.
struct ClockSample {
  uint64_t ticks = 0;
  int64_t monotonic_ns = 0;
  int64_t realtime_ns = 0;
};

// Decides, once per process, whether ticks are TSC cycles: only when the
// kernel itself trusts the TSC (current clocksource "tsc") and the CPU
// reports constant_tsc and nonstop_tsc. Sets internal::g_ticks_are_tsc.
void InitTickSource();
bool TicksAreTsc();
// Why the tick source was chosen, for logs and docs.
std::string TickSourceDescription();

// Wall-clock now, in nanoseconds since the Unix epoch (CLOCK_REALTIME).
NEURONPROF_API int64_t EpochNowNs();

// Takes a sample whose clock reads are as close together as the machine
// allows (the tightest of a few tries).
ClockSample TakeClockSample();

// Linear map from ticks to epoch ns fitted through two samples.
class NEURONPROF_API TickConverter {
 public:
  TickConverter() = default;
  TickConverter(const ClockSample& begin, const ClockSample& end);

  int64_t ToEpochNs(uint64_t ticks) const;
  double ns_per_tick() const { return ns_per_tick_; }

 private:
  uint64_t base_ticks_ = 0;
  int64_t base_epoch_ns_ = 0;
  double ns_per_tick_ = 1.0;
};

}  // namespace core
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_CORE_CLOCK_H_
