// neuronprof::Profiler: options, and one capture window plus writing the
// logdir (WindowProfiler); step schedules are in scheduled_profiler.
#include "neuronprof/profiler.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "absl/strings/str_cat.h"
#include "src/api/run_writer.h"
#include "src/api/scheduled_profiler.h"
#include "src/api/step_schedule.h"
#include "src/export/logdir.h"
#include "src/session/capture_session.h"
#include "src/xplane/saturating.h"
#include "src/xplane/xplane_builder.h"

namespace neuronprof {

absl::Status ValidateOptions(const ProfilerOptions& options) {
  if (options.port < 0 || options.port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("port must be 0..65535 (0 = no server), got ", options.port));
  }
  if (options.max_ms_duration <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_ms_duration must be positive, got ", options.max_ms_duration));
  }
  if (options.ms_duration <= 0 || options.ms_duration > options.max_ms_duration) {
    return absl::InvalidArgumentError(
        absl::StrCat("ms_duration must be 1..", options.max_ms_duration, " (max_ms_duration), got ",
                     options.ms_duration));
  }
  if (options.logdir.empty()) {
    return absl::InvalidArgumentError("logdir must not be empty");
  }
  if (!options.run_name.empty()) {
    if (auto s = exporter::CheckPlainName(options.run_name, "run_name"); !s.ok()) {
      return s;
    }
  }
  if (!options.host_name.empty()) {
    if (auto s = exporter::CheckPlainName(options.host_name, "host_name"); !s.ok()) {
      return s;
    }
  }
  if (options.host_tracer_level < 0 || options.host_tracer_level > 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("host_tracer_level must be 0..3, got ", options.host_tracer_level));
  }
  if (options.device_tracer_level < 0 || options.device_tracer_level > 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("device_tracer_level must be 0..2 (0 = no device plug-ins or CUPTI), "
                     "got ",
                     options.device_tracer_level));
  }
  if (options.schedule.has_value()) {
    if (auto s = api::ValidateSchedule(*options.schedule); !s.ok()) return s;
    // Each cycle's run is <run_name>_cycle_NNNN: the name must stay plain
    // and fit a file name with that suffix.
    if (!options.run_name.empty()) {
      if (auto s =
              exporter::CheckPlainName(api::CycleRunName(options.run_name, api::kMaxPaddedCycle),
                                       "run_name (with a schedule, plus its _cycle_NNNN suffix)");
          !s.ok()) {
        return s;
      }
    }
  }
  auto identity = api::ResolveIdentity(options);
  if (!identity.ok()) return identity.status();
  if (options.port != 0 && api::ServerPort(options, *identity) > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("port ", options.port, " + local_rank ", identity->local_rank,
                     " is beyond 65535: lower port, or set port_offset_by_local_rank to false"));
  }
  constexpr int64_t kMinBuffer = 64 * 1024;
  constexpr int64_t kMaxBuffer = int64_t{1} << 40;
  if (options.max_buffer_bytes < kMinBuffer || options.max_buffer_bytes > kMaxBuffer) {
    return absl::InvalidArgumentError(absl::StrCat("max_buffer_bytes must be ", kMinBuffer, "..",
                                                   kMaxBuffer, ", got ", options.max_buffer_bytes));
  }
  return absl::OkStatus();
}

namespace {

// One capture from construction until ms_duration, Stop() or destruction.
class WindowProfiler : public Profiler::Impl {
 public:
  explicit WindowProfiler(const ProfilerOptions& options)
      : options_(options),
        identity_(api::ResolveIdentity(options_).value_or(xplane::JobIdentity())),
        files_(options_, identity_, api::EnsureCaptureServer(options_, identity_)) {
    auto session = session::CaptureSession::Start(
        api::ToCollectorOptions(options_, identity_),
        absl::StrCat("a Profiler (its ", options_.ms_duration,
                     " ms window ends by itself, or at Profiler::Stop())"));
    if (!session.ok()) {
      status_ = session.status();
      return;
    }
    session_ = std::move(*session);
    capturing_ = true;
    // Saturating: a window past what the clock counts lasts until Stop().
    deadline_ = SaturatingTimeAfter(std::chrono::steady_clock::now(), options_.ms_duration);
    timer_ = std::thread([this] { RunTimer(); });
  }

