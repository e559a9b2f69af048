// neuronprof::Capture: one thread per host drives a Profile RPC (retrying
// empty windows); the calling thread reports progress and waits.
#include "src/rpc/capture_client.h"

#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <utility>

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "proto/profiler_service.grpc.pb.h"
#include "src/core/clock.h"
#include "src/export/atomic_file.h"
#include "src/export/chrome_trace.h"
#include "src/export/logdir.h"
#include "src/export/xspace_file.h"
#include "src/rpc/grpc_status.h"
#include "src/rpc/profiler_service_impl.h"
#include "src/rpc/response_scan.h"
#include "src/xplane/xplane_visitor.h"

namespace neuronprof {

const char* HostCaptureStateName(HostCaptureState state) {
  switch (state) {
    case HostCaptureState::kConnecting: return "connecting";
    case HostCaptureState::kWindow: return "window";
    case HostCaptureState::kServerCollecting: return "server collecting";
    case HostCaptureState::kReceiving: return "receiving";
    case HostCaptureState::kWriting: return "writing";
    case HostCaptureState::kSucceeded: return "done";
    case HostCaptureState::kFailed: return "failed";
  }
  return "unknown";
}

bool CaptureResult::all_ok() const {
  for (const HostCaptureResult& host : hosts) {
    if (!host.status.ok()) return false;
  }
  return !hosts.empty();
}

namespace rpc {
namespace {

using Clock = std::chrono::steady_clock;
using tensorflow::profiler::XSpace;

// The server answers after the window; this covers collection, export and
// the transfer of a large profile.
constexpr int64_t kDeadlineMarginMs = 60 * 1000;
constexpr auto kProgressInterval = std::chrono::milliseconds(250);
// TSL's client asks for at most this many events.
constexpr uint64_t kMaxEvents = 1000000;

int64_t MillisBetween(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(to - from).count();
}

int64_t MillisSince(Clock::time_point start) { return MillisBetween(start, Clock::now()); }

absl::Status CheckRange(const char* field, int64_t value, int64_t low, int64_t high) {
  if (value >= low && value <= high) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("CaptureOptions::", field, " must be ",
                                                 low, "..", high, ", got ", value));
}

absl::StatusOr<std::vector<ServiceAddress>> ParseAddresses(const CaptureOptions& options) {
  if (options.service_addresses.empty()) {
    return absl::InvalidArgumentError(
        "CaptureOptions::service_addresses is empty: give at least one host:port");
  }
  std::vector<ServiceAddress> parsed;
  std::set<std::string> seen;
  for (size_t i = 0; i < options.service_addresses.size(); ++i) {
    auto addresses = ParseServiceAddresses(options.service_addresses[i]);
    if (!addresses.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("CaptureOptions::service_addresses[",
                                                     i, "]: ", addresses.status().message()));
    }
    for (ServiceAddress& address : *addresses) {
      // Two calls to one server would collide: it runs one capture at a time.
      if (!seen.insert(address.Target()).second) {
        return absl::InvalidArgumentError(
            absl::StrCat("CaptureOptions::service_addresses lists '", address.address,
                         "' twice"));
      }
      parsed.push_back(std::move(address));
    }
  }
  return parsed;
}

// Waits until the channel is connected. A refused or unresolvable address
// puts the channel into TRANSIENT_FAILURE at once: fail then, not at the
// timeout.
absl::Status WaitConnected(grpc::Channel& channel, const ServiceAddress& address,
                           int64_t timeout_ms) {
  const auto deadline =
      std::chrono::system_clock::now() + std::chrono::milliseconds(timeout_ms);
  grpc_connectivity_state state = channel.GetState(/*try_to_connect=*/true);
  while (state != GRPC_CHANNEL_READY) {
    if (state == GRPC_CHANNEL_TRANSIENT_FAILURE || state == GRPC_CHANNEL_SHUTDOWN) {
      return absl::UnavailableError(absl::StrCat(
          "cannot connect to ", address.address,
          ": the connection was refused, the host is unreachable or its name does "
          "not resolve (is a profiler server listening there?)"));
    }
    if (!channel.WaitForStateChange(state, deadline)) {
      return absl::DeadlineExceededError(absl::StrCat(
          "cannot connect to ", address.address, ": no connection within ", timeout_ms,
          " ms (CaptureOptions::connect_timeout_ms)"));
    }
    state = channel.GetState(/*try_to_connect=*/true);
  }
  return absl::OkStatus();
}

// A failed Profile call, in words that say what happened to the host.
absl::Status DescribeRpcFailure(const grpc::Status& status, const ServiceAddress& address,
                                int64_t duration_ms) {
  const std::string detail =
      absl::StrCat(absl::StatusCodeToString(ToAbslCode(status.error_code())), ": ",
                   status.error_message());
  switch (status.error_code()) {
    case grpc::StatusCode::UNAVAILABLE:
      return absl::UnavailableError(absl::StrCat(
          address.address,
          " closed the connection during the capture (the server exited or the "
          "network failed): ",
          detail));
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return absl::DeadlineExceededError(absl::StrCat(
          address.address, " did not answer within ", duration_ms + kDeadlineMarginMs,
          " ms (the ", duration_ms, " ms window + ", kDeadlineMarginMs / 1000,
          " s margin): ", detail));
    default:
      return absl::Status(ToAbslCode(status.error_code()),
                          absl::StrCat(address.address, " refused the capture: ", detail));
  }
}

// Everything one Capture() call shares between its threads.
struct HostJob {
  ServiceAddress address;
  bool host_is_shared = false;
  HostCaptureResult result;
  // Progress, guarded by Run::mutex.
  HostCaptureState state = HostCaptureState::kConnecting;
  int attempt = 0;
  Clock::time_point window_start;
  int64_t response_bytes = 0;
};

struct Run {
  const CaptureOptions* options = nullptr;
  std::string run_dir;          // As reported: <logdir>/plugins/profile/<run>.
  std::string repository_root;  // Absolute <logdir>/plugins/profile, for servers.
  std::string session_id;       // The run name.
  Clock::time_point start;      // Of Capture().

