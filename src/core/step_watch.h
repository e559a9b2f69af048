// Step watches: a hook that sees the StepTraces whose names it asks for,
// used by the flight recorder's slow-step trigger. Off the hot path: while
// no watch is installed a StepTrace pays one relaxed load (in its
// out-of-line constructor) and one branch on a member at its end; ScopedTrace
// pays nothing. With a watch installed, each StepTrace's constructor asks
// the watch whether its name is watched (out of line), and a watched step's
// end calls it once more.
#ifndef NEURONPROF_SRC_CORE_STEP_WATCH_H_
#define NEURONPROF_SRC_CORE_STEP_WATCH_H_

#include <cstdint>
#include <string_view>

#include "neuronprof/export.h"
#include "src/core/result.h"

namespace neuronprof {
namespace core {

// One watched step that ended.
struct WatchedStep {
  uint32_t tag = 0;  // What StepWatch::Match returned for its name.
  int64_t step_num = 0;
  uint64_t start_ticks = 0;  // Recorder ticks, as in its EventRecord.
  uint64_t end_ticks = 0;
  int64_t duration_ns = 0;
};

// Called on recording threads: both methods must be quick and must never
// block (no mutex a non-recording thread may hold for long, no I/O).
class StepWatch {
 public:
  virtual ~StepWatch() = default;
  // A nonzero tag (< 2^24) when steps called `name` are watched.
  virtual uint32_t Match(std::string_view name) = 0;
  // The end of a step whose name Match tagged, once the step is recorded.
  virtual void OnStepEnd(const WatchedStep& step) = 0;
};

// Installs `watch` (one per process; FailedPrecondition while another is
// installed). The caller keeps it alive until RemoveStepWatch returns.
NEURONPROF_API Result<> InstallStepWatch(StepWatch* watch);
// Uninstalls `watch` (no-op when it is not the one installed) and waits
// until no thread is inside its methods. Steps that began under it and end
// later are not reported to anyone.
NEURONPROF_API void RemoveStepWatch(StepWatch* watch);

// Counting the StepTraces begun while nothing records them: a Profiler
// whose window ended by itself (ms_duration) counts the steps the program
// ran after it, so that its result can say what the window missed. One
// count per process; Start resets it, Stop returns it and ends counting.
NEURONPROF_API void StartCountingUnrecordedSteps();
NEURONPROF_API int64_t StopCountingUnrecordedSteps();

}  // namespace core

// StepTrace's entry points (internal::MatchWatchedStep, EndWatchedStep,
// NoteUnrecordedStep) are declared in neuronprof/internal/recorder.h: its
// constructor is inline.
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_CORE_STEP_WATCH_H_
