// The flight recorder's slow-step triggers: a step watch (core/step_watch)
// that notices StepTraces of watched names lasting longer than their
// threshold and hands each, at most once per cool-down, to a background
// thread it owns. The recording thread never blocks: it compares, takes the
// cool-down with one CAS and fills a per-trigger mailbox (or counts the
// step as missed when the mailbox is still full); the thread is woken with
// sem_post, which never blocks. On the background thread, before the
// handler runs, a "slow_step_trigger" event spanning the slow step is
// recorded (on that thread's line) so that a dump shows which step it was;
// the handler is expected to name the step in the dump's warnings.
#ifndef NEURONPROF_SRC_SESSION_SLOW_STEP_TRIGGER_H_
#define NEURONPROF_SRC_SESSION_SLOW_STEP_TRIGGER_H_

#include <semaphore.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "src/core/step_watch.h"

namespace neuronprof {
namespace session {

// One slow step, as the background thread hands it to the handler.
struct SlowStep {
  int trigger = 0;  // Index Arm returned.
  std::string step_name;
  int64_t step_num = 0;
  int64_t duration_ns = 0;
  int64_t threshold_ns = 0;
  uint64_t missed = 0;  // Slow steps of this trigger lost to a full mailbox so far.
};

class SlowStepTriggers final : public core::StepWatch {
 public:
  static constexpr int kMaxTriggers = 16;
  using Handler = std::function<void(const SlowStep&)>;

  // Installs the step watch (FailedPrecondition while another is installed)
  // and starts the background thread, which calls `handler` per slow step.
  static absl::StatusOr<std::unique_ptr<SlowStepTriggers>> Start(Handler handler);
  // Removes the watch, lets a handler call in progress finish, then ends the
  // thread; requests still queued are dropped.
  ~SlowStepTriggers() override;

  // Watches steps named `name` (a second call for a name replaces its
  // threshold and cool-down). Returns the trigger's index. InvalidArgument
  // for an empty name, threshold_ns <= 0 or cooldown_ns < 0;
  // ResourceExhausted past kMaxTriggers names.
  absl::StatusOr<int> Arm(std::string_view name, int64_t threshold_ns, int64_t cooldown_ns);

  uint32_t Match(std::string_view name) override;
  void OnStepEnd(const core::WatchedStep& step) override;

 private:
  enum Mailbox : int { kEmpty, kFilling, kFull };
  struct Trigger {
    std::string name;  // Written before `count_` publishes it; then constant.
    std::atomic<int64_t> threshold_ns{0};
    std::atomic<int64_t> cooldown_ns{0};
    std::atomic<int64_t> next_allowed_ns{INT64_MIN};
    std::atomic<uint64_t> missed{0};
    std::atomic<int> mailbox{kEmpty};
    core::WatchedStep pending;  // Owned by whoever moved the mailbox last.
  };

  explicit SlowStepTriggers(Handler handler);
  void Run();
  void Handle(Trigger& trigger, int index, const core::WatchedStep& step);

  const Handler handler_;
  std::mutex arm_mutex_;  // Serialises Arm.
  std::array<Trigger, kMaxTriggers> triggers_;
  std::atomic<int> count_{0};
  sem_t wake_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace session
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_SESSION_SLOW_STEP_TRIGGER_H_