  std::mutex mutex;
  std::condition_variable changed;
  std::vector<HostJob> jobs;
  // Reports taken when a host changed stage or finished, not delivered yet:
  // each stage is reported however short it was.
  std::deque<CaptureProgress> reports;
  size_t finished_count = 0;
  std::set<std::string> taken_names;  // Host names given out in run_dir.
};

// A progress report; call with run.mutex held.
CaptureProgress Snapshot(const Run& run) {
  CaptureProgress progress;
  progress.duration_ms = run.options->duration_ms;
  progress.elapsed_ms = MillisSince(run.start);
  for (const HostJob& job : run.jobs) {
    HostProgress host;
    host.address = job.address.address;
    host.state = job.state;
    host.attempt = job.attempt;
    if (job.state == HostCaptureState::kWindow) {
      host.window_elapsed_ms = MillisSince(job.window_start);
    }
    if (job.state == HostCaptureState::kReceiving) host.response_bytes = job.response_bytes;
    progress.hosts.push_back(std::move(host));
  }
  return progress;
}

// Moves `job` to `state` (with `only_from`: only if it is in that stage)
// and queues a report of it.
void SetStage(Run& run, HostJob& job, HostCaptureState state,
              std::optional<HostCaptureState> only_from = std::nullopt) {
  {
    std::lock_guard<std::mutex> lock(run.mutex);
    if (only_from && job.state != *only_from) return;
    job.state = state;
    if (run.options->on_progress) run.reports.push_back(Snapshot(run));
  }
  run.changed.notify_all();
}

constexpr char kProfileMethod[] = "/tensorflow.ProfilerService/Profile";

// One Profile call through the generic stub: the response stays in gRPC's
// slices (nothing parses it on the way), and the arrival of its header,
// which comes just before its bytes, is seen.
class ProfileCall final : public grpc::ClientUnaryReactor {
 public:
  // `on_response_begins(announced_bytes, collect_ms)` runs on a gRPC
  // thread; the values are 0 when the server does not send them.
  ProfileCall(grpc::ClientContext* context,
              std::function<void(int64_t, int64_t)> on_response_begins)
      : context_(context), on_response_begins_(std::move(on_response_begins)) {}

