#include "src/session/slow_step_trigger.h"

#include <errno.h>
#include <time.h>

#include "absl/strings/str_cat.h"
#include "neuronprof/internal/recorder.h"
#include "neuronprof/trace.h"
#include "src/collectors/core_status.h"

namespace neuronprof {
namespace session {
namespace {

int64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

constexpr char kMarkerName[] = "slow_step_trigger";

// Records, on the calling thread, an event spanning the slow step. Its name
// is stored by pointer and it has no arguments: a name copied now would sit
// in a ring block claimed after the step began, which a snapshot rightly
// takes for a recycled name (see "Ring mode" in src/core/recorder.cc). The
// dump's warning says which step it was.
void RecordTriggerEvent(const core::WatchedStep& step) {
  const uint32_t state = internal::g_capture_state.load(std::memory_order_relaxed);
  if ((state & internal::kLevelMask) < kTraceCritical) return;
  internal::RecordEvent(state, kMarkerName, sizeof(kMarkerName) - 1, 0, step.start_ticks,
                        step.end_ticks);
}

}  // namespace

absl::StatusOr<std::unique_ptr<SlowStepTriggers>> SlowStepTriggers::Start(Handler handler) {
  std::unique_ptr<SlowStepTriggers> triggers(new SlowStepTriggers(std::move(handler)));
  if (absl::Status s = collectors::ToStatus(core::InstallStepWatch(triggers.get())); !s.ok()) {
    return s;
  }
  triggers->thread_ = std::thread([t = triggers.get()] { t->Run(); });
  return triggers;
}

SlowStepTriggers::SlowStepTriggers(Handler handler) : handler_(std::move(handler)) {
  sem_init(&wake_, /*pshared=*/0, 0);
}

SlowStepTriggers::~SlowStepTriggers() {
  core::RemoveStepWatch(this);  // No recording thread is inside us after this.
  stop_.store(true, std::memory_order_release);
  sem_post(&wake_);
  if (thread_.joinable()) thread_.join();
  sem_destroy(&wake_);
}

absl::StatusOr<int> SlowStepTriggers::Arm(std::string_view name, int64_t threshold_ns,
                                          int64_t cooldown_ns) {
  if (name.empty()) return absl::InvalidArgumentError("the step name must not be empty");
  if (threshold_ns <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("the threshold must be positive, got ", threshold_ns, " ns"));
  }
  if (cooldown_ns < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("the cool-down must be >= 0, got ", cooldown_ns, " ns"));
  }
  std::lock_guard<std::mutex> lock(arm_mutex_);
  const int count = count_.load(std::memory_order_relaxed);
  int index = 0;
  while (index < count && triggers_[index].name != name) ++index;
  if (index == kMaxTriggers) {
    return absl::ResourceExhaustedError(
        absl::StrCat("a flight recorder watches at most ", kMaxTriggers, " step names"));
  }
  Trigger& trigger = triggers_[index];
  trigger.threshold_ns.store(threshold_ns, std::memory_order_relaxed);
  trigger.cooldown_ns.store(cooldown_ns, std::memory_order_relaxed);
  if (index == count) {
    trigger.name = std::string(name);
    count_.store(count + 1, std::memory_order_release);  // Publishes the name.
  }
  return index;
}

uint32_t SlowStepTriggers::Match(std::string_view name) {
  const int count = count_.load(std::memory_order_acquire);
  for (int i = 0; i < count; ++i) {
    if (triggers_[i].name == name) return static_cast<uint32_t>(i + 1);
  }
  return 0;
}

void SlowStepTriggers::OnStepEnd(const core::WatchedStep& step) {
  Trigger& trigger = triggers_[step.tag - 1];
  if (step.duration_ns <= trigger.threshold_ns.load(std::memory_order_relaxed)) return;
  const int64_t now = MonotonicNs();
  int64_t next = trigger.next_allowed_ns.load(std::memory_order_relaxed);
  if (now < next) return;  // Cooling down.
  const int64_t cooldown = trigger.cooldown_ns.load(std::memory_order_relaxed);
  if (!trigger.next_allowed_ns.compare_exchange_strong(next, now + cooldown,
                                                       std::memory_order_relaxed)) {
    return;  // Another thread's slow step took this cool-down.
  }
  int empty = kEmpty;
  if (!trigger.mailbox.compare_exchange_strong(empty, kFilling, std::memory_order_acquire)) {
    trigger.missed.fetch_add(1, std::memory_order_relaxed);  // The last one is not handled yet.
    return;
  }
  trigger.pending = step;
  trigger.mailbox.store(kFull, std::memory_order_release);
  sem_post(&wake_);  // Never blocks.
}

void SlowStepTriggers::Run() {
  SetCurrentThreadName("neuronprof_trigger");
  for (;;) {
    while (sem_wait(&wake_) != 0 && errno == EINTR) {
    }
    if (stop_.load(std::memory_order_acquire)) return;
    const int count = count_.load(std::memory_order_acquire);
    for (int i = 0; i < count; ++i) {
      Trigger& trigger = triggers_[i];
      if (trigger.mailbox.load(std::memory_order_acquire) != kFull) continue;
      const core::WatchedStep step = trigger.pending;
      trigger.mailbox.store(kEmpty, std::memory_order_release);
      Handle(trigger, i, step);
      if (stop_.load(std::memory_order_acquire)) return;
    }
  }
}

void SlowStepTriggers::Handle(Trigger& trigger, int index, const core::WatchedStep& step) {
  SlowStep slow;
  slow.trigger = index;
  slow.step_name = trigger.name;
  slow.step_num = step.step_num;
  slow.duration_ns = step.duration_ns;
  slow.threshold_ns = trigger.threshold_ns.load(std::memory_order_relaxed);
  slow.missed = trigger.missed.load(std::memory_order_relaxed);
  RecordTriggerEvent(step);
  handler_(slow);
}

}  // namespace session
}  // namespace neuronprof
