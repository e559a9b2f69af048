// neuronprof::FlightRecorder: a ring capture (session::FlightSession) plus
// writing dumps as logdir runs.
#include "neuronprof/flight_recorder.h"

#include <array>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "src/api/run_writer.h"
#include "src/export/heap_trim.h"
#include "src/export/logdir.h"
#include "src/session/flight_session.h"
#include "src/session/fork_guard.h"
#include "src/session/signal_dump.h"
#include "src/session/slow_step_trigger.h"

namespace neuronprof {
namespace {

constexpr char kRingAdvice[] =
    "a thread filled its block while a dump copied the ring; raise "
    "FlightRecorderOptions::ring_bytes";
constexpr size_t kMaxReasonBytes = 64;  // Of the run folder's name.

absl::Status ValidateFlightOptions(const FlightRecorderOptions& options) {
  if (options.ring_bytes <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("ring_bytes must be positive, got ", options.ring_bytes));
  }
  if (options.logdir.empty()) {
    return absl::InvalidArgumentError("logdir must not be empty");
  }
  if (!options.host_name.empty()) {
    if (auto s = exporter::CheckPlainName(options.host_name, "host_name"); !s.ok()) {
      return s;
    }
  }
  if (options.port < 0 || options.port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("port must be 0..65535 (0 = no server), got ", options.port));
  }
  if (options.host_tracer_level < 1 || options.host_tracer_level > 3) {
    return absl::InvalidArgumentError(absl::StrCat(
        "host_tracer_level must be 1..3 for a flight recorder, got ", options.host_tracer_level));
  }
  return absl::OkStatus();
}

}  // namespace

class FlightRecorder::Impl {
 public:
  explicit Impl(const FlightRecorderOptions& options) : options_(options) {
    status_ = ValidateFlightOptions(options_);
    if (!status_.ok()) return;
    // The rank comes from the environment (RANK, LOCAL_RANK, WORLD_SIZE).
    auto identity = api::ResolveIdentity(run_options_);
    if (!identity.ok()) {
      status_ = identity.status();
      return;
    }
    auto session = session::FlightSession::Start(
        options_.host_tracer_level, static_cast<uint64_t>(options_.ring_bytes),
        "a FlightRecorder (it records until the FlightRecorder is destroyed; remote "
        "clients get its ring through the capture server, see "
        "FlightRecorderOptions::port)");
    if (!session.ok()) {
      status_ = absl::Status(
          session.status().code(),
          absl::StrCat("cannot start the flight recorder: ", session.status().message()));
      return;
    }
    session_ = std::move(*session);
    writer_ = std::make_unique<api::RunWriter>(run_options_, *identity,
                                               api::EnsureCaptureServer(run_options_, *identity));
    if (options_.dump_signal != 0) {
      auto watch = session::SignalDump::Start(options_.dump_signal, [this] { DumpOnSignal(); });
      if (!watch.ok()) {
        status_ = watch.status();
        session_.reset();  // Not recording: the next capture may start.
        return;
      }
      signal_dump_ = std::move(*watch);
    }
  }

  absl::Status status() const { return status_; }

  absl::StatusOr<ProfileResult> Dump(std::string_view reason, int64_t last_ms) {
    if (!status_.ok()) return status_;
    std::unique_lock<std::mutex> dumping(dump_mutex_, std::try_to_lock);
    if (!dumping.owns_lock()) {
      return absl::FailedPreconditionError(
          "a Dump of this FlightRecorder is already running; call Dump again once "
          "it has returned");
    }
    return DumpLocked(reason, last_ms, {});
  }

