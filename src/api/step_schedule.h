// torch.profiler.schedule's step function: what a scheduled Profiler does
// during each step. Pure, so the phases are tested without a capture.
#ifndef NEURONPROF_SRC_API_STEP_SCHEDULE_H_
#define NEURONPROF_SRC_API_STEP_SCHEDULE_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "neuronprof/profiler.h"

namespace neuronprof {
namespace api {

// torch.profiler.ProfilerAction.
enum class StepAction {
  kNone,           // Not recording.
  kWarmup,         // Recording, to be discarded.
  kRecord,         // Recording an active step.
  kRecordAndSave,  // The cycle's last active step: its run is written after it.
};

// The action for step `step` (>= 0), exactly as torch's schedule_fn.
StepAction ActionForStep(const ProfilerSchedule& schedule, int64_t step);

// The first active step, for messages.
int64_t FirstActiveStep(const ProfilerSchedule& schedule);

// The cycle (1 = the first) that step `step` belongs to; 0 in skip_first.
int64_t CycleOfStep(const ProfilerSchedule& schedule, int64_t step);

// The run of cycle `cycle` of a schedule whose options name `run_name`:
// <run_name>_cycle_0001, ..., padded to 4 digits so runs sort as text (up to
// kMaxPaddedCycle; later cycles still get unique names).
std::string CycleRunName(const std::string& run_name, int64_t cycle);
inline constexpr int64_t kMaxPaddedCycle = 9999;

// InvalidArgument naming the field (schedule.wait, ...) for negative phases
// or active <= 0.
absl::Status ValidateSchedule(const ProfilerSchedule& schedule);

}  // namespace api
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_API_STEP_SCHEDULE_H_
