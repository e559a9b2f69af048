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
#include <future>
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
#include "src/export/kineto_trace.h"
#include "src/export/logdir.h"
#include "src/export/trace_stream.h"
#include "src/export/xspace_file.h"
#include "src/rpc/clock_probe.h"
#include "src/rpc/grpc_status.h"
#include "src/rpc/profiler_service_impl.h"
#include "src/rpc/response_scan.h"
#include "src/rpc/space_fragments.h"
#include "src/xplane/clock_offset.h"
#include "src/xplane/schema.h"
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

// Waits between connection attempts: 250 ms, doubled each time, at most 5 s.
constexpr int64_t kFirstRetryWaitMs = 250;
constexpr int64_t kMaxRetryWaitMs = 5000;
// One clock probe round trip may take this long (a loaded server answers
// in well under a millisecond; the connection is up already).
constexpr int64_t kClockProbeTimeoutMs = 2000;
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
          "not resolve, or what listens on port ", address.port,
          " is not a ProfilerService (is a profiler server listening there?)"));
    }
    if (!channel.WaitForStateChange(state, deadline)) {
      // A program that accepts the connection but never speaks gRPC (another
      // service in a port range) ends here too.
      return absl::DeadlineExceededError(absl::StrCat(
          "cannot connect to ", address.address, ": no gRPC connection within ", timeout_ms,
          " ms (CaptureOptions::connect_timeout_ms): the host does not answer, or what "
          "listens on port ", address.port, " is not a ProfilerService"));
    }
    state = channel.GetState(/*try_to_connect=*/true);
  }
  return absl::OkStatus();
}

