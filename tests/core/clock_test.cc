// Tick calibration: recorded ticks must map onto the wall clock.
#include <time.h>

#include <catch2/catch.hpp>

#include "src/core/clock.h"
#include "neuronprof/internal/recorder.h"

namespace neuronprof {
namespace {

int64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

TEST_CASE("tick source is decided once and explained") {
  const bool tsc = core::TicksAreTsc();
  CHECK(core::TicksAreTsc() == tsc);
  const std::string why = core::TickSourceDescription();
  CHECK(why.find(tsc ? "TSC" : "CLOCK_MONOTONIC") == 0);
}

TEST_CASE("ticks convert to epoch time consistently with the system clocks") {
  const core::ClockSample begin = core::TakeClockSample();
  // Busy-wait 20 ms of monotonic time so the fit has a real span.
  const int64_t until = MonotonicNs() + 20000000;
  while (MonotonicNs() < until) {
  }
  // A tick reading bracketed tightly by two monotonic readings (retried if
  // the thread was preempted in between).
  uint64_t middle_ticks = 0;
  int64_t middle_mono = 0;
  for (int attempt = 0; attempt < 1000; ++attempt) {
    const int64_t before = MonotonicNs();
    middle_ticks = internal::NowTicks();
    const int64_t after = MonotonicNs();
    middle_mono = before + (after - before) / 2;
    if (after - before < 2000) break;
  }
  const core::ClockSample end = core::TakeClockSample();
  const core::TickConverter converter(begin, end);

  // The sample points map onto their own wall-clock readings.
  CHECK(std::llabs(converter.ToEpochNs(begin.ticks) - begin.realtime_ns) < 1000);
  // A tick read in between lands where the monotonic clock says it should,
  // measured from the start sample.
  const int64_t expected = begin.realtime_ns + (middle_mono - begin.monotonic_ns);
  CHECK(std::llabs(converter.ToEpochNs(middle_ticks) - expected) < 20000);
  // Later ticks never map to earlier times.
  CHECK(converter.ToEpochNs(end.ticks) >= converter.ToEpochNs(middle_ticks));
  CHECK(converter.ns_per_tick() > 0.0);
}

}  // namespace
}  // namespace neuronprof
