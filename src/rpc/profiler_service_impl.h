// The tensorflow.ProfilerService implementation behind ProfilerServer.
// Internal: include/neuronprof/server.h is the public face.
#ifndef NEURONPROF_SRC_RPC_PROFILER_SERVICE_IMPL_H_
#define NEURONPROF_SRC_RPC_PROFILER_SERVICE_IMPL_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "proto/profiler_service.grpc.pb.h"
#include "src/export/atomic_file.h"
#include "src/rpc/profile_call_limit.h"
#include "src/session/capture_session.h"
#include "src/xplane/job_identity.h"

namespace neuronprof {
namespace rpc {

// Headers of a Profile response with emit_xspace, sent with it (after the
// window and the collection, before the first byte of the response): its
// size in bytes, for the client's "receiving N MB", and how long stopping
// the collectors and building the XSpace took, in milliseconds.
inline constexpr char kResponseBytesHeader[] = "neuronprof-response-bytes";
inline constexpr char kCollectMsHeader[] = "neuronprof-collect-ms";

// ProfileOptions::advanced_configuration key: true asks a process with a
// FlightRecorder for the events of its last duration_ms at once, instead
// of a window from now (a process without one refuses it). Without it, a
// process with a FlightRecorder still serves requests: from its ring,
// after the window.
inline constexpr char kFlightRecorderNowKey[] = "neuronprof_flight_recorder";

// Bounds on a request, checked before any work (ProfilerServer sets the
// receive limit; Validate the rest). A ProfileRequest is a few names and
// options: 64 KiB leaves room for any real client while one message
// cannot make the server parse millions of strings.
inline constexpr int kMaxRequestBytes = 64 * 1024;
// repository_root: PATH_MAX bytes, and components resolved one by one.
inline constexpr size_t kMaxRepositoryRootBytes = 4096;
inline constexpr size_t kMaxRepositoryRootComponents = 128;
// Entries of tools, tool_options and opts.advanced_configuration each.
inline constexpr int kMaxRequestEntries = 64;
// Profile calls served at once, from the start of their handler until
// their response is sent (ProfileCallLimit); the excess is refused with
// RESOURCE_EXHAUSTED. One window at a time runs anyway; this bounds the
// responses held for clients that do not read them.
inline constexpr int kMaxProfileCalls = 2;

struct ServiceOptions {
  // Profiles saved by the server must resolve inside this folder.
  std::string allowed_root = "./logs";
  int64_t max_duration_ms = 3600 * 1000;
  uint64_t max_buffer_bytes = uint64_t{256} << 20;
  // How long a response may wait for its client (plus 1 s per MiB).
  int64_t response_timeout_ms = 60 * 1000;
  // The job's rank, stored in every capture's Task Environment plane.
  xplane::JobIdentity identity;
  // Profiles the server saves also get
  // <logdir>/<session>/<host>.pt.trace.json.gz when the repository_root is
  // <logdir>/plugins/profile, and <host>.trace.json.gz beside the
  // xplane.pb (unset: only without that Kineto trace).
  bool write_pytorch_trace = true;
  std::optional<bool> write_chrome_trace;
};

// Where a Profile without emit_xspace saves: <relative_dir>/<file_name>
// below the allowed root, held open since the request was validated.
struct SaveTarget {
  exporter::UniqueFd root;   // The resolved allowed_root.
  std::string root_path;     // Its resolved path, for messages.
  std::string relative_dir;  // <repository_root below root>/<session_id>.
  std::string file_name;     // <host>.xplane.pb
  std::string host;          // The file names' stem.
  // <logdir below root>/<session_id> for the Kineto trace when the
  // repository_root is <logdir>/plugins/profile, else empty.
  std::string kineto_dir;
};

// Resolves `path` (relative to the working directory) without requiring it
// to exist: realpath of its longest existing prefix, plus the rest, which
// may not hold "..".
absl::StatusOr<std::string> ResolvePath(const std::string& path);
// True if `path` is `root` or below it (both resolved).
bool IsInside(const std::string& root, const std::string& path);

class ProfilerServiceImpl final : public tensorflow::ProfilerService::Service {
 public:
  explicit ProfilerServiceImpl(ServiceOptions options);

