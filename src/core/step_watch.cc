// Step watches. Lifetime argument: a recording thread announces itself in
// g_calls (seq_cst) before it loads the watch (seq_cst) and leaves after its
// last use of it; RemoveStepWatch clears the watch (seq_cst) and then waits
// for g_calls to reach 0. Either the thread's load sees nullptr, or the
// remover's wait sees the thread's announcement. A token carries the
// install's serial, so a step that began under one watch is never reported
// to the next.
#include "src/core/step_watch.h"

#include <time.h>

#include <atomic>
#include <mutex>
#include <thread>

#include "neuronprof/internal/recorder.h"

namespace neuronprof {
namespace core {
namespace {

std::mutex g_install_mutex;  // Serialises Install / Remove.
std::atomic<StepWatch*> g_watch{nullptr};
std::atomic<uint32_t> g_serial{0};  // Of the install in force; 8 bits used.
std::atomic<int> g_calls{0};
// Tick rate reference taken at install: ticks and CLOCK_MONOTONIC ns.
std::atomic<uint64_t> g_base_ticks{0};
std::atomic<int64_t> g_base_ns{0};

int64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

constexpr uint32_t kTagBits = 24;
constexpr uint32_t kTagMask = (1u << kTagBits) - 1;

// Holds off RemoveStepWatch while it lives; watch() is null when none is
// installed.
class WatchUse {
 public:
  WatchUse() {
    g_calls.fetch_add(1, std::memory_order_seq_cst);
    watch_ = g_watch.load(std::memory_order_seq_cst);
  }
  ~WatchUse() { g_calls.fetch_sub(1, std::memory_order_release); }
  StepWatch* watch() const { return watch_; }

 private:
  StepWatch* watch_;
};

}  // namespace

Result<> InstallStepWatch(StepWatch* watch) {
  std::lock_guard<std::mutex> lock(g_install_mutex);
  if (g_watch.load(std::memory_order_relaxed) != nullptr) {
    return {ErrorCode::kFailedPrecondition, "a step watch is already installed"};
  }
  g_base_ticks.store(internal::NowTicks(), std::memory_order_relaxed);
  g_base_ns.store(MonotonicNs(), std::memory_order_relaxed);
  uint32_t serial = (g_serial.load(std::memory_order_relaxed) + 1) & 0xffu;
  if (serial == 0) serial = 1;
  g_serial.store(serial, std::memory_order_relaxed);
  g_watch.store(watch, std::memory_order_seq_cst);
  return {};
}

void RemoveStepWatch(StepWatch* watch) {
  std::lock_guard<std::mutex> lock(g_install_mutex);
  if (g_watch.load(std::memory_order_relaxed) != watch) return;
  g_watch.store(nullptr, std::memory_order_seq_cst);
  while (g_calls.load(std::memory_order_acquire) != 0) std::this_thread::yield();
}

namespace {
std::atomic<bool> g_counting_unrecorded{false};
std::atomic<int64_t> g_unrecorded_steps{0};
}  // namespace

void StartCountingUnrecordedSteps() {
  g_unrecorded_steps.store(0, std::memory_order_relaxed);
  g_counting_unrecorded.store(true, std::memory_order_release);
}

int64_t StopCountingUnrecordedSteps() {
  g_counting_unrecorded.store(false, std::memory_order_release);
  return g_unrecorded_steps.exchange(0, std::memory_order_acq_rel);
}

}  // namespace core

namespace internal {

void NoteUnrecordedStep() {
  if (core::g_counting_unrecorded.load(std::memory_order_relaxed)) {
    core::g_unrecorded_steps.fetch_add(1, std::memory_order_relaxed);
  }
}

uint32_t MatchWatchedStep(std::string_view name) {
  // The flag: one relaxed load when nothing is watched.
  if (core::g_watch.load(std::memory_order_relaxed) == nullptr) return 0;
  core::WatchUse use;
  if (use.watch() == nullptr) return 0;
  const uint32_t tag = use.watch()->Match(name) & core::kTagMask;
  if (tag == 0) return 0;
  return (core::g_serial.load(std::memory_order_relaxed) << core::kTagBits) | tag;
}

void EndWatchedStep(uint32_t token, int64_t step_num, uint64_t start_ticks, uint64_t end_ticks) {
  core::WatchUse use;
  if (use.watch() == nullptr ||
      (token >> core::kTagBits) != core::g_serial.load(std::memory_order_relaxed)) {
    return;
  }
  core::WatchedStep step;
  step.tag = token & core::kTagMask;
  step.step_num = step_num;
  step.start_ticks = start_ticks;
  step.end_ticks = end_ticks;
  const uint64_t ticks = end_ticks - start_ticks;
  if (g_ticks_are_tsc) {
    // ns per tick measured since the install: a clock read and a division,
    // for watched steps only.
    const uint64_t now_ticks = NowTicks();
    const int64_t now_ns = core::MonotonicNs();
    const uint64_t span_ticks = now_ticks - core::g_base_ticks.load(std::memory_order_relaxed);
    const int64_t span_ns = now_ns - core::g_base_ns.load(std::memory_order_relaxed);
    step.duration_ns = span_ticks == 0 ? 0
                                       : static_cast<int64_t>(static_cast<double>(ticks) *
                                                              static_cast<double>(span_ns) /
                                                              static_cast<double>(span_ticks));
  } else {
    step.duration_ns = static_cast<int64_t>(ticks);
  }
  use.watch()->OnStepEnd(step);
}

}  // namespace internal
}  // namespace neuronprof