  void OnReadInitialMetadataDone(bool ok) override {
    if (!ok) return;  // The call failed first; OnDone says how.
    on_response_begins_(HeaderNumber(kResponseBytesHeader), HeaderNumber(kCollectMsHeader));
  }
  void OnDone(const grpc::Status& status) override {
    std::lock_guard<std::mutex> lock(mutex_);  // Notified under it: see Wait.
    status_ = status;
    done_ = true;
    done_changed_.notify_all();
  }

  // Waits for the end of the call; `on_window_over` runs once, here, if the
  // call is still going at `window_end`. Once this returns gRPC no longer
  // touches this object.
  grpc::Status Wait(Clock::time_point window_end, const std::function<void()>& on_window_over) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (!done_changed_.wait_until(lock, window_end, [&] { return done_; })) {
      lock.unlock();
      on_window_over();
      lock.lock();
      done_changed_.wait(lock, [&] { return done_; });
    }
    return status_;
  }

 private:
  // A non-negative number the server sent in `header`, else 0.
  int64_t HeaderNumber(const char* header) const {
    const auto& headers = context_->GetServerInitialMetadata();
    auto it = headers.find(header);
    int64_t value = 0;
    if (it == headers.end() ||
        !absl::SimpleAtoi(absl::string_view(it->second.data(), it->second.size()), &value)) {
      return 0;
    }
    return std::max<int64_t>(value, 0);
  }

  grpc::ClientContext* const context_;
  const std::function<void(int64_t, int64_t)> on_response_begins_;
  std::mutex mutex_;
  std::condition_variable done_changed_;
  bool done_ = false;
  grpc::Status status_;
};

// Picks this host's unique file name prefix in the run folder.
std::string ClaimHostName(Run& run, const ScannedResponse& scanned, const HostJob& job) {
  std::string name = BaseHostName(scanned.hostnames, job.address, job.host_is_shared,
                                  LongestFileSuffix(*run.options), scanned.identity);
  std::lock_guard<std::mutex> lock(run.mutex);
  if (run.taken_names.count(name) > 0) {
    const std::string with_port = absl::StrCat(name, "_", job.address.port);
    name = with_port;
    for (int i = 2; run.taken_names.count(name) > 0; ++i) {
      name = absl::StrCat(with_port, "_", i);
    }
  }
  run.taken_names.insert(name);
  return name;
}

// Removes a profile the server saved into the run folder itself, unless it
// is what this capture reports under that name.
void RemoveServerFile(Run& run, const std::string& file) {
  if (file.empty()) return;
  const std::string base = file.substr(file.rfind('/') + 1);
  const std::string host =
      base.substr(0, base.size() - std::string(exporter::kXPlaneSuffix).size());
  {
    std::lock_guard<std::mutex> lock(run.mutex);
    if (run.taken_names.count(host) > 0) return;
  }
  unlink(file.c_str());
}

// A host's profile as it arrived: the XSpace's bytes in gRPC's slices when
// the response holds it once (neuronprof's and TSL's servers with
// emit_xspace), else the XSpace parsed by ResponseSpace.
struct ReceivedProfile {
  std::vector<grpc::Slice> slices;  // Own the bytes `scanned` points into.
  ScannedResponse scanned;
  std::optional<XSpace> space;      // Set when the bytes could not be used.
  std::string saved_file;           // Where the server saved it, if there.
};

