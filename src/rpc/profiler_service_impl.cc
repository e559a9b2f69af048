// tensorflow.ProfilerService: remote capture of one window at a time.
#include "src/rpc/profiler_service_impl.h"

#include <fcntl.h>
#include <google/protobuf/io/coded_stream.h>
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/proto_buffer_writer.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "src/core/clock.h"
#include "src/export/atomic_file.h"
#include "src/export/chrome_trace.h"
#include "src/export/gzip.h"
#include "src/export/kineto_trace.h"
#include "src/export/logdir.h"
#include "src/rpc/clock_probe.h"
#include "src/rpc/grpc_status.h"
#include "src/session/capture_gate.h"
#include "src/session/capture_session.h"
#include "src/session/flight_session.h"

namespace neuronprof {
namespace rpc {
namespace {

std::atomic<int> g_running_captures{0};

// How often a waiting Profile looks at client cancellation.
constexpr auto kCancelPollInterval = std::chrono::milliseconds(10);

// The override_hostname option, first-class (field 15) or, as older
// clients send it, in advanced_configuration.
std::string OverrideHostname(const tensorflow::ProfileOptions& opts) {
  if (!opts.override_hostname().empty()) return opts.override_hostname();
  auto it = opts.advanced_configuration().find("override_hostname");
  if (it != opts.advanced_configuration().end() &&
      it->second.value_case() == tensorflow::ProfileOptions::AdvancedConfigValue::kStringValue) {
    return it->second.string_value();
  }
  return "";
}

// Whether the request asks for a flight recorder's last duration_ms at once
// (kFlightRecorderNowKey: true, 1 or "true"); InvalidArgument for another
// value.
absl::StatusOr<bool> FlightRecorderNow(const tensorflow::ProfileOptions& opts) {
  auto it = opts.advanced_configuration().find(kFlightRecorderNowKey);
  if (it == opts.advanced_configuration().end()) return false;
  using Value = tensorflow::ProfileOptions::AdvancedConfigValue;
  const Value& value = it->second;
  switch (value.value_case()) {
    case Value::kBoolValue:
      return value.bool_value();
    case Value::kInt64Value:
      if (value.int64_value() == 0 || value.int64_value() == 1) return value.int64_value() == 1;
      break;
    case Value::kStringValue:
      if (value.string_value() == "true" || value.string_value() == "false") {
        return value.string_value() == "true";
      }
      break;
    default:
      break;
  }
  return absl::InvalidArgumentError(absl::StrCat("opts.advanced_configuration[\"",
                                                 kFlightRecorderNowKey,
                                                 "\"] must be a bool, 0/1 or \"true\"/\"false\""));
}

}  // namespace

int RunningCapturesForTesting() { return g_running_captures.load(); }

absl::StatusOr<std::string> ResolvePath(const std::string& path) {
  if (path.empty()) return absl::InvalidArgumentError("empty path");
  std::string absolute = path;
  if (path[0] != '/') {
    char cwd[PATH_MAX];
    if (getcwd(cwd, sizeof(cwd)) == nullptr) {
      return absl::InternalError("cannot read the working directory");
    }
    absolute = absl::StrCat(cwd, "/", path);
  }
  std::vector<std::string> parts = absl::StrSplit(absolute, '/', absl::SkipEmpty());
  // Longest existing prefix: parts[0, existing).
  size_t existing = parts.size();
  std::string resolved;
  for (;; --existing) {
    std::string prefix = "/";
    for (size_t i = 0; i < existing; ++i) absl::StrAppend(&prefix, parts[i], "/");
    char buffer[PATH_MAX];
    if (realpath(prefix.c_str(), buffer) != nullptr) {
      resolved = buffer;
      break;
    }
    if (existing == 0) return absl::InternalError("cannot resolve '/'");
  }
  for (size_t i = existing; i < parts.size(); ++i) {
    if (parts[i] == ".") continue;
    if (parts[i] == "..") {
      return absl::InvalidArgumentError(
          absl::StrCat(exporter::QuoteForMessage(path), " has '..' below its existing part"));
    }
    if (resolved != "/") resolved += "/";
    resolved += parts[i];
  }
  return resolved;
}

bool IsInside(const std::string& root, const std::string& path) {
  if (root == "/") return true;
  return path == root || (path.size() > root.size() && path.compare(0, root.size(), root) == 0 &&
                          path[root.size()] == '/');
}

ProfilerServiceImpl::ProfilerServiceImpl(ServiceOptions options)
    : options_(std::move(options)), call_limit_(kMaxProfileCalls, options_.response_timeout_ms) {}

namespace {

// The profile Save would write exists: never replaced.
absl::Status ProfileExistsError(const SaveTarget& save) {
  return absl::AlreadyExistsError(
      absl::StrCat("'", save.root_path, "/", save.relative_dir, "/", save.file_name,
                   "' already exists; the profiler server never replaces a profile: capture again "
                   "with another session_id (run name)"));
}

// The request's sizes against the k* bounds, before anything is resolved.
absl::Status CheckRequestBounds(const tensorflow::ProfileRequest& request) {
  const struct {
    const char* field;
    int size;
  } counts[] = {
      {"tools", request.tools_size()},
      {"tool_options", static_cast<int>(request.tool_options().size())},
      {"opts.advanced_configuration",
       static_cast<int>(request.opts().advanced_configuration().size())},
  };
  for (const auto& count : counts) {
    if (count.size > kMaxRequestEntries) {
      return absl::InvalidArgumentError(absl::StrCat(count.field, " holds ", count.size,
                                                     " entries; at most ", kMaxRequestEntries,
                                                     " are accepted"));
    }
  }
  const std::string& root = request.repository_root();
  const size_t components = static_cast<size_t>(std::count(root.begin(), root.end(), '/')) + 1;
  if (root.size() > kMaxRepositoryRootBytes || components > kMaxRepositoryRootComponents) {
    return absl::InvalidArgumentError(
        absl::StrCat("repository_root ", exporter::QuoteForMessage(root), " has ", root.size(),
                     " bytes and ", components, " components; at most ", kMaxRepositoryRootBytes,
                     " bytes and ", kMaxRepositoryRootComponents, " components are accepted"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ProfilerServiceImpl::Validate(const tensorflow::ProfileRequest& request,
                                           uint64_t* duration_ms, std::string* host,
                                           SaveTarget* save, bool* flight_recorder_now) const {
  if (auto s = CheckRequestBounds(request); !s.ok()) return s;
  const tensorflow::ProfileOptions& opts = request.opts();
  auto now = FlightRecorderNow(opts);
  if (!now.ok()) return now.status();
  if (flight_recorder_now != nullptr) *flight_recorder_now = *now;
  *duration_ms = opts.duration_ms() != 0 ? opts.duration_ms() : request.duration_ms();
  if (*duration_ms == 0 || *duration_ms > static_cast<uint64_t>(options_.max_duration_ms)) {
    return absl::InvalidArgumentError(
        absl::StrCat("duration_ms must be 1..", options_.max_duration_ms,
                     " (ProfilerServerOptions::max_duration_ms), got ", *duration_ms));
  }
  // The start may lie ahead, but not further than the longest window.
  const uint64_t now_ns = static_cast<uint64_t>(core::EpochNowNs());
  const uint64_t max_delay_ns = static_cast<uint64_t>(options_.max_duration_ms) * 1000000u;
  if (opts.start_timestamp_ns() > now_ns && opts.start_timestamp_ns() - now_ns > max_delay_ns) {
    return absl::InvalidArgumentError(absl::StrCat(
        "opts.start_timestamp_ns lies ", (opts.start_timestamp_ns() - now_ns) / 1000000,
        " ms ahead; at most ", options_.max_duration_ms,
        " ms (ProfilerServerOptions::max_duration_ms) is allowed"));
  }
  // Checked as the uint32 they are: a cast to int would make a huge level
  // negative, which means off. version 0 leaves them unset (defaults apply).
  if (opts.version() != 0 && opts.host_tracer_level() > 3) {
    return absl::InvalidArgumentError(absl::StrCat(
        "opts.host_tracer_level must be 0..3 (0 off, 1 user markers, 2 info, 3 verbose), "
        "got ",
        opts.host_tracer_level()));
  }
  if (opts.version() != 0 && opts.device_tracer_level() > 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("opts.device_tracer_level must be 0..2 (0 off, 1 on, 2 verbose), got ",
                     opts.device_tracer_level()));
  }
  // Capture clients send the address they dialled ("localhost:9012"); TSL
  // names the file "localhost_9012", and so do we.
  std::string request_host = request.host_name();
  std::replace(request_host.begin(), request_host.end(), ':', '_');
  // The longest name this request makes the server write (a client that
  // takes the XSpace names its files itself).
  const char* suffix = exporter::kXPlaneSuffix;
  if (!request.emit_xspace() && options_.write_pytorch_trace) {
    suffix = exporter::kPyTorchTraceSuffix;
  } else if (!request.emit_xspace() &&
             exporter::ChromeTraceWanted(options_.write_chrome_trace, /*kineto_written=*/false)) {
    suffix = exporter::kChromeTraceSuffix;
  }
  if (!request_host.empty()) {
    if (auto s = exporter::CheckPlainName(request_host, "host_name", suffix); !s.ok()) {
      return s;
    }
  }
  const std::string override_host = OverrideHostname(opts);
  if (!override_host.empty()) {
    if (auto s = exporter::CheckPlainName(override_host, "opts.override_hostname", suffix);
        !s.ok()) {
      return s;
    }
  }
  *host = !override_host.empty()  ? override_host
          : !request_host.empty() ? request_host
                                  : exporter::LocalHostName();
  if (!request.session_id().empty() || !request.emit_xspace()) {
    if (auto s = exporter::CheckPlainName(request.session_id(), "session_id"); !s.ok()) {
      return s;
    }
  }
  if (request.emit_xspace()) return absl::OkStatus();
  return PrepareSave(request, *host, save);
}

absl::Status ProfilerServiceImpl::PrepareSave(const tensorflow::ProfileRequest& request,
                                              const std::string& host, SaveTarget* save) const {
  // Saving on this host: only under allowed_root.
  if (request.repository_root().empty()) {
    return absl::InvalidArgumentError("repository_root must be set unless emit_xspace is true");
  }
  const std::string allowed = exporter::QuoteForMessage(options_.allowed_root);
  auto root = ResolvePath(options_.allowed_root);
  if (!root.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot resolve ProfilerServerOptions::allowed_root ", allowed, ": ",
                     root.status().message()));
  }
  auto repository = ResolvePath(request.repository_root());
  if (!repository.ok() || !IsInside(*root, *repository)) {
    return absl::PermissionDeniedError(absl::StrCat(
        "repository_root ", exporter::QuoteForMessage(request.repository_root()),
        " is outside ProfilerServerOptions::allowed_root ", allowed, " (",
        exporter::QuoteForMessage(*root), "); this server only writes profiles there"));
  }
  // From here on the root is held open and everything below it is reached
  // without following links (at save time, when it counts).
  if (auto s = exporter::MakeDirectories(*root); !s.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot create ProfilerServerOptions::allowed_root ", allowed, ": ", s.message()));
  }
  auto root_fd = exporter::OpenDirectory(*root);
  if (!root_fd.ok()) return root_fd.status();
  save->root = std::move(*root_fd);
  save->root_path = *root;
  std::string below = repository->substr(root->size());  // "", "/a/b" or "a/b".
  if (!below.empty() && below[0] == '/') below.erase(0, 1);
  save->relative_dir =
      below.empty() ? request.session_id() : absl::StrCat(below, "/", request.session_id());
  save->file_name = absl::StrCat(host, exporter::kXPlaneSuffix);
  save->host = host;
  // TensorBoard's and xprof's dialogs ask for <logdir>/plugins/profile;
  // the PyTorch plugin and HTA read <logdir>/<run>/.
  const std::string profile_dir = "plugins/profile";
  if (below == profile_dir) {
    save->kineto_dir = request.session_id();
  } else if (absl::EndsWith(below, "/" + profile_dir)) {
    save->kineto_dir =
        absl::StrCat(below.substr(0, below.size() - profile_dir.size()), request.session_id());
  }
  // An existing profile is refused now, before a window is spent on it;
  // the save itself refuses one atomically too (it may appear meanwhile).
  auto dir =
      exporter::OpenDirectoryBelow(save->root.get(), save->root_path, save->relative_dir, nullptr);
  struct stat existing;
  if (dir.ok() &&
      fstatat(dir->get(), save->file_name.c_str(), &existing, AT_SYMLINK_NOFOLLOW) == 0) {
    return ProfileExistsError(*save);
  }
  return absl::OkStatus();
}

namespace {

// Writes the profile below the held root; on failure takes away the
// folders this call made, so nothing half-done stays.
absl::Status Save(const SaveTarget& save, std::string_view data) {
  std::vector<std::string> created;
  auto dir =
      exporter::OpenDirectoryBelow(save.root.get(), save.root_path, save.relative_dir, &created);
  absl::Status status = dir.status();
  if (dir.ok()) {
    status = exporter::WriteFileAtomicallyAt(
        dir->get(), absl::StrCat(save.root_path, "/", save.relative_dir), save.file_name, data);
    if (absl::IsAlreadyExists(status)) status = ProfileExistsError(save);
  }
  if (!status.ok()) exporter::RemoveCreatedDirectories(save.root.get(), created);
  return status;
}

// `name` in `relative` below the held root (made as needed, never through a
// link), streamed by `write`; an existing file is never replaced.
absl::Status SaveTrace(const SaveTarget& save, const std::string& relative, const std::string& name,
                       const std::function<absl::Status(exporter::ByteSink*)>& write) {
  std::vector<std::string> created;
  auto dir = exporter::OpenDirectoryBelow(save.root.get(), save.root_path, relative, &created);
  absl::Status status = dir.status();
  if (dir.ok()) {
    status = exporter::WriteFileStreamedAt(dir->get(), absl::StrCat(save.root_path, "/", relative),
                                           name, exporter::AtomicFile::Existing::kRefuse, write);
  }
  if (!status.ok()) exporter::RemoveCreatedDirectories(save.root.get(), created);
  return status;
}

// The traces a Profiler writes beside its xplane.pb, once that is saved: a
// failure here loses no capture, and its message says the xplane.pb is kept.
absl::Status SaveTraces(const ServiceOptions& options, const SaveTarget& save,
                        const tensorflow::profiler::XSpace& space) {
  absl::Status status;
  const bool kineto = options.write_pytorch_trace && !save.kineto_dir.empty();
  if (exporter::ChromeTraceWanted(options.write_chrome_trace, kineto)) {
    status.Update(SaveTrace(
        save, save.relative_dir, absl::StrCat(save.host, exporter::kChromeTraceSuffix),
        [&](exporter::ByteSink* sink) { return exporter::WriteChromeTrace(space, sink); }));
  }
  if (kineto) {
    status.Update(SaveTrace(
        save, save.kineto_dir, absl::StrCat(save.host, exporter::kPyTorchTraceSuffix),
        [&](exporter::ByteSink* sink) { return exporter::WriteKinetoTrace(space, sink); }));
  }
  if (status.ok()) return status;
  return absl::Status(
      status.code(),
      absl::StrCat("saved '", save.root_path, "/", save.relative_dir, "/", save.file_name,
                   "', but not all of its traces: ", status.message()));
}

// `response` with `space` as its xspace, serialized once, straight into
// gRPC's 1 MiB slices (gRPC's own serializer walks the messages three
// times). `space` is lent, not moved: it stays on its arena, and the
// response owns no XSpace when this returns.
absl::Status SerializeResponse(tensorflow::profiler::XSpace* space,
                               tensorflow::ProfileResponse* response,
                               grpc::ByteBuffer* serialized) {
  response->unsafe_arena_set_allocated_xspace(space);
  struct GiveBack {
    tensorflow::ProfileResponse* response;
    ~GiveBack() { response->unsafe_arena_release_xspace(); }
  } give_back{response};
  const size_t bytes = response->ByteSizeLong();  // Caches every size.
  if (bytes > static_cast<size_t>(INT_MAX)) {
    return absl::ResourceExhaustedError(
        absl::StrCat("the capture is ", bytes,
                     " bytes, more than one gRPC message holds (2 GiB); capture a shorter "
                     "duration_ms"));
  }
  grpc::ProtoBufferWriter writer(serialized, grpc::kProtoBufferWriterMaxBufferLength,
                                 static_cast<int>(bytes));
  google::protobuf::io::CodedOutputStream out(&writer);
  response->SerializeWithCachedSizes(&out);
  if (out.HadError()) return absl::InternalError("cannot serialize the Profile response");
  return absl::OkStatus();
}

}  // namespace

// While a Profile call holds the server's one window: what Terminate and
// shutdown look at. Given back when the call ends (a later call may hold
// it by then: only this call's own state is cleared).
class ProfilerServiceImpl::RunningCall {
 public:
  RunningCall(ProfilerServiceImpl* service, const std::string& session_id) : service_(service) {
    std::lock_guard<std::mutex> lock(service_->mutex_);
    if (service_->shutting_down_) return;
    id_ = service_->running_id_ = ++service_->last_capture_id_;
    service_->running_session_ = session_id;
    service_->terminate_ = false;
  }
  ~RunningCall() {
    std::lock_guard<std::mutex> lock(service_->mutex_);
    if (id_ == 0 || service_->running_id_ != id_) return;
    service_->running_id_ = 0;
    service_->running_session_.clear();
    service_->terminate_ = false;
  }
  RunningCall(const RunningCall&) = delete;
  RunningCall& operator=(const RunningCall&) = delete;

  // False when the server was shutting down.
  bool admitted() const { return id_ != 0; }

 private:
  ProfilerServiceImpl* service_;
  uint64_t id_ = 0;
};

grpc::Status ProfilerServiceImpl::Profile(grpc::ServerContext* context,
                                          const tensorflow::ProfileRequest* request,
                                          tensorflow::ProfileResponse* response) {
  uint64_t duration_ms = 0;
  std::string host;
  SaveTarget save;
  bool flight_recorder_now = false;
  if (auto s = Validate(*request, &duration_ms, &host, &save, &flight_recorder_now); !s.ok()) {
    return ToGrpcStatus(s);
  }
  if (!call_limit_.TryEnter(context)) {
    return grpc::Status(
        grpc::StatusCode::RESOURCE_EXHAUSTED,
        absl::StrCat("the profiler server already serves ", call_limit_.max_calls(),
                     " Profile calls (capturing, or sending a response its client has "
                     "not read yet), its most at once; try again when one has ended"));
  }
  if (flight_recorder_now || session::FlightSession::IsLive()) {
    return ProfileFlightRecorder(context, *request, duration_ms, host, save, flight_recorder_now,
                                 response);
  }
  // The window is taken before waiting for start_timestamp_ns, so that a
  // Profiler cannot start in between.
  auto gate = session::CaptureGate::Acquire(
      absl::StrCat("a remote capture (session ", exporter::QuoteForMessage(request->session_id()),
                   ") through the profiler server; it ends when its duration_ms has passed or its "
                   "client cancels it"));
  if (!gate.ok()) return ToGrpcStatus(gate.status());
  RunningCall running(this, request->session_id());
  if (!running.admitted()) {
    return grpc::Status(grpc::StatusCode::UNAVAILABLE, "the profiler server is shutting down");
  }

  const tensorflow::ProfileOptions& opts = request->opts();
  // A multi-host client sets start_timestamp_ns so that every host opens
  // its window at the same instant; wait for it (the past means now).
  const int64_t start_delay_ns =
      static_cast<int64_t>(opts.start_timestamp_ns()) - core::EpochNowNs();
  if (opts.start_timestamp_ns() != 0 && start_delay_ns > 0 &&
      WaitUntil(context, std::chrono::steady_clock::now() +
                             std::chrono::nanoseconds(start_delay_ns)) == WaitEnd::kCancelled) {
    return grpc::Status(grpc::StatusCode::CANCELLED, "the client cancelled the capture");
  }
  collectors::CollectorOptions capture;
  if (opts.version() != 0) {
    capture.host_tracer_level = static_cast<int>(opts.host_tracer_level());
    capture.device_tracer_level = static_cast<int>(opts.device_tracer_level());
  }
  // A remote capture has no profile_type: framework operators come with the
  // default host level (2, "info") and above, as TF's op events do, when the
  // program enabled an operator collector (EnableTorchOperators).
  capture.operators = capture.host_tracer_level >= 2;
  capture.max_buffer_bytes = options_.max_buffer_bytes;
  capture.world_size = options_.identity.world_size;
  // The remote reader cannot change ProfilerOptions: name what they can.
  capture.buffer_advice =
      "ask the owner of the profiled program to raise "
      "ProfilerServerOptions::max_buffer_bytes (ProfilerOptions::max_buffer_bytes "
      "when a Profiler started the server with ProfilerOptions::port), or capture "
      "a shorter duration_ms";
  auto session = session::CaptureSession::Start(capture, std::move(*gate));
  if (!session.ok()) return ToGrpcStatus(session.status());
  g_running_captures.fetch_add(1);
  struct CountDown {
    ~CountDown() { g_running_captures.fetch_sub(1); }
  } count_down;

  const bool cancelled =
      WaitUntil(context, std::chrono::steady_clock::now() +
                             std::chrono::milliseconds(duration_ms)) == WaitEnd::kCancelled;
  const auto window_over = std::chrono::steady_clock::now();
  auto captured = (*session)->Stop();
  if (cancelled) {
    return grpc::Status(grpc::StatusCode::CANCELLED, "the client cancelled the capture");
  }
  if (!captured.ok()) return ToGrpcStatus(captured.status());
  const std::string empty_reason =
      capture.host_tracer_level == 0
          ? std::string("host_tracer_level 0: host markers were not recorded")
          : absl::StrCat("no neuronprof markers ran during the ",
                         (captured->stop_epoch_ns - captured->start_epoch_ns) / 1000000,
                         " ms window");
  return Respond(context, *request, host, save, window_over, empty_reason, std::move(*captured),
                 response);
}

grpc::Status ProfilerServiceImpl::ProfileFlightRecorder(grpc::ServerContext* context,
                                                        const tensorflow::ProfileRequest& request,
                                                        uint64_t duration_ms,
                                                        const std::string& host,
                                                        const SaveTarget& save, bool now,
                                                        tensorflow::ProfileResponse* response) {
  std::string note;
  if (now) {
    note = absl::StrCat(
        "neuronprof: served at once from this process's FlightRecorder: "
        "the events that ended in the ",
        duration_ms, " ms before the request");
  } else {
    // A plain request (TensorBoard's Capture Profile) waits out its window
    // as usual, then gets that window from the ring.
    RunningCall running(this, request.session_id());
    if (!running.admitted()) {
      return grpc::Status(grpc::StatusCode::UNAVAILABLE, "the profiler server is shutting down");
    }
    if (WaitUntil(context, std::chrono::steady_clock::now() +
                               std::chrono::milliseconds(duration_ms)) == WaitEnd::kCancelled) {
      return grpc::Status(grpc::StatusCode::CANCELLED, "the client cancelled the capture");
    }
    note = absl::StrCat(
        "neuronprof: served from this process's FlightRecorder: the events "
        "that ended in the ",
        duration_ms, " ms window");
  }
  absl::StrAppend(&note,
                  " (host markers at the recorder's own host_tracer_level; a flight "
                  "recorder records no libtorch operators or device planes)");
  const auto window_over = std::chrono::steady_clock::now();
  auto captured = session::FlightSession::SnapshotLive(
      static_cast<int64_t>(duration_ms),
      "ask the owner of the profiled program to raise FlightRecorderOptions::ring_bytes", note,
      session::SpaceStorage::kArena);
  if (!captured.ok()) {
    return ToGrpcStatus(absl::Status(
        captured.status().code(),
        absl::StrCat(now ? absl::StrCat("opts.advanced_configuration[\"", kFlightRecorderNowKey,
                                        "\"] asks for a flight recorder's last duration_ms: ")
                         : std::string("the FlightRecorder ended during the window: "),
                     captured.status().message())));
  }
  return Respond(
      context, request, host, save, window_over,
      absl::StrCat("no neuronprof markers in the FlightRecorder's last ", duration_ms, " ms"),
      std::move(*captured), response);
}

grpc::Status ProfilerServiceImpl::Respond(grpc::ServerContext* context,
                                          const tensorflow::ProfileRequest& request,
                                          const std::string& host, const SaveTarget& save,
                                          std::chrono::steady_clock::time_point window_over,
                                          const std::string& empty_reason,
                                          session::CaptureResult captured,
                                          tensorflow::ProfileResponse* response) {
  captured.space.add_hostnames(host);
  xplane::AddJobIdentity(options_.identity, &captured.space);
  response->set_empty_trace(captured.stats.events == 0);
  // Tell the client why the window is empty; drop warnings stay as well.
  if (captured.stats.events == 0) captured.space.add_warnings(empty_reason);
  if (request.emit_xspace()) {
    context->AddInitialMetadata(
        kCollectMsHeader, std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(
                                             std::chrono::steady_clock::now() - window_over)
                                             .count()));
    grpc::ByteBuffer serialized;
    absl::Status status = SerializeResponse(&captured.space, response, &serialized);
    // Only the bytes wait for the client: the XSpace's arena goes now,
    // on the limit's watch thread, while they are sent.
    call_limit_.FreeLater(std::make_shared<session::CaptureResult>(std::move(captured)));
    if (!status.ok()) return ToGrpcStatus(status);
    context->AddInitialMetadata(kResponseBytesHeader, std::to_string(serialized.Length()));
    call_limit_.Responding(context, &serialized);
    return grpc::Status::OK;
  }
  std::string data;
  if (!captured.space.SerializeToString(&data)) {
    return grpc::Status(grpc::StatusCode::INTERNAL, "cannot serialize the XSpace");
  }
  if (absl::Status s = Save(save, data); !s.ok()) return ToGrpcStatus(s);
  return ToGrpcStatus(SaveTraces(options_, save, captured.space));
}

ProfilerServiceImpl::WaitEnd ProfilerServiceImpl::WaitUntil(
    grpc::ServerContext* context, std::chrono::steady_clock::time_point deadline) {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!terminate_ && !shutting_down_) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return WaitEnd::kReached;
    // gRPC has no wake-up for cancellation here: look at it now and then.
    if (context->IsCancelled()) return WaitEnd::kCancelled;
    wake_.wait_until(lock, std::min(deadline, now + kCancelPollInterval));
  }
  return WaitEnd::kStopped;
}

grpc::Status ProfilerServiceImpl::Terminate(grpc::ServerContext* /*context*/,
                                            const tensorflow::TerminateRequest* request,
                                            tensorflow::TerminateResponse* /*response*/) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (running_id_ != 0 && running_session_ == request->session_id()) terminate_ = true;
  }
  wake_.notify_all();
  return grpc::Status::OK;
}

grpc::Status ProfilerServiceImpl::Monitor(grpc::ServerContext* context,
                                          const tensorflow::MonitorRequest* request,
                                          tensorflow::MonitorResponse* response) {
  if (request->duration_ms() == 0) {
    // The capture client's clock probe: this server's clock, at once, in
    // the header it reads and, for people, in data.
    const std::string now = std::to_string(core::EpochNowNs());
    context->AddInitialMetadata(kServerClockHeader, now);
    response->set_data(absl::StrCat("neuronprof clock ", now, " ns since the epoch"));
    return grpc::Status::OK;
  }
  return grpc::Status(grpc::StatusCode::UNIMPLEMENTED,
                      "Monitor is not implemented by neuronprof (only duration_ms 0, "
                      "the clock probe of neuronprof capture)");
}

void ProfilerServiceImpl::BeginShutdown() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    shutting_down_ = true;
  }
  wake_.notify_all();
}

}  // namespace rpc
}  // namespace neuronprof
