// neuronprof::FlightRecorder: a ring capture (session::FlightSession) plus
// writing dumps as logdir runs.
#include "neuronprof/flight_recorder.h"

#include <unistd.h>

#include <atomic>

#include "absl/strings/str_cat.h"
#include "src/api/run_writer.h"
#include "src/export/logdir.h"
#include "src/session/flight_session.h"

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
  if (options.host_tracer_level < 1 || options.host_tracer_level > 3) {
    return absl::InvalidArgumentError(absl::StrCat(
        "host_tracer_level must be 1..3 for a flight recorder, got ",
        options.host_tracer_level));
  }
  return absl::OkStatus();
}

}  // namespace

class FlightRecorder::Impl {
 public:
  explicit Impl(const FlightRecorderOptions& options) : options_(options) {
    status_ = ValidateFlightOptions(options_);
    if (!status_.ok()) return;
    auto session = session::FlightSession::Start(
        options_.host_tracer_level, static_cast<uint64_t>(options_.ring_bytes),
        "a FlightRecorder (it records until the FlightRecorder is destroyed)");
    if (!session.ok()) {
      status_ = absl::Status(session.status().code(),
                             absl::StrCat("cannot start the flight recorder: ",
                                          session.status().message()));
      return;
    }
    session_ = std::move(*session);
  }

  absl::Status status() const { return status_; }

  absl::StatusOr<ProfileResult> Dump(std::string_view reason, int64_t last_ms) {
    if (!status_.ok()) return status_;
    if (dumping_.exchange(true, std::memory_order_acquire)) {
      return absl::FailedPreconditionError(
          "a Dump of this FlightRecorder is already running; call Dump again once "
          "it has returned");
    }
    struct Done {
      std::atomic<bool>* flag;
      ~Done() { flag->store(false, std::memory_order_release); }
    } done{&dumping_};
    auto captured = session_->Snapshot(last_ms, kRingAdvice);
    if (!captured.ok()) return captured.status();
    return Write(reason, std::move(*captured));
  }

 private:
  // Dumps are named <time>_<reason> (a counter when one second holds two
  // with one reason) and written as every run is (api::RunWriter: working
  // folder, fallback folder when the logdir cannot be written).
  absl::StatusOr<ProfileResult> Write(std::string_view reason,
                                      session::CaptureResult captured) {
    const std::string plain_reason = exporter::ToPlainName(reason.substr(0, kMaxReasonBytes));
    const std::string base =
        absl::StrCat(exporter::RunNameForTime(captured.stop_epoch_ns),
                     plain_reason.empty() ? "" : "_", plain_reason);
    const std::string root = exporter::ProfileRoot(options_.logdir);
    std::string run = base;
    for (int n = 1; n < 100 && access(absl::StrCat(root, "/", run).c_str(), F_OK) == 0; ++n) {
      run = absl::StrCat(base, "_", n);
    }
    return writer_.Write(std::move(captured), run);
  }

  static ProfilerOptions RunOptions(const FlightRecorderOptions& options) {
    ProfilerOptions run;
    run.port = 0;  // A flight recorder starts no capture server.
    run.logdir = options.logdir;
    run.host_name = options.host_name;
    run.write_chrome_trace = options.write_chrome_trace;
    run.write_pytorch_trace = options.write_pytorch_trace;
    return run;
  }

  const FlightRecorderOptions options_;
  const ProfilerOptions run_options_ = RunOptions(options_);  // What writer_ reads.
  const api::RunWriter writer_{run_options_, absl::OkStatus()};
  absl::Status status_;
  std::unique_ptr<session::FlightSession> session_;
  std::atomic<bool> dumping_{false};
};

FlightRecorder::FlightRecorder(const FlightRecorderOptions& options)
    : impl_(std::make_unique<Impl>(options)) {}
FlightRecorder::~FlightRecorder() = default;
absl::Status FlightRecorder::status() const { return impl_->status(); }
absl::StatusOr<ProfileResult> FlightRecorder::Dump(std::string_view reason,
                                                   int64_t last_ms) {
  return impl_->Dump(reason, last_ms);
}

}  // namespace neuronprof