absl::StatusOr<ReceivedProfile> ReadResponse(grpc::ByteBuffer& buffer, const Run& run,
                                             const ServiceAddress& address) {
  ReceivedProfile profile;
  if (grpc::Status s = buffer.Dump(&profile.slices); !s.ok()) {
    return absl::InternalError(absl::StrCat("cannot read the response of ", address.address,
                                            ": ", s.error_message()));
  }
  BytePieces pieces;
  for (const grpc::Slice& slice : profile.slices) {
    pieces.emplace_back(reinterpret_cast<const char*>(slice.begin()), slice.size());
  }
  auto scanned = ScanProfileResponse(pieces, address.address);
  if (!scanned.ok()) return scanned.status();
  if (scanned->xspace_fields == 1) {
    profile.scanned = std::move(*scanned);
    return profile;
  }
  // Tool data, a file the server saved, or an xspace in several parts.
  tensorflow::ProfileResponse response;
  if (!ParsePieces(pieces, &response)) {
    return absl::DataLossError(absl::StrCat(address.address,
                                            " sent a Profile response that is not a "
                                            "well-formed tensorflow.ProfileResponse"));
  }
  auto space = ResponseSpace(&response, address,
                             absl::StrCat(run.repository_root, "/", run.session_id),
                             &profile.saved_file);
  if (!space.ok()) return space.status();
  profile.scanned.events = xplane::NumEvents(*space);
  profile.scanned.hostnames.assign(space->hostnames().begin(), space->hostnames().end());
  profile.scanned.warnings.assign(space->warnings().begin(), space->warnings().end());
  profile.space = std::move(*space);
  return profile;
}

// Writes the host's files: <host>.xplane.pb first, from the bytes as they
// came, then the Chrome trace, which needs the XSpace parsed.
absl::StatusOr<std::vector<std::string>> WriteHostFiles(const Run& run,
                                                        ReceivedProfile& profile,
                                                        const std::string& host,
                                                        const ServiceAddress& address,
                                                        HostCaptureTimings& timings,
                                                        Clock::time_point received) {
  if (profile.space) {
    exporter::ExportOptions export_options;
    export_options.chrome_trace = run.options->write_chrome_trace;
    auto files = exporter::WriteProfileFiles(*profile.space, run.run_dir, host, export_options);
    timings.xplane_written_ms = MillisSince(received);
    return files;
  }
  std::vector<std::string> files = {
      absl::StrCat(run.run_dir, "/", host, exporter::kXPlaneSuffix)};
  if (auto s = exporter::WriteFileAtomically(files[0], profile.scanned.xspace); !s.ok()) {
    return s;
  }
  timings.xplane_written_ms = MillisSince(received);
  if (!run.options->write_chrome_trace) return files;
  XSpace space;
  if (!ParsePieces(profile.scanned.xspace, &space)) {
    return absl::DataLossError(
        absl::StrCat(address.address, " sent a profile that is not an XSpace"));
  }
  files.push_back(absl::StrCat(run.run_dir, "/", host, exporter::kChromeTraceSuffix));
  if (auto s = exporter::WriteChromeTraceFile(space, files[1]); !s.ok()) return s;
  return files;
}

