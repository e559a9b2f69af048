#include "src/api/step_schedule.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace neuronprof {
namespace api {

StepAction ActionForStep(const ProfilerSchedule& schedule, int64_t step) {
  if (step < schedule.skip_first) return StepAction::kNone;
  step -= schedule.skip_first;
  const int64_t cycle_steps = schedule.wait + schedule.warmup + schedule.active;
  if (schedule.repeat > 0 && step / cycle_steps >= schedule.repeat) {
    return StepAction::kNone;
  }
  const int64_t in_cycle = step % cycle_steps;
  if (in_cycle < schedule.wait) return StepAction::kNone;
  if (in_cycle < schedule.wait + schedule.warmup) return StepAction::kWarmup;
  return in_cycle < cycle_steps - 1 ? StepAction::kRecord : StepAction::kRecordAndSave;
}

int64_t FirstActiveStep(const ProfilerSchedule& schedule) {
  return schedule.skip_first + schedule.wait + schedule.warmup;
}

int64_t CycleOfStep(const ProfilerSchedule& schedule, int64_t step) {
  if (step < schedule.skip_first) return 0;
  return (step - schedule.skip_first) / (schedule.wait + schedule.warmup + schedule.active) + 1;
}

std::string CycleRunName(const std::string& run_name, int64_t cycle) {
  return absl::StrFormat("%s_cycle_%04d", run_name, cycle);
}

absl::Status ValidateSchedule(const ProfilerSchedule& schedule) {
  const struct {
    const char* field;
    int64_t value;
  } phases[] = {{"wait", schedule.wait},
                {"warmup", schedule.warmup},
                {"active", schedule.active},
                {"repeat", schedule.repeat},
                {"skip_first", schedule.skip_first}};
  // A bound far above any training run keeps skip_first + one cycle in
  // int64 for the step arithmetic.
  constexpr int64_t kMaxSteps = int64_t{1} << 40;
  for (const auto& phase : phases) {
    if (phase.value < 0 || phase.value > kMaxSteps) {
      return absl::InvalidArgumentError(absl::StrCat("schedule.", phase.field, " must be 0..",
                                                     kMaxSteps, " steps, got ", phase.value));
    }
  }
  if (schedule.active == 0) {
    return absl::InvalidArgumentError(
        "schedule.active must be at least 1 step (a cycle records its active "
        "steps), got 0");
  }
  return absl::OkStatus();
}

}  // namespace api
}  // namespace neuronprof
