#include "src/api/scheduled_profiler.h"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "src/api/run_writer.h"
#include "src/api/step_schedule.h"
#include "src/session/capture_session.h"

namespace neuronprof {
namespace api {
namespace {

bool IsActive(StepAction action) {
  return action == StepAction::kRecord || action == StepAction::kRecordAndSave;
}

// A cycle's capture, stopped and collected, on its way to the writer.
struct StoppedCycle {
  absl::StatusOr<session::CaptureResult> captured;
  int64_t cycle = 0;
  int64_t steps = 0;
};

// Two threads: the caller's (Step, Stop), which starts and stops captures,
// and the writer, which writes the stopped ones in order. Only stopping
// and collecting a capture happen on the caller's thread; once collected,
// the process's one capture is free again, so the next cycle can start
// while earlier ones are still being written.
class ScheduledProfiler : public Profiler::Impl {
 public:
  explicit ScheduledProfiler(const ProfilerOptions& options)
      : options_(options),
        schedule_(*options_.schedule),
        identity_(ResolveIdentity(options_).value_or(xplane::JobIdentity())),
        files_(options_, identity_, EnsureCaptureServer(options_, identity_)) {
    // Refuse kOperator without an operator collector now, not at the
    // first warmup many steps later.
    init_status_ =
        session::CaptureSession::CheckCollectors(ToCollectorOptions(options_, identity_));
    if (!init_status_.ok()) return;
    writer_ = std::thread([this] { WriteCycles(); });
    writer_id_ = writer_.get_id();
    std::lock_guard<std::mutex> lock(step_mutex_);
    // Step 0 runs from construction, as torch's profiler.start().
    if (ActionForStep(schedule_, 0) != StepAction::kNone) {
      BeginCycle().IgnoreError();  // Kept for status().
    }
  }

  ~ScheduledProfiler() override { Stop().IgnoreError(); }

  absl::Status status() const override {
    if (!init_status_.ok()) return init_status_;
    std::lock_guard<std::mutex> lock(mutex_);
    return first_error_;
  }

  bool capturing() const override { return recording_.load(std::memory_order_relaxed); }

  absl::Status Step() override {
    if (!init_status_.ok()) return init_status_;
    std::lock_guard<std::mutex> lock(step_mutex_);
    if (stopped_) {
      return absl::FailedPreconditionError(
          "Profiler::Step() after Profiler::Stop(): the schedule has ended; "
          "construct a new Profiler to record more cycles");
    }
    const StepAction ended = ActionForStep(schedule_, step_);
    const StepAction next = ActionForStep(schedule_, ++step_);
    if (session_ != nullptr && IsActive(ended)) ++cycle_steps_;
    if (ended == StepAction::kRecordAndSave) EndCycle(/*write=*/true);
    if (next == StepAction::kNone) return absl::OkStatus();
    if (ended == StepAction::kWarmup) {
      // Recording goes on into the active phase; the warmup is dropped.
      if (IsActive(next) && session_ != nullptr) session_->DiscardEarlierEvents();
      return absl::OkStatus();
    }
    if (ended == StepAction::kNone || ended == StepAction::kRecordAndSave) {
      return BeginCycle();
    }
    return absl::OkStatus();
  }

  absl::StatusOr<ProfileResult> Stop() override {
    if (!init_status_.ok()) return init_status_;
    if (std::this_thread::get_id() == writer_id_) {
      return absl::FailedPreconditionError(
          "Profiler::Stop() was called from on_trace_ready, which runs on the "
          "Profiler's writer thread and cannot wait for itself; call Stop() "
          "from the thread that calls Step()");
    }
    int64_t steps = 0;
    {
      std::lock_guard<std::mutex> lock(step_mutex_);
      if (!stopped_) {
        stopped_ = true;
        // Inside an active phase the steps so far are a (short) cycle;
        // inside a warmup nothing was recorded to keep (torch does the same).
        EndCycle(/*write=*/IsActive(ActionForStep(schedule_, step_)));
      }
      steps = step_;
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      closing_ = true;
    }
    wake_.notify_all();
    {
      std::lock_guard<std::mutex> lock(join_mutex_);
      if (writer_.joinable()) writer_.join();
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (!results_.empty()) return results_.back();
    if (!first_error_.ok()) return first_error_;
    return absl::FailedPreconditionError(
        absl::StrCat("no cycle of the schedule was recorded: Profiler::Step() was called ", steps,
                     " times and the first active step is step ", FirstActiveStep(schedule_),
                     " (schedule skip_first + wait + warmup; steps count from 0)"));
  }

  // No time window to wait for: steps end the phases.
  absl::StatusOr<ProfileResult> Wait() override { return Stop(); }

  std::vector<absl::StatusOr<ProfileResult>> Results() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    return results_;
  }

