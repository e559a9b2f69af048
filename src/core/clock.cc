#include "src/core/clock.h"

#include <time.h>

#include <fstream>
#include <mutex>
#include <sstream>
#include <string>

#include "neuronprof/internal/recorder.h"

namespace neuronprof {
namespace internal {
bool g_ticks_are_tsc = false;
}  // namespace internal

namespace core {
namespace {

std::string ReadFirstLine(const char* path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

bool CpuHasFlag(const std::string& flags, const std::string& flag) {
  std::istringstream words(flags);
  std::string word;
  while (words >> word) {
    if (word == flag) return true;
  }
  return false;
}

std::string g_tick_source_reason;

void DetectTickSource() {
#if defined(__x86_64__)
  const std::string clocksource =
      ReadFirstLine("/sys/devices/system/clocksource/clocksource0/current_clocksource");
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line, flags;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("flags", 0) == 0) {
      flags = line;
      break;
    }
  }
  const bool constant = CpuHasFlag(flags, "constant_tsc");
  const bool nonstop = CpuHasFlag(flags, "nonstop_tsc");
  if (clocksource == "tsc" && constant && nonstop) {
    internal::g_ticks_are_tsc = true;
    g_tick_source_reason = "TSC (kernel clocksource is tsc; constant_tsc and nonstop_tsc set)";
    return;
  }
  g_tick_source_reason = "CLOCK_MONOTONIC (kernel clocksource '" + clocksource + "'" +
                         (constant ? "" : ", no constant_tsc") +
                         (nonstop ? "" : ", no nonstop_tsc") + ")";
#else
  g_tick_source_reason = "CLOCK_MONOTONIC (not x86-64)";
#endif
}

std::once_flag g_tick_source_once;

int64_t ReadNs(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

}  // namespace

void InitTickSource() { std::call_once(g_tick_source_once, DetectTickSource); }

bool TicksAreTsc() {
  InitTickSource();
  return internal::g_ticks_are_tsc;
}

std::string TickSourceDescription() {
  InitTickSource();
  return g_tick_source_reason;
}

int64_t EpochNowNs() { return ReadNs(CLOCK_REALTIME); }

ClockSample TakeClockSample() {
  InitTickSource();
  ClockSample best;
  int64_t best_gap = INT64_MAX;
  for (int attempt = 0; attempt < 8; ++attempt) {
    const int64_t mono_before = ReadNs(CLOCK_MONOTONIC);
    const uint64_t ticks = internal::NowTicks();
    const int64_t real = ReadNs(CLOCK_REALTIME);
    const int64_t mono_after = ReadNs(CLOCK_MONOTONIC);
    const int64_t gap = mono_after - mono_before;
    if (gap < best_gap) {
      best_gap = gap;
      best.ticks = ticks;
      best.monotonic_ns = mono_before + gap / 2;
      best.realtime_ns = real;
    }
  }
  return best;
}

TickConverter::TickConverter(const ClockSample& begin, const ClockSample& end)
    : base_ticks_(begin.ticks), base_epoch_ns_(begin.realtime_ns) {
  if (!internal::g_ticks_are_tsc) {
    // Ticks are monotonic ns already: only the epoch offset is needed.
    ns_per_tick_ = 1.0;
    base_ticks_ = static_cast<uint64_t>(begin.monotonic_ns);
    base_epoch_ns_ = begin.realtime_ns;
    return;
  }
  const double tick_span = static_cast<double>(end.ticks - begin.ticks);
  const double ns_span = static_cast<double>(end.monotonic_ns - begin.monotonic_ns);
  // Short windows give a noisy slope; below 1 ms fall back to the
  // process-wide estimate made over an earlier window. Captures are
  // serialised, so this needs no lock.
  static double process_ns_per_tick = 0.0;
  if (ns_span >= 1e6 && tick_span > 0) {
    ns_per_tick_ = ns_span / tick_span;
    if (process_ns_per_tick == 0.0) process_ns_per_tick = ns_per_tick_;
  } else if (process_ns_per_tick != 0.0) {
    ns_per_tick_ = process_ns_per_tick;
  } else {
    ClockSample a = TakeClockSample();
    timespec pause{0, 2000000};
    nanosleep(&pause, nullptr);
    ClockSample b = TakeClockSample();
    ns_per_tick_ = static_cast<double>(b.monotonic_ns - a.monotonic_ns) /
                   static_cast<double>(b.ticks - a.ticks);
    process_ns_per_tick = ns_per_tick_;
  }
}

int64_t TickConverter::ToEpochNs(uint64_t ticks) const {
  const double delta = static_cast<double>(static_cast<int64_t>(ticks - base_ticks_));
  return base_epoch_ns_ + static_cast<int64_t>(delta * ns_per_tick_);
}

}  // namespace core
}  // namespace neuronprof
