// neuronprof::ProfilerServer: the tensorflow.ProfilerService gRPC server
// that remote capture clients (TensorBoard's "Capture profile", xprof,
// torch_xla's xp.trace, jax.profiler.trace over gRPC) talk to.
//
//   auto server = neuronprof::StartProfilerServer(9012);
//   if (!server.ok()) { /* e.g. the port is in use */ }
//   ... run the program; clients capture windows remotely ...
//   (*server)->Shutdown();   // or let it go out of scope
//
// Unlike TSL's server, it listens on 127.0.0.1 by default and only writes
// profiles under ProfilerServerOptions::allowed_root.
#ifndef NEURONPROF_SERVER_H_
#define NEURONPROF_SERVER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "neuronprof/export.h"

namespace neuronprof {

struct ProfilerServerOptions {
  // TCP port; 0 picks a free one (see ProfilerServer::port()).
  int port = 9012;
  // false: listen on 127.0.0.1 only; true: every interface ([::]).
  bool bind_all_interfaces = false;
  // Profiles that the server saves itself (requests without emit_xspace)
  // must have a repository_root inside this folder. It is resolved (and
  // made, if missing) when the request arrives and held open; the
  // <repository_root>/<session_id>/ folders below it are made and entered
  // when the window ends without following symbolic links, so a client
  // that swaps a folder for a link meanwhile gets PERMISSION_DENIED naming
  // the link and nothing is written outside. On a failed save the folders
  // this request made are taken away again.
  std::string allowed_root = "./logs";
  // Longest capture window a client may ask for.
  int64_t max_duration_ms = 3600 * 1000;
  // Event memory of one remote capture (32 B per event), 64 KiB..1 TiB;
  // beyond it events are dropped and counted, and the capture's warning
  // names this setting.
  int64_t max_buffer_bytes = int64_t{256} << 20;
  // A returned capture (emit_xspace) must be read by its client within
  // this long after it is ready, plus 1 s per MiB of it; otherwise the
  // call is cancelled and the response dropped, so that a client that
  // never reads holds neither its memory nor one of the two Profile calls
  // the server serves at once (a third is refused with RESOURCE_EXHAUSTED).
  // 1..2^40.
  int64_t response_timeout_ms = 60 * 1000;
  // The files of a profile the server saves itself (TensorBoard's /
  // xprof's Capture Profile dialog), by the viewer that reads each: the
  // <host>.xplane.pb always, and these.
  //
  // When the repository_root is <logdir>/plugins/profile (the dialogs'),
  // <logdir>/<session_id>/<host>.pt.trace.json.gz: the Kineto trace, for
  // the PyTorch TensorBoard plugin and HTA, which Perfetto and
  // chrome://tracing open as well. false: not written.
  bool write_pytorch_trace = true;
  // <host>.trace.json.gz beside the xplane.pb (Chrome trace event format).
  // Unset (the default): written only without the Kineto trace, as
  // CaptureOptions::write_chrome_trace, so that a capture is not written
  // as JSON twice. `neuronprof convert` writes it from the xplane.pb later.
  std::optional<bool> write_chrome_trace;
  // The job's rank identity, reported in every capture (as
  // ProfilerOptions::rank etc. say): each field when set, else RANK,
  // LOCAL_RANK, WORLD_SIZE from the environment, else rank 0 of 1. Start()
  // refuses bad values with InvalidArgument naming the field or variable.
  // The port is used as given: ProfilerOptions::port adds the local rank,
  // this server does not.
  std::optional<int> rank;
  std::optional<int> local_rank;
  std::optional<int> world_size;
  std::string backend;
};

// Thread-safety: ProfilerServer is thread-safe: port() and Shutdown() may
// be called from any threads at once (Shutdown() takes a mutex: a second
// call waits for the first, then returns); only destroying it must not
// race a call. In a child forked while it lives, its copy is inert:
// Shutdown() does nothing there and its destruction waits for no thread
// (the server keeps serving in the parent).
class NEURONPROF_API ProfilerServer {
 public:
  // Starts listening. The error names the port when it cannot be bound,
  // or the option that is out of range.
  static absl::StatusOr<std::unique_ptr<ProfilerServer>> Start(
      const ProfilerServerOptions& options);
  // Shuts the server down (ends a running capture first).
  ~ProfilerServer();

  ProfilerServer(const ProfilerServer&) = delete;
  ProfilerServer& operator=(const ProfilerServer&) = delete;

  // The port it listens on (the chosen one when options.port was 0).
  int port() const;
  // Ends a running capture, stops accepting calls and waits for the
  // running ones. Later calls do nothing.
  void Shutdown();

  class Impl;

 private:
  explicit ProfilerServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// ProfilerServer::Start with default options on `port`.
NEURONPROF_API absl::StatusOr<std::unique_ptr<ProfilerServer>> StartProfilerServer(int port);

}  // namespace neuronprof

#endif  // NEURONPROF_SERVER_H_