// A failed Profile call, in words that say what happened to the host.
absl::Status DescribeRpcFailure(const grpc::Status& status, const ServiceAddress& address,
                                int64_t duration_ms, int64_t response_timeout_ms) {
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
          address.address, " did not answer within ", duration_ms + response_timeout_ms,
          " ms (the ", duration_ms, " ms window + ", response_timeout_ms,
          " ms CaptureOptions::response_timeout_ms): ", detail));
    case grpc::StatusCode::UNIMPLEMENTED:
      // A gRPC program without tensorflow.ProfilerService: a port range that
      // runs into another service (its rank is unknown: it is not one).
      return absl::UnimplementedError(absl::StrCat(
          address.address, " is not a ProfilerService: the gRPC server on port ",
          address.port, " does not serve tensorflow.ProfilerService/Profile (", detail, ")"));
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
  // Hosts reading, aligning and writing their profile now, at most
  // options->max_parallel_hosts; guarded by mutex, waited on with slot_freed.
  int busy_slots = 0;
  std::condition_variable slot_freed;
};

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

  void Start(grpc::GenericStub& stub, const grpc::ByteBuffer& request,
             grpc::ByteBuffer* response) {
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
      } else if (ok) {  // Not ok: the call failed first; its status says how.
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
// the response holds it (neuronprof's and TSL's servers with emit_xspace),
// else the XSpace parsed by ResponseSpace.
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
  if (scanned->xspace_fields > 0) {
    profile.scanned = std::move(*scanned);
    return profile;
  }
  // Tool data or a file the server saved: no XSpace in the response's own
  // bytes, so no map for protobuf to parse there.
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

// The host's Kineto trace, where a Profiler puts its own:
// <logdir>/<run>/<host>.pt.trace.json.gz; empty without write_pytorch_trace.
std::string KinetoTraceDir(const Run& run) {
  if (!run.options->write_pytorch_trace) return "";
  return absl::StrCat(run.options->logdir, "/", run.session_id);
}

// Opens the host's trace files (written only once finished), adding their
// paths to `files`.
absl::Status OpenTraceFiles(const Run& run, const std::string& host,
                            std::vector<std::string>* files,
                            std::vector<std::unique_ptr<exporter::TraceFileStream>>* traces) {
  std::vector<std::pair<exporter::TraceFormat, std::string>> wanted;
  if (WritesChromeTrace(*run.options)) {
    wanted.emplace_back(exporter::TraceFormat::kChrome,
                        absl::StrCat(run.run_dir, "/", host, exporter::kChromeTraceSuffix));
  }
  const std::string kineto_dir = KinetoTraceDir(run);
  if (!kineto_dir.empty()) {
    if (auto s = exporter::MakeDirectories(kineto_dir); !s.ok()) return s;
    wanted.emplace_back(exporter::TraceFormat::kKineto,
                        absl::StrCat(kineto_dir, "/", host, exporter::kPyTorchTraceSuffix));
  }
  for (auto& [format, path] : wanted) {
    auto trace = exporter::TraceFileStream::Open(format, path);
    if (!trace.ok()) return trace.status();
    traces->push_back(std::move(*trace));
    files->push_back(std::move(path));
  }
  return absl::OkStatus();
}

// Writes the host's files, its times put on this client's clock by
// `offset` (or recorded as unmeasured). A profile still in gRPC's bytes
// has only its Task Environment plane replaced (neuronprof's lines are
// relative to its start time) and is written as it came; the Chrome and
// Kineto traces are fed fragments of it as it is parsed.
absl::StatusOr<std::vector<std::string>> WriteHostFiles(
    const Run& run, ReceivedProfile& profile, const std::string& host,
    const ServiceAddress& address, const std::optional<xplane::ClockOffset>& offset,
    HostCaptureTimings& timings, Clock::time_point received) {
  if (!profile.space && offset && profile.scanned.epoch_line_times) {
    // Lines on the epoch move one by one: parse them.
    XSpace space;
    if (!ParsePieces(profile.scanned.xspace, &space)) {
      return absl::DataLossError(
          absl::StrCat(address.address, " sent a profile that is not an XSpace"));
    }
    profile.space = std::move(space);
  }
  if (profile.space) {
    xplane::AlignSpaceClock(offset, &*profile.space);
    exporter::ExportOptions export_options;
    export_options.chrome_trace = WritesChromeTrace(*run.options);
    export_options.pytorch_trace_dir = KinetoTraceDir(run);
    auto files = exporter::WriteProfileFiles(*profile.space, run.run_dir, host, export_options);
    timings.xplane_written_ms = MillisSince(received);
    return files;
  }
  tensorflow::profiler::XPlane environment;
  if (profile.scanned.task_environment) {
    environment = *profile.scanned.task_environment;
  } else {
    environment.set_id(profile.scanned.planes);
    environment.set_name(xplane::kTaskEnvironmentPlaneName);
  }
  xplane::RecordClockOffset(offset, &environment);
  std::string environment_bytes;
  const BytePieces xspace =
      ReplaceTaskEnvironment(profile.scanned, environment, &environment_bytes);
  std::vector<std::string> files = {
      absl::StrCat(run.run_dir, "/", host, exporter::kXPlaneSuffix)};
  // The xplane.pb (and its fsync) is written beside the traces, from the
  // same bytes.
  std::future<absl::Status> xplane_written =
      std::async(std::launch::async, [&, path = files[0]] {  // `files` grows meanwhile.
    absl::Status written = exporter::WriteFileAtomically(path, xspace);
    timings.xplane_written_ms = MillisSince(received);
    return written;
  });
  std::vector<std::unique_ptr<exporter::TraceFileStream>> traces;
  absl::Status status = OpenTraceFiles(run, host, &files, &traces);
  if (status.ok() && !traces.empty()) {
    // Fragment by fragment as the bytes are parsed: no whole XSpace.
    status = ForEachSpaceFragment(xspace, kCaptureFragmentEvents, [&](const XSpace& fragment) {
      for (const auto& trace : traces) {
        if (absl::Status s = trace->Append(fragment); !s.ok()) return s;
      }
      return absl::OkStatus();
    });
    if (status.code() == absl::StatusCode::kDataLoss) {
      status = absl::DataLossError(
          absl::StrCat(address.address, " sent a profile that is not an XSpace"));
    }
  }
  // Joined before any return; no trace is kept without its xplane.pb
  // (a trace not finished is removed).
  const absl::Status written = xplane_written.get();
  if (!written.ok()) return written;
  for (const auto& trace : traces) {
    if (!status.ok()) break;
    status = trace->Finish();
  }
  if (!status.ok()) {
    unlink(files[0].c_str());
    return status;
  }
  return files;
}

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
  return absl::Status(last.code(), absl::StrCat(last.message(), " (", options.connect_attempts,
                                                " attempts)"));
}

