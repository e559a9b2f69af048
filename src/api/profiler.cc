// neuronprof::Profiler: one capture window plus writing the logdir.
#include "neuronprof/profiler.h"

#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <thread>

#include "absl/strings/str_cat.h"
#include "src/export/atomic_file.h"
#include "src/export/logdir.h"
#include "src/rpc/process_server.h"
#include "src/session/capture_session.h"

namespace neuronprof {
namespace {

constexpr char kWorkingDirName[] = ".neuronprof_working";

collectors::CaptureOptions ToCaptureOptions(const ProfilerOptions& options) {
  collectors::CaptureOptions capture;
  capture.host_tracer_level = options.host_tracer_level;
  capture.device_tracer_level = options.device_tracer_level;
  capture.operators = options.profile_type == ProfileType::kOperator;
  capture.require_operators = capture.operators;
  capture.max_buffer_bytes = static_cast<uint64_t>(options.max_buffer_bytes);
  return capture;
}

}  // namespace

absl::Status ValidateOptions(const ProfilerOptions& options) {
  if (options.port < 0 || options.port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("port must be 0..65535 (0 = no server), got ", options.port));
  }
  if (options.max_ms_duration <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "max_ms_duration must be positive, got ", options.max_ms_duration));
  }
  if (options.ms_duration <= 0 || options.ms_duration > options.max_ms_duration) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ms_duration must be 1..", options.max_ms_duration,
        " (max_ms_duration), got ", options.ms_duration));
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
    return absl::InvalidArgumentError(absl::StrCat(
        "host_tracer_level must be 0..3, got ", options.host_tracer_level));
  }
  if (options.device_tracer_level < 0 || options.device_tracer_level > 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "device_tracer_level must be 0..2 (0 = no device plug-ins or CUPTI), "
        "got ", options.device_tracer_level));
  }
  constexpr int64_t kMinBuffer = 64 * 1024;
  constexpr int64_t kMaxBuffer = int64_t{1} << 40;
  if (options.max_buffer_bytes < kMinBuffer ||
      options.max_buffer_bytes > kMaxBuffer) {
    return absl::InvalidArgumentError(absl::StrCat(
        "max_buffer_bytes must be ", kMinBuffer, "..", kMaxBuffer, ", got ",
        options.max_buffer_bytes));
  }
  return absl::OkStatus();
}

class Profiler::Impl {
 public:
  explicit Impl(const ProfilerOptions& options) : options_(options) {
    status_ = ValidateOptions(options_);
    if (!status_.ok()) return;
    // The capture goes on without the server: losing the window because
    // another program holds the port would cost more than the warning.
    if (options_.port != 0) {
      server_status_ = rpc::EnsureProcessServer(options_.port, options_.logdir,
                                                options_.max_buffer_bytes);
    }
    auto session = session::CaptureSession::Start(
        ToCaptureOptions(options_),
        absl::StrCat("a Profiler (its ", options_.ms_duration,
                     " ms window ends by itself, or at Profiler::Stop())"));
    if (!session.ok()) {
      status_ = session.status();
      return;
    }
    session_ = std::move(*session);
    capturing_ = true;
    deadline_ = std::chrono::steady_clock::now() +
                std::chrono::milliseconds(options_.ms_duration);
    timer_ = std::thread([this] { RunTimer(); });
  }

  ~Impl() { Stop().IgnoreError(); }