 private:
  // Starts the capture of the cycle that step_ begins. Under step_mutex_.
  absl::Status BeginCycle() {
    const int64_t cycle = CycleOfStep(schedule_, step_);
    auto session = session::CaptureSession::Start(
        ToCollectorOptions(options_, identity_),
        absl::StrCat("a Profiler with a schedule (its cycle ", cycle,
                     " ends at the Profiler::Step() after its last active step, or "
                     "at Profiler::Stop())"));
    if (!session.ok()) {
      absl::Status skipped(session.status().code(),
                           absl::StrCat("cycle ", cycle, " of the schedule was skipped: ",
                                        session.status().message()));
      RecordError(skipped);
      return skipped;
    }
    session_ = std::move(*session);
    cycle_ = cycle;
    cycle_steps_ = 0;
    recording_.store(true, std::memory_order_relaxed);
    return absl::OkStatus();
  }

  // Stops and collects the running cycle (the gate is free afterwards) and,
  // with `write`, hands it to the writer. Under step_mutex_.
  void EndCycle(bool write) {
    if (session_ == nullptr) return;  // This cycle was skipped.
    StoppedCycle stopped{session_->Stop(), cycle_, cycle_steps_};
    session_.reset();
    recording_.store(false, std::memory_order_relaxed);
    if (!write) return;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      pending_.push_back(std::move(stopped));
    }
    wake_.notify_all();
  }

  void RecordError(const absl::Status& error) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (first_error_.ok()) first_error_ = error;
  }

  // The writer thread: every stopped cycle, in order, until Stop().
  void WriteCycles() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      wake_.wait(lock, [this] { return closing_ || !pending_.empty(); });
      if (pending_.empty()) return;
      StoppedCycle cycle = std::move(pending_.front());
      pending_.pop_front();
      lock.unlock();
      absl::StatusOr<ProfileResult> result = Write(std::move(cycle));
      lock.lock();
      if (!result.ok() && first_error_.ok()) first_error_ = result.status();
      // Listed once its callback has returned: after Stop(), all have run.
      results_.push_back(std::move(result));
    }
  }

  absl::StatusOr<ProfileResult> Write(StoppedCycle cycle) const {
    if (!cycle.captured.ok()) return cycle.captured.status();
    const std::string run =
        options_.run_name.empty() ? "" : CycleRunName(options_.run_name, cycle.cycle);
    auto result = files_.Write(&*cycle.captured, run);
    if (!result.ok()) {
      return absl::Status(result.status().code(),
                          absl::StrCat("cycle ", cycle.cycle, ": ", result.status().message()));
    }
    result->cycle = cycle.cycle;
    result->steps = cycle.steps;
    files_.NotifyTraceReady(&*result);
    return result;
  }

  const ProfilerOptions options_;
  const ProfilerSchedule schedule_;
  const xplane::JobIdentity identity_;  // Validated by NewProfiler.
  const RunWriter files_;
  absl::Status init_status_;
  std::atomic<bool> recording_{false};

  // The caller's side.
  std::mutex step_mutex_;
  int64_t step_ = 0;  // The step running now, counted from 0.
  bool stopped_ = false;
  std::unique_ptr<session::CaptureSession> session_;  // Warmup or active.
  int64_t cycle_ = 0;
  int64_t cycle_steps_ = 0;  // Active steps of this cycle that ended.

  // Shared with the writer.
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<StoppedCycle> pending_;
  bool closing_ = false;
  absl::Status first_error_;
  std::vector<absl::StatusOr<ProfileResult>> results_;

  std::mutex join_mutex_;
  std::thread writer_;
  std::thread::id writer_id_;
};

}  // namespace

std::unique_ptr<Profiler::Impl> NewScheduledProfiler(const ProfilerOptions& options) {
  return std::make_unique<ScheduledProfiler>(options);
}

}  // namespace api
}  // namespace neuronprof