  ~WindowProfiler() override {
    Stop().IgnoreError();  // Joins the timer, which started `release_`.
    if (release_.joinable()) release_.join();
  }

  absl::Status status() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!status_.ok()) return status_;
    if (result_.has_value() && !result_->ok()) return result_->status();
    return absl::OkStatus();
  }

  bool capturing() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    return capturing_;
  }

  absl::StatusOr<ProfileResult> Stop() override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_requested_ = true;
    }
    wake_.notify_all();
    absl::StatusOr<ProfileResult> result = Wait();
    std::lock_guard<std::mutex> lock(mutex_);
    if (counting_late_steps_) {
      counting_late_steps_ = false;
      const int64_t steps = std::max(session::StopCountingUnrecordedSteps(), late_profiler_steps_);
      if (steps > 0 && result_->ok()) {
        ReplaceWindowWarning(&(*result_)->warnings, steps);
        result = *result_;
      }
    }
    return result;
  }

  absl::StatusOr<ProfileResult> Wait() override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      awaited_ = true;  // WaitForCompletion: the program waits for the window.
    }
    {
      std::lock_guard<std::mutex> lock(join_mutex_);
      if (timer_.joinable()) timer_.join();
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (!status_.ok()) return status_;
    return *result_;
  }

  // torch's prof.step() without a schedule: nothing to record, but a step
  // after the window ended is one the window missed.
  absl::Status Step() override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (counting_late_steps_) ++late_profiler_steps_;
    return absl::OkStatus();
  }

  std::vector<absl::StatusOr<ProfileResult>> Results() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!result_.has_value()) return {};
    return {*result_};
  }

 private:
  void RunTimer() {
    std::unique_lock<std::mutex> lock(mutex_);
    if (deadline_ == std::chrono::steady_clock::time_point::max()) {
      wake_.wait(lock, [this] { return stop_requested_; });
    } else {
      wake_.wait_until(lock, deadline_, [this] { return stop_requested_; });
    }
    // The window ended by itself while the program ran on (neither Stop()
    // nor WaitForCompletion() asked for its end): say so in the files, and
    // count the steps that follow until Stop().
    const bool cut = !stop_requested_ && !awaited_;
    lock.unlock();
    absl::StatusOr<ProfileResult> result = StopAndWrite(cut);
    if (result.ok()) files_.NotifyTraceReady(&*result);
    lock.lock();
    capturing_ = false;
    result_ = std::move(result);
  }

  // Host markers alone are written from their records, each file in a
  // pass over them, never as a whole XSpace (a peak of a few times their
  // bytes); any other capture is collected into one.
  absl::StatusOr<ProfileResult> StopAndWrite(bool cut) {
    if (session_->CanStreamHostPlane()) {
      auto streamed = session_->StopForStreaming();
      Stopped(cut, streamed.ok() ? &streamed->result.space : nullptr);
      if (!streamed.ok()) return streamed.status();
      return files_.WriteStreamed(&*streamed, options_.run_name);
    }
    auto captured = session_->Stop();
    Stopped(cut, captured.ok() ? &captured->space : nullptr);
    if (!captured.ok()) return captured.status();
    absl::StatusOr<ProfileResult> result = files_.Write(&*captured, options_.run_name);
    // The files are written: the XSpace's memory (~200 MB for a million
    // operators, a few hundred mappings) goes back on a thread of its own
    // instead of before Stop() returns.
    release_ =
        std::thread([captured = std::make_unique<session::CaptureResult>(std::move(*captured))] {});
    return result;
  }

  // The window ended by itself (`cut`): say so in the files, and count the
  // steps that follow until Stop(), from now (not after the writing).
  void Stopped(bool cut, tensorflow::profiler::XSpace* space) {
    if (!cut) return;
    if (space != nullptr) xplane::AddWarning(space, WindowWarning());
    session::StartCountingUnrecordedSteps();
    std::lock_guard<std::mutex> lock(mutex_);
    counting_late_steps_ = true;
  }

  std::string WindowWarning() const {
    return absl::StrCat("ms_duration=", options_.ms_duration, " ended the window at ",
                        options_.ms_duration,
                        " ms while the program ran on (before Profiler::Stop()): what it did "
                        "after is not recorded; raise ProfilerOptions::ms_duration");
  }

  // The window's warning in a result, made precise once Stop() knows how
  // many steps ran after it.
  void ReplaceWindowWarning(std::vector<std::string>* warnings, int64_t steps) const {
    const std::string precise =
        absl::StrCat("ms_duration=", options_.ms_duration, " ended the window at ",
                     options_.ms_duration, " ms; ", steps, " more step", steps == 1 ? "" : "s",
                     " ran after it: raise ProfilerOptions::ms_duration");
    for (std::string& warning : *warnings) {
      if (warning == WindowWarning()) {
        warning = precise;
        return;
      }
    }
    warnings->push_back(precise);
  }

  const ProfilerOptions options_;
  const xplane::JobIdentity identity_;  // Validated by NewProfiler.
  const api::RunWriter files_;
  mutable std::mutex mutex_;
  std::mutex join_mutex_;
  std::condition_variable wake_;
  absl::Status status_;
  std::unique_ptr<session::CaptureSession> session_;
  bool capturing_ = false;
  bool stop_requested_ = false;
  bool awaited_ = false;              // WaitForCompletion() was called.
  bool counting_late_steps_ = false;  // The window ended by itself; not yet stopped.
  int64_t late_profiler_steps_ = 0;   // Step() calls since then.
  std::chrono::steady_clock::time_point deadline_;
  std::optional<absl::StatusOr<ProfileResult>> result_;
  std::thread timer_;
  std::thread release_;  // Frees the written capture; joined at destruction.
};