  // One capture window of opts.duration_ms (or duration_ms); the XSpace
  // comes back in the response (emit_xspace) or is saved to
  // <repository_root>/<session_id>/<host>.xplane.pb. A response with the
  // XSpace is serialized here, from the capture's arena, and its bytes
  // go to call_limit(), whose interceptor sends them in place of
  // `response` (which holds no XSpace itself).
  grpc::Status Profile(grpc::ServerContext* context, const tensorflow::ProfileRequest* request,
                       tensorflow::ProfileResponse* response) override;
  // Ends the running Profile whose session_id matches, keeping its data.
  grpc::Status Terminate(grpc::ServerContext* context, const tensorflow::TerminateRequest* request,
                         tensorflow::TerminateResponse* response) override;
  // duration_ms 0: this server's clock at once, for the capture client's
  // clock alignment (rpc/clock_probe: kServerClockHeader). Otherwise
  // UNIMPLEMENTED, as in TSL.
  grpc::Status Monitor(grpc::ServerContext* context, const tensorflow::MonitorRequest* request,
                       tensorflow::MonitorResponse* response) override;

  // Ends a running capture (it still returns its data) and refuses new
  // ones. Called before grpc::Server::Shutdown.
  void BeginShutdown();

  // The limit on Profile calls at once; a server hosting this service
  // installs its interceptors (ProfileCallLimit::CreateInterceptorFactory).
  ProfileCallLimit& call_limit() { return call_limit_; }

  // Profile's first step, before any window opens (public for the fuzz
  // target): the request's fields against this server's options. On
  // success sets the window's `duration_ms`, the `host` naming the profile
  // and, without emit_xspace, where it will be saved (the allowed_root is
  // made if missing and held open). A refusal names the field and the
  // accepted values.
  // `flight_recorder_now`, when given, tells whether the request carries
  // kFlightRecorderNowKey.
  absl::Status Validate(const tensorflow::ProfileRequest& request, uint64_t* duration_ms,
                        std::string* host, SaveTarget* save,
                        bool* flight_recorder_now = nullptr) const;

 private:
  // Resolves repository_root/session_id below allowed_root and opens the
  // root (made if missing) before the window opens.
  absl::Status PrepareSave(const tensorflow::ProfileRequest& request, const std::string& host,
                           SaveTarget* save) const;

  class RunningCall;

  // A request on a process whose FlightRecorder records: the ring's last
  // duration_ms, at once (`now`) or after the window.
  grpc::Status ProfileFlightRecorder(grpc::ServerContext* context,
                                     const tensorflow::ProfileRequest& request,
                                     uint64_t duration_ms, const std::string& host,
                                     const SaveTarget& save, bool now,
                                     tensorflow::ProfileResponse* response);
  // The capture into the response (emit_xspace) or saved; `empty_reason`
  // becomes its warning when it holds no events.
  grpc::Status Respond(grpc::ServerContext* context, const tensorflow::ProfileRequest& request,
                       const std::string& host, const SaveTarget& save,
                       std::chrono::steady_clock::time_point window_over,
                       const std::string& empty_reason, session::CaptureResult captured,
                       tensorflow::ProfileResponse* response);

  enum class WaitEnd { kReached, kStopped, kCancelled };
  // Waits until `deadline`; ends early at Terminate of the running
  // session, shutdown (kStopped) or when the client gives up (kCancelled).
  WaitEnd WaitUntil(grpc::ServerContext* context, std::chrono::steady_clock::time_point deadline);

  const ServiceOptions options_;
  ProfileCallLimit call_limit_;
  std::mutex mutex_;
  std::condition_variable wake_;
  // The Profile call of this server that holds the capture (0: none), and
  // its session_id. The process's one capture gate decides who may run.
  uint64_t running_id_ = 0;
  uint64_t last_capture_id_ = 0;
  std::string running_session_;
  bool terminate_ = false;  // Terminate named it.
  bool shutting_down_ = false;
};

// For tests: the number of Profile calls holding a capture window right now
// (process-wide).
int RunningCapturesForTesting();

}  // namespace rpc
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_RPC_PROFILER_SERVICE_IMPL_H_