// One host's whole capture: connect, windows until one has events, files.
void CaptureHost(Run& run, size_t index) {
  HostJob& job = run.jobs[index];
  const CaptureOptions& options = *run.options;
  HostCaptureResult& result = job.result;

  auto capture = [&]() -> absl::Status {
    auto connected = ConnectWithRetry(options, job.address);
    if (!connected.ok()) return connected.status();
    std::shared_ptr<grpc::Channel> channel = std::move(*connected);
    // Before the window, so that it costs no window time.
    const std::optional<xplane::ClockOffset> clock_offset =
        MeasureClockOffset(*channel, std::min(options.connect_timeout_ms, kClockProbeTimeoutMs));
    if (clock_offset) {
      result.clock_offset_measured = true;
      result.clock_offset_ns = clock_offset->offset_ns;
      result.clock_offset_uncertainty_ns = clock_offset->uncertainty_ns;
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
          BuildProfileRequest(options, job.address, run.repository_root, run.session_id,
                              clock_offset ? clock_offset->offset_ns : 0)
              .SerializeAsString();
      grpc::Slice request_slice(request);
      grpc::ByteBuffer request_buffer(&request_slice, 1);
      grpc::ByteBuffer response;
      grpc::ClientContext context;
      context.set_deadline(std::chrono::system_clock::now() +
                           std::chrono::milliseconds(options.duration_ms +
                                                     options.response_timeout_ms));
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
      call.Start(stub, request_buffer, &response);
      const grpc::Status status = call.Wait(window_end, [&] {
        SetStage(run, job, HostCaptureState::kServerCollecting, HostCaptureState::kWindow);
      });
      const Clock::time_point received = Clock::now();
      if (!status.ok()) {
        return DescribeRpcFailure(status, job.address, options.duration_ms,
                                  options.response_timeout_ms);
      }
      // Reading, aligning and writing the profile take a slot of
      // max_parallel_hosts; the window itself never waits for one.
      WriteSlot slot(run);
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
      auto files =
          WriteHostFiles(run, *profile, host, job.address, clock_offset, timings, received);
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
  opts->set_start_timestamp_ns(
      static_cast<uint64_t>(core::EpochNowNs() + server_clock_offset_ns));
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
      if (tool.data().empty()) return space;
      // The file reader's parse: linear on any map entries.
      auto parsed = exporter::ParseXSpace(tool.data(), tool.name());
      if (!parsed.ok()) {
        return absl::DataLossError(absl::StrCat(
            address.address, " sent tool data '", tool.name(), "' that is not an XSpace"));
      }
      return parsed;
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

bool WritesChromeTrace(const CaptureOptions& options) {
  return exporter::ChromeTraceWanted(options.write_chrome_trace, options.write_pytorch_trace);
}

std::string_view LongestFileSuffix(const CaptureOptions& options) {
  if (options.write_pytorch_trace) return exporter::kPyTorchTraceSuffix;
  return WritesChromeTrace(options) ? exporter::kChromeTraceSuffix : exporter::kXPlaneSuffix;
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
// `options` with each deprecated field's value under its current name.
CaptureOptions WithCurrentNames(CaptureOptions options) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  if (options.write_kineto_trace) options.write_pytorch_trace = *options.write_kineto_trace;
  options.write_kineto_trace.reset();
#pragma GCC diagnostic pop
  return options;
}

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
      {"connect_attempts", options.connect_attempts, 1, kMaxConnectAttempts},
      {"response_timeout_ms", options.response_timeout_ms, 1, kMaxCaptureDurationMs},
      {"max_parallel_hosts", options.max_parallel_hosts, 1, kMaxParallelHosts},
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

absl::StatusOr<CaptureResult> Capture(const CaptureOptions& requested) {
  const CaptureOptions options = rpc::WithCurrentNames(requested);
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