// One host's whole capture: connect, windows until one has events, files.
void CaptureHost(Run& run, size_t index) {
  HostJob& job = run.jobs[index];
  const CaptureOptions& options = *run.options;
  HostCaptureResult& result = job.result;

  auto capture = [&]() -> absl::Status {
    grpc::ChannelArguments args;
    // Profiles easily exceed gRPC's 4 MiB default.
    args.SetMaxReceiveMessageSize(INT_MAX);
    args.SetMaxSendMessageSize(INT_MAX);
    // A private subchannel: a failed connection to this address earlier in
    // the process must not make this capture fail at once.
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    auto channel = grpc::CreateCustomChannel(job.address.Target(),
                                             grpc::InsecureChannelCredentials(), args);
    if (auto s = WaitConnected(*channel, job.address, options.connect_timeout_ms);
        !s.ok()) {
      return s;
    }
    grpc::GenericStub stub(channel);
    for (int attempt = 1; attempt <= options.num_tracing_attempts; ++attempt) {
      HostCaptureTimings timings;
      {
        std::lock_guard<std::mutex> lock(run.mutex);
        job.attempt = attempt;
        job.window_start = Clock::now();
        job.response_bytes = 0;
      }
      SetStage(run, job, HostCaptureState::kWindow);
      result.attempts = attempt;
      const std::string request =
          BuildProfileRequest(options, job.address, run.repository_root, run.session_id)
              .SerializeAsString();
      grpc::Slice request_slice(request);
      grpc::ByteBuffer request_buffer(&request_slice, 1);
      grpc::ByteBuffer response;
      grpc::ClientContext context;
      context.set_deadline(std::chrono::system_clock::now() +
                           std::chrono::milliseconds(options.duration_ms + kDeadlineMarginMs));
      const Clock::time_point window_end =
          job.window_start + std::chrono::milliseconds(options.duration_ms);
      Clock::time_point response_begins = window_end;
      ProfileCall call(&context, [&](int64_t bytes, int64_t collect_ms) {
        {
          std::lock_guard<std::mutex> lock(run.mutex);
          job.response_bytes = bytes;
          response_begins = Clock::now();
          timings.server_collect_ms = collect_ms;
        }
        // Reported even when this comes before Wait's wake-up at window_end.
        if (Clock::now() >= window_end) {
          SetStage(run, job, HostCaptureState::kServerCollecting, HostCaptureState::kWindow);
        }
        SetStage(run, job, HostCaptureState::kReceiving);
      });
      stub.PrepareUnaryCall(&context, kProfileMethod, grpc::StubOptions(), &request_buffer,
                            &response, &call);
      call.StartCall();
      const grpc::Status status = call.Wait(window_end, [&] {
        SetStage(run, job, HostCaptureState::kServerCollecting, HostCaptureState::kWindow);
      });
      const Clock::time_point received = Clock::now();
      if (!status.ok()) return DescribeRpcFailure(status, job.address, options.duration_ms);
      {
        std::lock_guard<std::mutex> lock(run.mutex);
        timings.window_ms = options.duration_ms;
        timings.server_ms = std::max<int64_t>(0, MillisBetween(window_end, response_begins));
        timings.receive_ms = MillisBetween(std::max(window_end, response_begins), received);
      }
      timings.response_bytes = static_cast<int64_t>(response.Length());

      auto profile = ReadResponse(response, run, job.address);
      if (!profile.ok()) return profile.status();
      const ScannedResponse& scanned = profile->scanned;
      if (scanned.events == 0) {
        // Never keep an empty profile, not even one the server saved.
        RemoveServerFile(run, profile->saved_file);
        result.empty_reasons.push_back(
            EmptyCaptureReason(options, job.address, scanned.warnings));
        continue;
      }
      const std::string host = ClaimHostName(run, scanned, job);
      result.host = host;
      SetStage(run, job, HostCaptureState::kWriting);
      auto files = WriteHostFiles(run, *profile, host, job.address, timings, received);
      if (!files.ok()) {
        return absl::Status(files.status().code(),
                            absl::StrCat("cannot write the profile of ", job.address.address,
                                         ": ", files.status().message()));
      }
      timings.write_ms = MillisSince(received);
      // A copy the server saved under another name would be a duplicate.
      RemoveServerFile(run, profile->saved_file);
      result.files = std::move(*files);
      result.events = scanned.events;
      result.warnings = scanned.warnings;
      result.timings = timings;
      return absl::OkStatus();
    }
    // Every window was empty.
    std::vector<std::string> reasons;
    for (const std::string& reason : result.empty_reasons) {
      if (std::find(reasons.begin(), reasons.end(), reason) == reasons.end()) {
        reasons.push_back(reason);
      }
    }
    const std::string message = absl::StrCat(
        "no trace events from ", job.address.address, " in ", result.attempts,
        " attempt(s) of ", options.duration_ms, " ms: ", absl::StrJoin(reasons, "; "),
        "; no profile was written for it");
    if (options.host_tracer_level == 0) return absl::FailedPreconditionError(message);
    return absl::NotFoundError(message);
  };

  result.status = capture();
  if (result.host.empty()) {
    result.host = exporter::ToPlainName(absl::StrCat(job.address.host, "_", job.address.port));
  }
  {
    std::lock_guard<std::mutex> lock(run.mutex);
    job.state = result.status.ok() ? HostCaptureState::kSucceeded : HostCaptureState::kFailed;
    ++run.finished_count;
    if (options.on_progress) {
      CaptureProgress progress = Snapshot(run);
      progress.finished = result;
      run.reports.push_back(std::move(progress));
    }
  }
  run.changed.notify_all();
}

