// neuronprof::FlightRecorder: a ring capture (session::FlightSession) plus
// writing dumps as logdir runs.
#include "neuronprof/flight_recorder.h"

#include <atomic>

#include "absl/strings/str_cat.h"
#include "src/export/atomic_file.h"
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
  absl::StatusOr<ProfileResult> Write(std::string_view reason,
                                      session::CaptureResult captured) {
    const std::string host =
        options_.host_name.empty() ? exporter::LocalHostName() : options_.host_name;
    captured.space.add_hostnames(host);
    ProfileResult result;
    result.events = captured.stats.events;
    result.threads = captured.stats.threads;
    result.dropped_events = captured.stats.dropped;
    result.duration_ns = captured.stop_epoch_ns - captured.start_epoch_ns;
    for (const std::string& warning : captured.space.warnings()) {
      result.warnings.push_back(warning);
    }
    std::string plain_reason = exporter::ToPlainName(reason.substr(0, kMaxReasonBytes));
    const std::string base =
        absl::StrCat(exporter::RunNameForTime(captured.stop_epoch_ns),
                     plain_reason.empty() ? "" : "_", plain_reason);
    // Two dumps in one second with one reason: the second gets a counter.
    absl::StatusOr<std::string> run_dir;
    for (int n = 0; n < 100; ++n) {
      run_dir = exporter::CreateRunDirectory(
          options_.logdir, n == 0 ? base : absl::StrCat(base, "_", n),
          captured.stop_epoch_ns);
      if (!absl::IsAlreadyExists(run_dir.status())) break;
    }
    if (!run_dir.ok()) return run_dir.status();
    result.run_dir = *run_dir;
    exporter::ExportOptions export_options;
    export_options.chrome_trace = options_.write_chrome_trace;
    const std::string run = run_dir->substr(run_dir->rfind('/') + 1);
    if (options_.write_pytorch_trace) {
      export_options.pytorch_trace_dir = absl::StrCat(options_.logdir, "/", run);
    }
    auto files = exporter::WriteProfileFiles(captured.space, *run_dir, host, export_options);
    if (!files.ok()) {
      exporter::RemoveTree(*run_dir);  // Ours (made exclusively), half-written.
      return files.status();
    }
    result.files = std::move(*files);
    return result;
  }

  const FlightRecorderOptions options_;
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