// Bad options: nothing starts, every call reports why.
class RefusedProfiler : public Profiler::Impl {
 public:
  explicit RefusedProfiler(absl::Status status) : status_(std::move(status)) {}
  absl::Status status() const override { return status_; }
  bool capturing() const override { return false; }
  absl::StatusOr<ProfileResult> Stop() override { return status_; }
  absl::StatusOr<ProfileResult> Wait() override { return status_; }
  absl::Status Step() override { return status_; }
  std::vector<absl::StatusOr<ProfileResult>> Results() const override { return {}; }

 private:
  const absl::Status status_;
};

std::unique_ptr<Profiler::Impl> NewProfiler(const ProfilerOptions& options) {
  if (absl::Status valid = ValidateOptions(options); !valid.ok()) {
    return std::make_unique<RefusedProfiler>(std::move(valid));
  }
  if (options.schedule.has_value()) return api::NewScheduledProfiler(options);
  return std::make_unique<WindowProfiler>(options);
}

}  // namespace

Profiler::Profiler(const ProfilerOptions& options) : impl_(NewProfiler(options)) {}
Profiler::~Profiler() {
  // A forked child has none of the threads the Impl would join.
  if (impl_->owner.ForkedCopy()) session::OwnerProcess::LeaveAlone(impl_);
}
absl::Status Profiler::status() const {
  if (impl_->owner.ForkedCopy()) return impl_->owner.ForkedCopyError("this Profiler");
  return impl_->status();
}
bool Profiler::capturing() const { return !impl_->owner.ForkedCopy() && impl_->capturing(); }
absl::StatusOr<ProfileResult> Profiler::Stop() {
  if (impl_->owner.ForkedCopy()) return impl_->owner.ForkedCopyError("this Profiler");
  return impl_->Stop();
}
absl::StatusOr<ProfileResult> Profiler::WaitForCompletion() {
  if (impl_->owner.ForkedCopy()) return impl_->owner.ForkedCopyError("this Profiler");
  return impl_->Wait();
}
absl::Status Profiler::Step() {
  if (impl_->owner.ForkedCopy()) return impl_->owner.ForkedCopyError("this Profiler");
  return impl_->Step();
}
std::vector<absl::StatusOr<ProfileResult>> Profiler::cycle_results() const {
  if (impl_->owner.ForkedCopy()) return {};
  return impl_->Results();
}

}  // namespace neuronprof