// Joins the host threads whatever happens to the calling thread.
struct ThreadJoiner {
  std::vector<std::thread> threads;
  ~ThreadJoiner() {
    for (std::thread& thread : threads) {
      if (thread.joinable()) thread.join();
    }
  }
};

}  // namespace

std::string RequestHostName(const ServiceAddress& address) {
  return exporter::ToPlainName(address.host);
}

tensorflow::ProfileRequest BuildProfileRequest(const CaptureOptions& options,
                                               const ServiceAddress& address,
                                               const std::string& repository_root,
                                               const std::string& session_id) {
  tensorflow::ProfileRequest request;
  // Older servers read the top-level duration, newer ones opts.duration_ms.
  request.set_duration_ms(static_cast<uint64_t>(options.duration_ms));
  request.set_max_events(kMaxEvents);
  // TPU servers turn these into tool data; others ignore them.
  request.add_tools("trace_viewer");
  // Asks TSL servers that predate emit_xspace to return the XSpace as tool
  // data.
  request.add_tools("xplane.pb");
  request.set_repository_root(repository_root);
  request.set_session_id(session_id);
  request.set_host_name(RequestHostName(address));
  request.set_emit_xspace(true);

  tensorflow::ProfileOptions* opts = request.mutable_opts();
  // TSL's ProfilerSession::DefaultOptions, with the levels asked for.
  opts->set_version(1);
  opts->set_device_type(tensorflow::ProfileOptions::UNSPECIFIED);
  opts->set_include_dataset_ops(true);
  opts->set_enable_hlo_proto(true);
  opts->set_host_tracer_level(static_cast<uint32_t>(options.host_tracer_level));
  opts->set_device_tracer_level(static_cast<uint32_t>(options.device_tracer_level));
  opts->set_python_tracer_level(static_cast<uint32_t>(options.python_tracer_level));
  opts->set_duration_ms(static_cast<uint64_t>(options.duration_ms));
  opts->set_session_id(session_id);
  // As TSL's client: start now (servers treat a past start as now).
  opts->set_start_timestamp_ns(static_cast<uint64_t>(core::EpochNowNs()));
  if (options.flight_recorder_now) {
    (*opts->mutable_advanced_configuration())[kFlightRecorderNowKey].set_bool_value(true);
  }
  return request;
}

std::string EmptyCaptureReason(const CaptureOptions& options, const ServiceAddress& address,
                               const XSpace* space) {
  std::vector<std::string> warnings;
  if (space != nullptr) warnings.assign(space->warnings().begin(), space->warnings().end());
  return EmptyCaptureReason(options, address, warnings);
}

std::string EmptyCaptureReason(const CaptureOptions& options, const ServiceAddress& address,
                               const std::vector<std::string>& warnings) {
  std::vector<std::string> reasons;
  if (options.host_tracer_level == 0) {
    reasons.push_back(
        "host_tracer_level 0 was requested, so host markers were filtered out");
  }
  for (const std::string& warning : warnings) {
    // The server's own level-0 note repeats the one above.
    if (options.host_tracer_level == 0 && absl::StrContains(warning, "host_tracer_level 0")) {
      continue;
    }
    reasons.push_back(absl::StrCat(address.address, " warned: ", warning));
  }
  if (reasons.empty()) {
    reasons.push_back(absl::StrCat("no markers ran on ", address.address, " during the ",
                                   options.duration_ms, " ms window"));
  }
  return absl::StrJoin(reasons, "; ");
}