  absl::Status TriggerOnSlowStep(const SlowStepTrigger& trigger) {
    if (!status_.ok()) return status_;
    constexpr int64_t kMaxMs = int64_t{1} << 40;  // 34 years: ns fit int64.
    if (trigger.threshold_ms <= 0 || trigger.cooldown_ms < 0 || trigger.last_ms < 0 ||
        trigger.threshold_ms > kMaxMs || trigger.cooldown_ms > kMaxMs) {
      return absl::InvalidArgumentError(absl::StrCat(
          "a slow-step trigger needs 0 < threshold_ms <= 2^40, 0 <= cooldown_ms <= 2^40 and "
          "last_ms >= 0; "
          "got threshold_ms=",
          trigger.threshold_ms, ", cooldown_ms=", trigger.cooldown_ms,
          ", last_ms=", trigger.last_ms));
    }
    std::lock_guard<std::mutex> lock(trigger_mutex_);
    if (triggers_ == nullptr) {
      auto started = session::SlowStepTriggers::Start(
          [this](const session::SlowStep& slow) { DumpSlowStep(slow); });
      if (!started.ok()) return started.status();
      triggers_ = std::move(*started);
    }
    constexpr int64_t kNsPerMs = 1000000;
    auto index = triggers_->Arm(trigger.step_name, trigger.threshold_ms * kNsPerMs,
                                trigger.cooldown_ms * kNsPerMs);
    if (!index.ok()) return index.status();
    trigger_settings_[*index] = trigger;
    return absl::OkStatus();
  }

  // Stops the trigger and signal threads before anything they use goes.
  ~Impl() {
    signal_dump_.reset();
    triggers_.reset();
  }

 private:
  // On the signal thread.
  void DumpOnSignal() {
    const std::string name = session::SignalDump::SignalName(options_.dump_signal);
    DumpInBackground(
        absl::StrCat("signal_", name), 0,
        absl::StrCat("neuronprof: dumped on ", name, " (FlightRecorderOptions::dump_signal)"),
        options_.on_signal_dump);
  }

  // For the recorder's own threads (trigger, signal): waits for a running
  // dump to end, dumps, and hands the result to `on_dump` (if set).
  void DumpInBackground(std::string_view reason, int64_t last_ms, std::string_view note,
                        const std::function<void(const absl::StatusOr<ProfileResult>&)>& on_dump) {
    absl::StatusOr<ProfileResult> result;
    {
      std::lock_guard<std::mutex> dumping(dump_mutex_);
      result = DumpLocked(reason, last_ms, note);
    }
    if (on_dump) on_dump(result);
  }

  // On the trigger thread: waits for a user's Dump to end, then dumps.
  void DumpSlowStep(const session::SlowStep& slow) {
    SlowStepTrigger settings;
    {
      std::lock_guard<std::mutex> lock(trigger_mutex_);
      settings = trigger_settings_[slow.trigger];
    }
    const int64_t duration_ms = slow.duration_ns / 1000000;
    std::string note =
        absl::StrCat("neuronprof: slow-step trigger: step \"", slow.step_name, "\" (step_num ",
                     slow.step_num, ") took ", static_cast<double>(slow.duration_ns) / 1e6,
                     " ms, over its threshold of ", static_cast<double>(slow.threshold_ns) / 1e6,
                     " ms; the event slow_step_trigger on thread neuronprof_trigger spans it");
    if (slow.missed > 0) {
      absl::StrAppend(&note, "; ", slow.missed,
                      " slow steps of this name came while an earlier one waited for "
                      "its dump and were not dumped");
    }
    DumpInBackground(absl::StrCat("slow_", slow.step_name, "_", duration_ms, "ms"),
                     settings.last_ms, note, settings.on_dump);
  }

  // The ring's copy is a mapping of its own, unmapped when the dump ends.
  // No XSpace is built: the host plane is streamed into the xplane.pb a
  // chunk of events at a time, then built again in fragments for the
  // Chrome and Kineto files when asked (RunWriter::WriteStreamed): the
  // dump holds the copy and one chunk or fragment.
  absl::StatusOr<ProfileResult> DumpLocked(std::string_view reason, int64_t last_ms,
                                           std::string_view note) {
    auto snapshot = session_->SnapshotForStreaming(last_ms, kRingAdvice, note);
    if (!snapshot.ok()) return snapshot.status();
    absl::StatusOr<ProfileResult> written = Write(reason, &*snapshot);
    exporter::ReleaseFreedHeap();  // A dump's heap back to the system.
    return written;
  }