  absl::Status status() const {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!status_.ok()) return status_;
    if (result_.has_value() && !result_->ok()) return result_->status();
    return absl::OkStatus();
  }

  bool capturing() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return capturing_;
  }

  absl::StatusOr<ProfileResult> Stop() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_requested_ = true;
    }
    wake_.notify_all();
    return Wait();
  }

  absl::StatusOr<ProfileResult> Wait() {
    {
      std::lock_guard<std::mutex> lock(join_mutex_);
      if (timer_.joinable()) timer_.join();
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (!status_.ok()) return status_;
    return *result_;
  }

 private:
  void RunTimer() {
    std::unique_lock<std::mutex> lock(mutex_);
    wake_.wait_until(lock, deadline_, [this] { return stop_requested_; });
    lock.unlock();
    auto captured = session_->Stop();
    absl::StatusOr<ProfileResult> result =
        captured.ok() ? WriteLogdir(std::move(*captured)) : captured.status();
    lock.lock();
    capturing_ = false;
    result_ = std::move(result);
  }

  absl::StatusOr<ProfileResult> WriteLogdir(session::CaptureResult captured) {
    const std::string host =
        options_.host_name.empty() ? exporter::LocalHostName() : options_.host_name;
    captured.space.add_hostnames(host);
    ProfileResult result;
    result.events = captured.stats.events;
    result.threads = captured.stats.threads;
    result.dropped_events = captured.stats.dropped;
    result.duration_ns = captured.stop_epoch_ns - captured.start_epoch_ns;
    if (options_.port != 0 && server_status_.ok()) result.server_port = options_.port;
    if (!server_status_.ok()) {
      result.warnings.push_back(absl::StrCat(
          "no capture server: ", server_status_.message(),
          " (ProfilerOptions::port; 0 = no server)"));
    }
    for (const std::string& warning : captured.space.warnings()) {
      result.warnings.push_back(warning);
    }
    for (const std::string& error : captured.space.errors()) {
      result.warnings.push_back(absl::StrCat("error: ", error));
    }

    auto run_dir = exporter::CreateRunDirectory(options_.logdir, options_.run_name,
                                                captured.start_epoch_ns);
    absl::Status written = run_dir.status();
    if (run_dir.ok()) {
      result.run_dir = *run_dir;
      written = WriteRun(captured.space, *run_dir, host, &result.files);
      if (written.ok()) return result;
      exporter::RemoveTree(*run_dir);  // Ours (made exclusively), half-written.
    }
    // Keep the capture: write it where we can and say where.
    const std::string run =
        options_.run_name.empty() ? exporter::RunNameForTime(captured.start_epoch_ns)
                                  : options_.run_name;
    auto fallback = exporter::CreateFallbackDirectory(run);
    absl::Status fallback_status = fallback.status();
    if (fallback.ok()) {
      exporter::ExportOptions export_options;
      export_options.chrome_trace = options_.write_chrome_trace;
      if (options_.write_pytorch_trace) export_options.pytorch_trace_dir = *fallback;
      fallback_status =
          exporter::WriteProfileFiles(captured.space, *fallback, host, export_options)
              .status();
      if (!fallback_status.ok()) exporter::RemoveTree(*fallback);
    }
    if (fallback_status.ok()) {
      return absl::Status(
          written.code(),
          absl::StrCat("cannot write the profile to logdir '", options_.logdir,
                       "': ", written.message(), ". The capture (",
                       result.events, " events) was saved to '", *fallback,
                       "/' instead; copy that folder to <logdir>/plugins/profile/"));
    }
    return absl::Status(
        written.code(),
        absl::StrCat("cannot write the profile to logdir '", options_.logdir,
                     "': ", written.message(),
                     "; the fallback folder failed too: ",
                     fallback_status.message()));
  }

  // The raw capture is serialized once, into the working folder, and moved
  // (or, with delete_working false, hard-linked) into the run folder beside
  // the viewer files; the working folder goes unless delete_working is false.
  absl::Status WriteRun(const tensorflow::profiler::XSpace& space,
                        const std::string& run_dir, const std::string& host,
                        std::vector<std::string>* files) {
    const std::string run = run_dir.substr(run_dir.rfind('/') + 1);
    const std::string working_root =
        absl::StrCat(options_.logdir, "/", kWorkingDirName);
    const std::string working = absl::StrCat(working_root, "/", run);
    // On failure nothing of this run stays: no working copy, no empty
    // folders (the caller removes the run folder).
    auto remove_working = [&] {
      exporter::RemoveTree(working);
      rmdir(working_root.c_str());  // Only if no other run left files there.
    };
    if (auto s = exporter::MakeDirectories(working); !s.ok()) {
      remove_working();
      return s;
    }
    exporter::ExportOptions export_options;
    export_options.chrome_trace = options_.write_chrome_trace;
    export_options.xplane_staging_dir = working;
    export_options.keep_staged_xplane = !options_.delete_working;
    // torch-tb-profiler takes every folder holding *.pt.trace.json.gz as a
    // run: <logdir>/<run>/ shows up under the same name as in xprof.
    if (options_.write_pytorch_trace) {
      export_options.pytorch_trace_dir = absl::StrCat(options_.logdir, "/", run);
    }
    auto exported = exporter::WriteProfileFiles(space, run_dir, host, export_options);
    if (!exported.ok()) {
      remove_working();
      if (!export_options.pytorch_trace_dir.empty()) {
        rmdir(export_options.pytorch_trace_dir.c_str());  // Only if empty.
      }
      return exported.status();
    }
    *files = *exported;
    if (options_.delete_working) remove_working();
    return absl::OkStatus();
  }

  const ProfilerOptions options_;
  mutable std::mutex mutex_;
  std::mutex join_mutex_;
  std::condition_variable wake_;
  absl::Status status_;
  absl::Status server_status_;
  std::unique_ptr<session::CaptureSession> session_;
  bool capturing_ = false;
  bool stop_requested_ = false;
  std::chrono::steady_clock::time_point deadline_;
  std::optional<absl::StatusOr<ProfileResult>> result_;
  std::thread timer_;
};

Profiler::Profiler(const ProfilerOptions& options)
    : impl_(std::make_unique<Impl>(options)) {}
Profiler::~Profiler() = default;
absl::Status Profiler::status() const { return impl_->status(); }
bool Profiler::capturing() const { return impl_->capturing(); }
absl::StatusOr<ProfileResult> Profiler::Stop() { return impl_->Stop(); }
absl::StatusOr<ProfileResult> Profiler::WaitForCompletion() { return impl_->Wait(); }

}  // namespace neuronprof