absl::StatusOr<XSpace> ResponseSpace(tensorflow::ProfileResponse* response,
                                     const ServiceAddress& address,
                                     const std::string& saved_dir, std::string* saved_file) {
  XSpace space;
  if (response->has_xspace()) {
    space.Swap(response->mutable_xspace());  // Profiles can be large: no copy.
    return space;
  }
  for (const auto& tool : response->tool_data()) {
    if (absl::EndsWith(tool.name(), "xplane.pb")) {
      if (!space.ParseFromString(tool.data())) {
        return absl::DataLossError(absl::StrCat(
            address.address, " sent tool data '", tool.name(), "' that is not an XSpace"));
      }
      return space;
    }
  }
  const std::string file =
      absl::StrCat(saved_dir, "/", RequestHostName(address), exporter::kXPlaneSuffix);
  if (access(file.c_str(), F_OK) == 0) {
    // What is there is untrusted: ReadXSpaceFile refuses a FIFO (which would
    // hang a plain read), a device, an empty or oversized file.
    auto saved = exporter::ReadXSpaceFile(file);
    if (!saved.ok()) {
      return absl::Status(saved.status().code(),
                          absl::StrCat("the profile ", address.address,
                                       " saved: ", saved.status().message()));
    }
    *saved_file = file;
    return std::move(*saved);
  }
  if (response->empty_trace()) return space;  // Nothing to fetch: empty.
  return absl::FailedPreconditionError(absl::StrCat(
      address.address,
      " did not return its profile (it does not support emit_xspace) and saved it on "
      "its own machine under ",
      saved_dir, "/; copy it from there"));
}

std::string_view LongestFileSuffix(const CaptureOptions& options) {
  return options.write_chrome_trace ? exporter::kChromeTraceSuffix : exporter::kXPlaneSuffix;
}

std::string AddressHostName(const ServiceAddress& address) {
  return exporter::ToPlainName(absl::StrCat(address.host, "_", address.port));
}

std::string BaseHostName(const XSpace& space, const ServiceAddress& address,
                         bool host_is_shared, std::string_view longest_suffix) {
  return BaseHostName(std::vector<std::string>(space.hostnames().begin(),
                                               space.hostnames().end()),
                      address, host_is_shared, longest_suffix,
                      xplane::ReadJobIdentity(space));
}

std::string BaseHostName(const std::vector<std::string>& hostnames,
                         const ServiceAddress& address, bool host_is_shared,
                         std::string_view longest_suffix,
                         const xplane::JobIdentity& identity) {
  if (!hostnames.empty() && exporter::IsPlainName(hostnames[0])) {
    // Ranks sharing a host are told apart by rank, as their own files are;
    // other servers sharing a host by port.
    std::string name = xplane::RankedHostName(hostnames[0], identity);
    if (host_is_shared && !identity.distributed()) absl::StrAppend(&name, "_", address.port);
    // A name too long for its files falls back to host_port, which
    // CheckOptions made sure fits before the capture started.
    if (name.size() + longest_suffix.size() <= exporter::kMaxFileNameBytes) return name;
  }
  return AddressHostName(address);
}

}  // namespace rpc

namespace rpc {
namespace {

// Checks every option; the parsed addresses when they are all good.
absl::StatusOr<std::vector<ServiceAddress>> CheckOptions(const CaptureOptions& options) {
  auto addresses = ParseAddresses(options);
  if (!addresses.ok()) return addresses.status();
  if (options.logdir.empty()) {
    return absl::InvalidArgumentError("CaptureOptions::logdir must not be empty");
  }
  struct Range {
    const char* field;
    int64_t value, low, high;
  };
  const Range ranges[] = {
      {"duration_ms", options.duration_ms, 1, kMaxCaptureDurationMs},
      {"num_tracing_attempts", options.num_tracing_attempts, 1, kMaxTracingAttempts},
      {"host_tracer_level", options.host_tracer_level, 0, 3},
      {"device_tracer_level", options.device_tracer_level, 0, 2},
      {"python_tracer_level", options.python_tracer_level, 0, 1},
      {"connect_timeout_ms", options.connect_timeout_ms, 1, kMaxCaptureDurationMs},
  };
  for (const Range& range : ranges) {
    if (auto s = CheckRange(range.field, range.value, range.low, range.high); !s.ok()) {
      return s;
    }
  }
  if (!options.run_name.empty()) {
    if (auto s = exporter::CheckPlainName(options.run_name, "CaptureOptions::run_name");
        !s.ok()) {
      return s;
    }
  }
  // Every host's files are named at worst <host>_<port><suffix>: refuse
  // now what could only fail after the whole capture.
  const std::string_view suffix = LongestFileSuffix(options);
  for (size_t i = 0; i < addresses->size(); ++i) {
    const std::string name = AddressHostName((*addresses)[i]);
    if (name.size() + suffix.size() > exporter::kMaxFileNameBytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          "CaptureOptions::service_addresses[", i, "]: the host name of ",
          exporter::QuoteForMessage((*addresses)[i].address),
          " is too long for its files: '<host>_<port>", std::string(suffix), "' would be ",
          name.size() + suffix.size(), " bytes, the file system takes at most ",
          exporter::kMaxFileNameBytes, " (NAME_MAX); use a shorter host name or its IP address"));
    }
  }
  return addresses;
}

}  // namespace
}  // namespace rpc