  // Dumps are named <time>_<reason>, or <time>_<reason>_<n> when that is
  // taken (n: this recorder's counter, so a storm of dumps in one second
  // never runs out of names), and written as every run is (api::RunWriter:
  // working folder, fallback folder when the logdir cannot be written).
  absl::StatusOr<ProfileResult> Write(std::string_view reason, session::StreamedCapture* captured) {
    const std::string plain_reason = exporter::ToPlainName(reason.substr(0, kMaxReasonBytes));
    const std::string run = absl::StrCat(exporter::RunNameForTime(captured->result.stop_epoch_ns),
                                         plain_reason.empty() ? "" : "_", plain_reason);
    return writer_->WriteStreamed(captured, run, &next_run_number_);
  }

  static ProfilerOptions RunOptions(const FlightRecorderOptions& options) {
    ProfilerOptions run;
    run.port = options.port;
    run.logdir = options.logdir;
    run.host_name = options.host_name;
    run.write_chrome_trace = options.write_chrome_trace;
    run.write_pytorch_trace = options.write_pytorch_trace;
    return run;
  }

  const FlightRecorderOptions options_;
  const ProfilerOptions run_options_ = RunOptions(options_);  // What writer_ reads.
  absl::Status status_;
  // Made once recording runs: with it the port's server, whose failure
  // becomes a warning of every dump.
  std::unique_ptr<const api::RunWriter> writer_;
  std::unique_ptr<session::FlightSession> session_;
  std::mutex dump_mutex_;         // Held by the Dump that runs.
  uint64_t next_run_number_ = 1;  // Guarded by dump_mutex_: Write's counter.
  std::mutex trigger_mutex_;      // Guards the two below.
  std::array<SlowStepTrigger, session::SlowStepTriggers::kMaxTriggers> trigger_settings_;
  std::unique_ptr<session::SlowStepTriggers> triggers_;
  std::unique_ptr<session::SignalDump> signal_dump_;

 public:
  const session::OwnerProcess owner;  // A forked child's copy is inert.
};

FlightRecorder::FlightRecorder(const FlightRecorderOptions& options)
    : impl_(std::make_unique<Impl>(options)) {}
FlightRecorder::~FlightRecorder() {
  // A forked child has none of the threads the Impl would stop.
  if (impl_->owner.ForkedCopy()) session::OwnerProcess::LeaveAlone(impl_);
}
absl::Status FlightRecorder::status() const {
  if (impl_->owner.ForkedCopy()) return impl_->owner.ForkedCopyError("this FlightRecorder");
  return impl_->status();
}
absl::StatusOr<ProfileResult> FlightRecorder::Dump(std::string_view reason, int64_t last_ms) {
  if (impl_->owner.ForkedCopy()) return impl_->owner.ForkedCopyError("this FlightRecorder");
  return impl_->Dump(reason, last_ms);
}
absl::Status FlightRecorder::TriggerOnSlowStep(std::string_view step_name, int64_t threshold_ms,
                                               int64_t cooldown_ms) {
  SlowStepTrigger trigger;
  trigger.step_name = std::string(step_name);
  trigger.threshold_ms = threshold_ms;
  trigger.cooldown_ms = cooldown_ms;
  return TriggerOnSlowStep(trigger);
}
absl::Status FlightRecorder::TriggerOnSlowStep(const SlowStepTrigger& trigger) {
  if (impl_->owner.ForkedCopy()) return impl_->owner.ForkedCopyError("this FlightRecorder");
  return impl_->TriggerOnSlowStep(trigger);
}

}  // namespace neuronprof
