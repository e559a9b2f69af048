// Tick calibration: recorded ticks must map onto the wall clock.
#include "src/core/clock.h"

#include <time.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <string>

#include "neuronprof/internal/recorder.h"

namespace neuronprof {
namespace {

int64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// Whether the kernel trusts the TSC, read here from /sys and /proc rather
// than through src/core/clock.cc: its clocksource is "tsc" and the CPU
// reports constant_tsc and nonstop_tsc (never on other architectures).
bool KernelTrustsTsc() {
#if defined(__x86_64__)
  std::string clocksource;
  std::ifstream("/sys/devices/system/clocksource/clocksource0/current_clocksource") >> clocksource;
  std::ifstream cpuinfo("/proc/cpuinfo");
  bool constant = false, nonstop = false;
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("flags", 0) != 0) continue;
    std::istringstream words(line);
    for (std::string word; words >> word;) {
      constant |= word == "constant_tsc";
      nonstop |= word == "nonstop_tsc";
    }
    break;
  }
  return clocksource == "tsc" && constant && nonstop;
#else
  return false;
#endif
}

TEST_CASE("ticks are TSC cycles exactly when the kernel trusts the TSC") {
  const bool kernel_trusts_tsc = KernelTrustsTsc();
  CAPTURE(kernel_trusts_tsc, core::TickSourceDescription());
  CHECK(core::TicksAreTsc() == kernel_trusts_tsc);
  CHECK(core::TickSourceDescription().rfind(kernel_trusts_tsc ? "TSC" : "CLOCK_MONOTONIC", 0) == 0);
  // The recorder's ticks really come from that source: a tick lies between
  // two reads of the source itself.
  uint64_t before = 0, ticks = 0, after = 0;
#if defined(__x86_64__)
  if (kernel_trusts_tsc) {
    before = __rdtsc();
    ticks = internal::NowTicks();
    after = __rdtsc();
  }
#endif
  if (!kernel_trusts_tsc) {
    before = static_cast<uint64_t>(MonotonicNs());
    ticks = internal::NowTicks();
    after = static_cast<uint64_t>(MonotonicNs());
  }
  CHECK(before <= ticks);
  CHECK(ticks <= after);
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