absl::Status ValidateCaptureOptions(const CaptureOptions& options) {
  return rpc::CheckOptions(options).status();
}

absl::StatusOr<CaptureResult> Capture(const CaptureOptions& options) {
  auto addresses = rpc::CheckOptions(options);
  if (!addresses.ok()) return addresses.status();

  rpc::Run run;
  run.options = &options;
  auto run_dir =
      exporter::CreateRunDirectory(options.logdir, options.run_name, core::EpochNowNs());
  if (!run_dir.ok()) return run_dir.status();
  run.run_dir = *run_dir;
  run.session_id = run.run_dir.substr(run.run_dir.rfind('/') + 1);
  // Absolute, so that a server on this machine with another working
  // directory saves into the same folder.
  {
    const std::string root = exporter::ProfileRoot(options.logdir);
    char resolved[PATH_MAX];
    run.repository_root = realpath(root.c_str(), resolved) != nullptr ? resolved : root;
  }

  std::map<std::string, int> hosts_seen;
  for (const rpc::ServiceAddress& address : *addresses) ++hosts_seen[address.host];
  run.jobs.resize(addresses->size());
  for (size_t i = 0; i < addresses->size(); ++i) {
    rpc::HostJob& job = run.jobs[i];
    job.address = (*addresses)[i];
    job.host_is_shared = hosts_seen[job.address.host] > 1;
    job.result.address = job.address.address;
  }

  run.start = rpc::Clock::now();
  {
    rpc::ThreadJoiner joiner;
    for (size_t i = 0; i < run.jobs.size(); ++i) {
      joiner.threads.emplace_back([&run, i] { rpc::CaptureHost(run, i); });
    }
    // Report progress from this thread until every host is done: the
    // reports the hosts queued, and one every kProgressInterval.
    std::unique_lock<std::mutex> lock(run.mutex);
    auto next_tick = run.start + rpc::kProgressInterval;
    while (true) {
      while (!run.reports.empty()) {
        CaptureProgress progress = std::move(run.reports.front());
        run.reports.pop_front();
        lock.unlock();
        options.on_progress(progress);
        lock.lock();
      }
      if (run.finished_count == run.jobs.size()) break;
      if (run.changed.wait_until(lock, next_tick, [&] {
            return !run.reports.empty() || run.finished_count == run.jobs.size();
          })) {
        continue;
      }
      // From now: a slow callback must not cause a burst of reports.
      next_tick = rpc::Clock::now() + rpc::kProgressInterval;
      if (options.on_progress) {
        CaptureProgress progress = rpc::Snapshot(run);
        lock.unlock();
        options.on_progress(progress);
        lock.lock();
      }
    }
  }

  CaptureResult result;
  result.run_dir = run.run_dir;
  std::vector<std::string> failures;
  bool same_code = true;
  for (rpc::HostJob& job : run.jobs) {
    if (!job.result.status.ok()) {
      failures.push_back(std::string(job.result.status.message()));
      same_code = same_code && job.result.status.code() == run.jobs[0].result.status.code();
    }
    result.hosts.push_back(std::move(job.result));
  }
  if (failures.size() < result.hosts.size()) return result;

  // No host has a profile: leave no empty run folder behind.
  rmdir(run.run_dir.c_str());
  const absl::StatusCode code =
      same_code ? result.hosts[0].status.code() : absl::StatusCode::kUnavailable;
  return absl::Status(code, absl::StrCat("no host was captured (all ", failures.size(),
                                         " failed): ", absl::StrJoin(failures, " | ")));
}

}  // namespace neuronprof
