// neuronprof::Capture: one thread per host drives a Profile RPC (retrying
// empty windows); the calling thread reports progress and waits.
#include "src/rpc/capture_client.h"

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
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
#include <thread>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "proto/profiler_service.grpc.pb.h"
#include "src/core/clock.h"
#include "src/export/logdir.h"
#include "src/rpc/capture_run.h"
#include "src/rpc/clock_probe.h"
#include "src/rpc/grpc_status.h"
#include "src/rpc/profiler_service_impl.h"
#include "src/rpc/response_scan.h"
#include "src/xplane/clock_offset.h"
#include "src/xplane/saturating.h"

namespace neuronprof {

const char* HostCaptureStateName(HostCaptureState state) {
  switch (state) {
    case HostCaptureState::kConnecting:
      return "connecting";
    case HostCaptureState::kWindow:
      return "window";
    case HostCaptureState::kServerCollecting:
      return "server collecting";
    case HostCaptureState::kReceiving:
      return "receiving";
    case HostCaptureState::kWriting:
      return "writing";
    case HostCaptureState::kSucceeded:
      return "done";
    case HostCaptureState::kFailed:
      return "failed";
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

using tensorflow::profiler::XSpace;

// Waits between connection attempts: 250 ms, doubled each time, at most 5 s.
constexpr int64_t kFirstRetryWaitMs = 250;
constexpr int64_t kMaxRetryWaitMs = 5000;
// One clock probe round trip may take this long (a loaded server answers
// in well under a millisecond; the connection is up already).
constexpr int64_t kClockProbeTimeoutMs = 2000;
constexpr auto kProgressInterval = std::chrono::milliseconds(250);
// TSL's client asks for at most this many events.
constexpr uint64_t kMaxEvents = 1000000;

// Waits until the channel is connected. A refused or unresolvable address
// puts the channel into TRANSIENT_FAILURE at once: fail then, not at the
// timeout.
absl::Status WaitConnected(grpc::Channel& channel, const ServiceAddress& address,
                           int64_t timeout_ms) {
  const auto deadline = std::chrono::system_clock::now() + std::chrono::milliseconds(timeout_ms);
  grpc_connectivity_state state = channel.GetState(/*try_to_connect=*/true);
  while (state != GRPC_CHANNEL_READY) {
    if (state == GRPC_CHANNEL_TRANSIENT_FAILURE || state == GRPC_CHANNEL_SHUTDOWN) {
      return absl::UnavailableError(absl::StrCat(
          "cannot connect to ", address.address,
          ": the connection was refused, the host is unreachable or its name does "
          "not resolve, or what listens on port ",
          address.port, " is not a ProfilerService (is a profiler server listening there?)"));
    }
    if (!channel.WaitForStateChange(state, deadline)) {
      // A program that accepts the connection but never speaks gRPC (another
      // service in a port range) ends here too.
      return absl::DeadlineExceededError(absl::StrCat(
          "cannot connect to ", address.address, ": no gRPC connection within ", timeout_ms,
          " ms (CaptureOptions::connect_timeout_ms): the host does not answer, or what "
          "listens on port ",
          address.port, " is not a ProfilerService"));
    }
    state = channel.GetState(/*try_to_connect=*/true);
  }
  return absl::OkStatus();
}

// A failed Profile call, in words that say what happened to the host.
absl::Status DescribeRpcFailure(const grpc::Status& status, const ServiceAddress& address,
                                int64_t duration_ms, int64_t response_timeout_ms) {
  const std::string detail = absl::StrCat(absl::StatusCodeToString(ToAbslCode(status.error_code())),
                                          ": ", status.error_message());
  switch (status.error_code()) {
    case grpc::StatusCode::UNAVAILABLE:
      return absl::UnavailableError(
          absl::StrCat(address.address,
                       " closed the connection during the capture (the server exited or the "
                       "network failed): ",
                       detail));
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return absl::DeadlineExceededError(
          absl::StrCat(address.address, " did not answer within ",
                       duration_ms + response_timeout_ms, " ms (the ", duration_ms, " ms window + ",
                       response_timeout_ms, " ms CaptureOptions::response_timeout_ms): ", detail));
    case grpc::StatusCode::UNIMPLEMENTED:
      // A gRPC program without tensorflow.ProfilerService: a port range that
      // runs into another service (its rank is unknown: it is not one).
      return absl::UnimplementedError(absl::StrCat(
          address.address, " is not a ProfilerService: the gRPC server on port ", address.port,
          " does not serve tensorflow.ProfilerService/Profile (", detail, ")"));
    default:
      return absl::Status(ToAbslCode(status.error_code()),
                          absl::StrCat(address.address, " refused the capture: ", detail));
  }
}

// Holds one of the run's max_parallel_hosts slots for reading and writing
// a received profile.
class WriteSlot {
 public:
  explicit WriteSlot(Run& run) : run_(run) {
    std::unique_lock<std::mutex> lock(run_.mutex);
    run_.slot_freed.wait(lock, [&] { return run_.busy_slots < run_.options->max_parallel_hosts; });
    ++run_.busy_slots;
  }
  ~WriteSlot() {
    {
      std::lock_guard<std::mutex> lock(run_.mutex);
      --run_.busy_slots;
    }
    run_.slot_freed.notify_one();
  }
  WriteSlot(const WriteSlot&) = delete;
  WriteSlot& operator=(const WriteSlot&) = delete;

 private:
  Run& run_;
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
// which comes just before its bytes, is seen. Its completion queue is
// polled by the waiting thread itself, so the response is read the moment
// it comes: gRPC 1.51's callback API polls in 1 s turns with 100 ms
// pauses, which held responses back by up to 100 ms.
class ProfileCall final {
 public:
  // `on_response_begins(announced_bytes, collect_ms)` runs in Wait; the
  // values are 0 when the server does not send them.
  ProfileCall(grpc::ClientContext* context,
              std::function<void(int64_t, int64_t)> on_response_begins)
      : context_(context), on_response_begins_(std::move(on_response_begins)) {}
  ~ProfileCall() {
    queue_.Shutdown();
    void* tag = nullptr;
    bool ok = false;
    while (queue_.Next(&tag, &ok)) {
    }
  }
  ProfileCall(const ProfileCall&) = delete;
  ProfileCall& operator=(const ProfileCall&) = delete;

  void Start(grpc::GenericStub& stub, const grpc::ByteBuffer& request, grpc::ByteBuffer* response) {
    reader_ = stub.PrepareUnaryCall(context_, kProfileMethod, request, &queue_);
    reader_->StartCall();
    reader_->ReadInitialMetadata(&headers_tag_);
    reader_->Finish(response, &status_, &done_tag_);
  }

  // Waits for the end of the call; `on_window_over` runs once, here, if the
  // call is still going at `window_end`.
  grpc::Status Wait(Clock::time_point window_end, const std::function<void()>& on_window_over) {
    bool window_over = false;
    for (int pending = 2; pending > 0;) {
      void* tag = nullptr;
      bool ok = false;
      if (window_over) {
        if (!queue_.Next(&tag, &ok)) break;
      } else {
        // The queue's deadlines are on the system clock.
        const auto deadline = std::chrono::system_clock::now() + (window_end - Clock::now());
        const auto next = queue_.AsyncNext(&tag, &ok, deadline);
        if (next == grpc::CompletionQueue::TIMEOUT) {
          window_over = true;
          on_window_over();
          continue;
        }
        if (next == grpc::CompletionQueue::SHUTDOWN) break;
      }
      --pending;
      if (tag == &done_tag_) {
        window_over = true;  // Nothing to report once the call is over.
      } else if (ok) {       // Not ok: the call failed first; its status says how.
        on_response_begins_(HeaderNumber(kResponseBytesHeader), HeaderNumber(kCollectMsHeader));
      }
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
  grpc::CompletionQueue queue_;
  std::unique_ptr<grpc::GenericClientAsyncResponseReader> reader_;
  grpc::Status status_;
  char headers_tag_ = 0;  // Their addresses tell the events apart.
  char done_tag_ = 0;
};

// A connected channel to the host, trying options.connect_attempts times.
absl::StatusOr<std::shared_ptr<grpc::Channel>> ConnectWithRetry(const CaptureOptions& options,
                                                                const ServiceAddress& address) {
  absl::Status last;
  int64_t wait_ms = kFirstRetryWaitMs;
  for (int attempt = 1; attempt <= options.connect_attempts; ++attempt) {
    if (attempt > 1) {
      std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
      wait_ms = std::min(wait_ms * 2, kMaxRetryWaitMs);
    }
    grpc::ChannelArguments args;
    // Profiles easily exceed gRPC's 4 MiB default.
    args.SetMaxReceiveMessageSize(INT_MAX);
    args.SetMaxSendMessageSize(INT_MAX);
    // A private subchannel: a failed connection to this address earlier
    // (in the process, or the attempt before) must not fail this one at once.
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    auto channel =
        grpc::CreateCustomChannel(address.Target(), grpc::InsecureChannelCredentials(), args);
    last = WaitConnected(*channel, address, options.connect_timeout_ms);
    if (last.ok()) return channel;
  }
  if (options.connect_attempts == 1) return last;
  return absl::Status(last.code(),
                      absl::StrCat(last.message(), " (", options.connect_attempts, " attempts)"));
}

// The host's clock offset, measured before the window so that it costs no
// window time, and recorded in `result`.
std::optional<xplane::ClockOffset> ProbeClock(grpc::Channel& channel, const CaptureOptions& options,
                                              HostCaptureResult& result) {
  std::string refused;
  const std::optional<xplane::ClockOffset> clock_offset = MeasureClockOffset(
      channel, std::min(options.connect_timeout_ms, kClockProbeTimeoutMs), &refused);
  if (!refused.empty()) result.warnings.push_back("neuronprof capture: " + refused);
  if (clock_offset) {
    result.clock_offset_measured = true;
    result.clock_offset_ns = clock_offset->offset_ns;
    result.clock_offset_uncertainty_ns = clock_offset->uncertainty_ns;
  }
  return clock_offset;
}

// Opens attempt `attempt`'s window: it starts now.
void StartAttempt(Run& run, HostJob& job, int attempt) {
  {
    std::lock_guard<std::mutex> lock(run.mutex);
    job.attempt = attempt;
    job.window_start = Clock::now();
    job.response_bytes = 0;
  }
  SetStage(run, job, HostCaptureState::kWindow);
  job.result.attempts = attempt;
}

// The window's Profile call, until its response is in `response`: the
// time it was received, the window's stages reported and its timings set;
// a failed call in words.
absl::StatusOr<Clock::time_point> CallProfile(Run& run, HostJob& job, grpc::GenericStub& stub,
                                              int64_t server_clock_offset_ns,
                                              HostCaptureTimings& timings,
                                              grpc::ByteBuffer* response) {
  const CaptureOptions& options = *run.options;
  const std::string request = BuildProfileRequest(options, job.address, run.repository_root,
                                                  run.session_id, server_clock_offset_ns)
                                  .SerializeAsString();
  grpc::Slice request_slice(request);
  grpc::ByteBuffer request_buffer(&request_slice, 1);
  grpc::ClientContext context;
  context.set_deadline(
      std::chrono::system_clock::now() +
      std::chrono::milliseconds(options.duration_ms + options.response_timeout_ms));
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
  call.Start(stub, request_buffer, response);
  const grpc::Status status = call.Wait(window_end, [&] {
    SetStage(run, job, HostCaptureState::kServerCollecting, HostCaptureState::kWindow);
  });
  const Clock::time_point received = Clock::now();
  if (!status.ok()) {
    return DescribeRpcFailure(status, job.address, options.duration_ms,
                              options.response_timeout_ms);
  }
  std::lock_guard<std::mutex> lock(run.mutex);
  timings.window_ms = options.duration_ms;
  timings.server_ms = std::max<int64_t>(0, MillisBetween(window_end, response_begins));
  timings.receive_ms = MillisBetween(std::max(window_end, response_begins), received);
  return received;
}

// A profile with events: the host's name in the run folder, its files, and
// the result that reports them.
absl::Status KeepProfile(Run& run, HostJob& job, ReceivedProfile& profile,
                         const std::optional<xplane::ClockOffset>& clock_offset,
                         HostCaptureTimings& timings, Clock::time_point received) {
  HostCaptureResult& result = job.result;
  const ScannedResponse& scanned = profile.scanned;
  const std::string host = ClaimHostName(run, scanned, job);
  result.host = host;
  SetStage(run, job, HostCaptureState::kWriting);
  auto files = WriteHostFiles(run, profile, host, job.address, clock_offset, timings, received);
  if (!files.ok()) {
    return absl::Status(files.status().code(),
                        absl::StrCat("cannot write the profile of ", job.address.address, ": ",
                                     files.status().message()));
  }
  timings.write_ms = MillisSince(received);
  // A copy the server saved under another name would be a duplicate.
  RemoveServerFile(run, profile.saved_file);
  result.files = std::move(*files);
  result.events = scanned.events;
  // After the client's own (the clock probe's), the server's.
  result.warnings.insert(result.warnings.end(), scanned.warnings.begin(), scanned.warnings.end());
  result.timings = timings;
  return absl::OkStatus();
}

// The failure of a host whose every window was empty: each distinct reason.
absl::Status AllWindowsEmpty(const CaptureOptions& options, const HostJob& job) {
  const HostCaptureResult& result = job.result;
  std::vector<std::string> reasons;
  for (const std::string& reason : result.empty_reasons) {
    if (std::find(reasons.begin(), reasons.end(), reason) == reasons.end()) {
      reasons.push_back(reason);
    }
  }
  const std::string message =
      absl::StrCat("no trace events from ", job.address.address, " in ", result.attempts,
                   " attempt(s) of ", options.duration_ms, " ms: ", absl::StrJoin(reasons, "; "),
                   "; no profile was written for it");
  if (options.host_tracer_level == 0) return absl::FailedPreconditionError(message);
  return absl::NotFoundError(message);
}

// Windows until one has events, then that one's files.
absl::Status CaptureWindows(Run& run, HostJob& job, grpc::GenericStub& stub,
                            const std::optional<xplane::ClockOffset>& clock_offset) {
  const CaptureOptions& options = *run.options;
  for (int attempt = 1; attempt <= options.num_tracing_attempts; ++attempt) {
    HostCaptureTimings timings;
    StartAttempt(run, job, attempt);
    grpc::ByteBuffer response;
    auto received =
        CallProfile(run, job, stub, clock_offset ? clock_offset->offset_ns : 0, timings, &response);
    if (!received.ok()) return received.status();
    // Reading, aligning and writing the profile take a slot of
    // max_parallel_hosts; the window itself never waits for one.
    WriteSlot slot(run);
    timings.response_bytes = static_cast<int64_t>(response.Length());
    auto profile = ReadResponse(response, run, job.address);
    if (!profile.ok()) return profile.status();
    if (profile->scanned.events == 0) {
      // Never keep an empty profile, not even one the server saved.
      RemoveServerFile(run, profile->saved_file);
      job.result.empty_reasons.push_back(
          EmptyCaptureReason(options, job.address, profile->scanned.warnings));
      continue;
    }
    return KeepProfile(run, job, *profile, clock_offset, timings, *received);
  }
  return AllWindowsEmpty(options, job);
}

// Connects, then captures.
absl::Status ConnectAndCapture(Run& run, HostJob& job) {
  auto connected = ConnectWithRetry(*run.options, job.address);
  if (!connected.ok()) return connected.status();
  std::shared_ptr<grpc::Channel> channel = std::move(*connected);
  const std::optional<xplane::ClockOffset> clock_offset =
      ProbeClock(*channel, *run.options, job.result);
  grpc::GenericStub stub(channel);
  return CaptureWindows(run, job, stub, clock_offset);
}

// One host's whole capture: connect, windows until one has events, files;
// then its final stage and report.
void CaptureHost(Run& run, size_t index) {
  HostJob& job = run.jobs[index];
  HostCaptureResult& result = job.result;
  result.status = ConnectAndCapture(run, job);
  if (result.host.empty()) result.host = AddressHostName(job.address);
  {
    std::lock_guard<std::mutex> lock(run.mutex);
    job.state = result.status.ok() ? HostCaptureState::kSucceeded : HostCaptureState::kFailed;
    ++run.finished_count;
    if (run.options->on_progress) {
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

// The run folder, <logdir>/plugins/profile/<run>, and the root and session
// the servers are told.
absl::Status CreateRunFolder(Run& run) {
  const CaptureOptions& options = *run.options;
  auto run_dir = exporter::CreateRunDirectory(options.logdir, options.run_name, core::EpochNowNs());
  if (!run_dir.ok()) return run_dir.status();
  run.run_dir = *run_dir;
  run.session_id = run.run_dir.substr(run.run_dir.rfind('/') + 1);
  // Absolute, so that a server on this machine with another working
  // directory saves into the same folder.
  const std::string root = exporter::ProfileRoot(options.logdir);
  char resolved[PATH_MAX];
  run.repository_root = realpath(root.c_str(), resolved) != nullptr ? resolved : root;
  return absl::OkStatus();
}

// One job per address; a host listed with more than one port is shared.
void AddJobs(const std::vector<ServiceAddress>& addresses, Run& run) {
  std::map<std::string, int> hosts_seen;
  for (const ServiceAddress& address : addresses) ++hosts_seen[address.host];
  run.jobs.resize(addresses.size());
  for (size_t i = 0; i < addresses.size(); ++i) {
    HostJob& job = run.jobs[i];
    job.address = addresses[i];
    job.host_is_shared = hosts_seen[job.address.host] > 1;
    job.result.address = job.address.address;
  }
}

// Captures every host on a thread of its own and reports progress from
// this thread until every host is done: the reports the hosts queued, and
// one every kProgressInterval.
void CaptureHosts(Run& run) {
  const CaptureOptions& options = *run.options;
  run.start = Clock::now();
  ThreadJoiner joiner;
  for (size_t i = 0; i < run.jobs.size(); ++i) {
    joiner.threads.emplace_back([&run, i] { CaptureHost(run, i); });
  }
  std::unique_lock<std::mutex> lock(run.mutex);
  auto next_tick = run.start + kProgressInterval;
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
    next_tick = Clock::now() + kProgressInterval;
    if (options.on_progress) {
      CaptureProgress progress = Snapshot(run);
      lock.unlock();
      options.on_progress(progress);
      lock.lock();
    }
  }
}

// Every host's result; when no host has a profile, one error for all and
// no empty run folder left behind.
absl::StatusOr<CaptureResult> Results(Run& run) {
  CaptureResult result;
  result.run_dir = run.run_dir;
  std::vector<std::string> failures;
  bool same_code = true;
  for (HostJob& job : run.jobs) {
    if (!job.result.status.ok()) {
      failures.push_back(std::string(job.result.status.message()));
      same_code = same_code && job.result.status.code() == run.jobs[0].result.status.code();
    }
    result.hosts.push_back(std::move(job.result));
  }
  if (failures.size() < result.hosts.size()) return result;

  rmdir(run.run_dir.c_str());
  const absl::StatusCode code =
      same_code ? result.hosts[0].status.code() : absl::StatusCode::kUnavailable;
  return absl::Status(code, absl::StrCat("no host was captured (all ", failures.size(),
                                         " failed): ", absl::StrJoin(failures, " | ")));
}

}  // namespace

std::string RequestHostName(const ServiceAddress& address) {
  return exporter::ToPlainName(address.host);
}

tensorflow::ProfileRequest BuildProfileRequest(const CaptureOptions& options,
                                               const ServiceAddress& address,
                                               const std::string& repository_root,
                                               const std::string& session_id,
                                               int64_t server_clock_offset_ns) {
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
  // As TSL's client: start now (servers treat a past start as now), on
  // the server's clock: a server ahead of this one would wait otherwise.
  opts->set_start_timestamp_ns(static_cast<uint64_t>(
      std::max<int64_t>(0, SaturatingAdd(core::EpochNowNs(), server_clock_offset_ns))));
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
    reasons.push_back("host_tracer_level 0 was requested, so host markers were filtered out");
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

}  // namespace rpc

absl::StatusOr<CaptureResult> Capture(const CaptureOptions& requested) {
  const CaptureOptions options = rpc::WithCurrentNames(requested);
  auto addresses = rpc::CheckOptions(options);
  if (!addresses.ok()) return addresses.status();

  rpc::Run run;
  run.options = &options;
  if (auto s = rpc::CreateRunFolder(run); !s.ok()) return s;
  rpc::AddJobs(*addresses, run);
  rpc::CaptureHosts(run);
  return rpc::Results(run);
}

}  // namespace neuronprof
