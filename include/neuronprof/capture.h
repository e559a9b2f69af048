// neuronprof::Capture: the remote capture client, the C++ twin of
// TensorBoard's "Capture Profile" button, torch_xla's xp.trace(...) and
// TSL's capture_profile. It asks one or more tensorflow.ProfilerService
// servers (neuronprof's ProfilerServer, or TSL-based ones such as JAX and
// TensorFlow) for one capture window each, in parallel, and writes every
// host's profile into one TensorBoard run folder:
//
//   neuronprof::CaptureOptions options;
//   options.service_addresses = {"worker0:9012", "worker1:9012"};
//   options.logdir = "logs";
//   options.duration_ms = 3000;
//   auto result = neuronprof::Capture(options);
//   // result->run_dir = logs/plugins/profile/<run>/ holding
//   //   <host>.xplane.pb per host that succeeded, and logs/<run>/ their
//   //   <host>.pt.trace.json.gz (CaptureOptions says which viewer reads
//   //   which); result->hosts[i].status tells why a host failed.
#ifndef NEURONPROF_CAPTURE_H_
#define NEURONPROF_CAPTURE_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "neuronprof/export.h"

namespace neuronprof {

// Where one host's time went in its last capture window, in milliseconds
// (steady clock of the capturing process); for progress and tuning.
struct HostCaptureTimings {
  int64_t window_ms = 0;  // The window: request sent until duration_ms passed.
  // Window over until the response began to arrive: the server stopping
  // its collectors, building and serializing the profile.
  int64_t server_ms = 0;
  // Of server_ms, what a neuronprof server reports for stopping and
  // collecting (0 from other servers); the rest is gRPC serializing it.
  int64_t server_collect_ms = 0;
  int64_t receive_ms = 0;  // First to last byte of the response.
  // Response received until <host>.xplane.pb was written, and until every
  // file of the host was.
  int64_t xplane_written_ms = 0;
  int64_t write_ms = 0;
  int64_t response_bytes = 0;  // Size of the Profile response.
};

// What one host's capture produced.
struct HostCaptureResult {
  std::string address;  // "host:port", as given (without a gRPC URL scheme)
  // File name prefix in the run folder: the server's host name when it
  // reports a plain one, else derived from the address; unique per run.
  std::string host;
  absl::Status status;             // OK, or why this host has no profile.
  std::vector<std::string> files;  // Written for this host.
  int64_t events = 0;              // Events on all planes of its profile.
  int attempts = 0;                // Capture windows asked for (empties retried).
  // One entry per empty attempt: why it had no events, as far as known.
  std::vector<std::string> empty_reasons;
  // Warnings the server stored in the profile (e.g. dropped events).
  std::vector<std::string> warnings;
  HostCaptureTimings timings;
  // The host's clock against the capture client's (CLOCK_REALTIME), from
  // round trips before the window, as NTP measures it: neuronprof servers
  // answer the probe; for others clock_offset_measured is false and their
  // times stay on their own clock. When measured, every time in the
  // host's files had clock_offset_ns (host minus client) subtracted, so
  // that all hosts of the run share the client's clock; the true offset
  // lies within +-clock_offset_uncertainty_ns (half the shortest round
  // trip). The same is stored in the profile's Task Environment plane
  // (docs/DISTRIBUTED.md).
  bool clock_offset_measured = false;
  int64_t clock_offset_ns = 0;
  int64_t clock_offset_uncertainty_ns = 0;
};

struct NEURONPROF_API CaptureResult {
  std::string run_dir;                   // <logdir>/plugins/profile/<run>
  std::vector<HostCaptureResult> hosts;  // In service_addresses order.
  // True when every host has a profile.
  bool all_ok() const;
};

// The stage one host is in, for progress reports; a host goes through them
// in this order (again from kWindow for each retried empty window) and ends
// in kSucceeded or kFailed.
enum class HostCaptureState {
  kConnecting,
  kWindow,            // The capture window runs (window_elapsed_ms).
  kServerCollecting,  // The window is over; the server builds its response.
  kReceiving,         // The response is arriving (response_bytes when known).
  kWriting,           // The host's files are being written.
  kSucceeded,
  kFailed,
};

// The stage's name as progress shows it: "connecting", "window", "server
// collecting", "receiving", "writing", "done" or "failed".
NEURONPROF_API const char* HostCaptureStateName(HostCaptureState state);

struct HostProgress {
  std::string address;
  HostCaptureState state = HostCaptureState::kConnecting;
  int attempt = 0;                // 1-based window number; 0 before the first.
  int64_t window_elapsed_ms = 0;  // Time into the current window (kWindow).
  // In kReceiving: the response's size as its server announced it
  // (neuronprof servers do; 0 when unknown). gRPC does not tell a unary
  // call's bytes in flight.
  int64_t response_bytes = 0;
};

struct CaptureProgress {
  int64_t duration_ms = 0;          // Length of one window.
  int64_t elapsed_ms = 0;           // Since Capture() started.
  std::vector<HostProgress> hosts;  // In service_addresses order.
  // Set when this report announces that a host finished (its files are
  // written); empty for the periodic reports.
  std::optional<HostCaptureResult> finished;
};

// Limits of CaptureOptions, as ValidateCaptureOptions checks them.
inline constexpr int64_t kMaxCaptureDurationMs = 3600 * 1000;  // One hour.
inline constexpr int kMaxTracingAttempts = 1000;
inline constexpr int kMaxConnectAttempts = 100;
inline constexpr int kMaxParallelHosts = 100000;

// (The struct's own copies of its deprecated field warn no one: only a
// user's use of it does.)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
struct CaptureOptions {
  // "host:port" (IPv6: "[addr]:port") of each ProfilerService; an optional
  // gRPC URL scheme prefix, as TensorBoard writes addresses, is ignored.
  // "host:9012-9015" is a port range, one server per port (at most 1024;
  // the ranks of a host listen on ProfilerOptions::port + local_rank), and
  // stands for "host:9012", ..., "host:9015" in that order (results list
  // them so). Every host is captured at the same time. Its files are named
  // after the server's host name, with "_rank<r>" for a rank of a
  // distributed job (world_size > 1), else <host>_<port>; an address whose
  // longest file name (<host>_<port>.pt.trace.json.gz, .trace.json.gz or
  // .xplane.pb, as the files written below) would pass the file system's
  // 255-byte NAME_MAX is refused before any capture starts, and a server
  // name too long for its files gives way to <host>_<port>.
  std::vector<std::string> service_addresses;
  // TensorBoard logdir; profiles go to <logdir>/plugins/profile/<run>/.
  std::string logdir = "./logs";
  // Capture window in milliseconds, 1 .. kMaxCaptureDurationMs.
  int64_t duration_ms = 2000;
  // A host whose capture holds no events is asked again, up to this many
  // windows in all (1 .. kMaxTracingAttempts).
  int num_tracing_attempts = 3;
  // 0 = no host markers, 1 = user markers, 2 = info, 3 = verbose.
  int host_tracer_level = 2;
  // 0 = off, 1 = on, 2 = verbose (for servers with device tracers).
  int device_tracer_level = 1;
  // 0 = off, 1 = Python function calls (TSL-based Python servers only).
  int python_tracer_level = 0;
  // Run folder name (a plain name); default: the start time,
  // YYYY_MM_DD_HH_MM_SS, made unique with a suffix when taken.
  std::string run_name;
  // The files written per host, by the viewer that reads each:
  // <host>.xplane.pb (xprof, TensorBoard, `neuronprof summary` and
  // `convert`) always, and these.
  //
  // <logdir>/<run>/<host>.pt.trace.json.gz (Kineto format), one per host
  // (rank), as a Profiler writes its own by default
  // (ProfilerOptions::write_pytorch_trace): the PyTorch profiler TensorBoard
  // plugin and HTA read the run as one multi-rank job, and Perfetto and
  // chrome://tracing open it (the same trace event format, with the
  // markers, steps, counters, flows, async spans and instants).
  bool write_pytorch_trace = true;
  // Deprecated: the old name of write_pytorch_trace, kept for one release
  // (CHANGELOG.md). When set, it is used instead of write_pytorch_trace.
  [[deprecated("use CaptureOptions::write_pytorch_trace")]] std::optional<bool> write_kineto_trace;
  // <host>.trace.json.gz (Chrome trace event format) next to each
  // xplane.pb, for Perfetto and chrome://tracing. Unset (the default):
  // written only without the Kineto trace, which those open as well, so
  // that a capture is not written as JSON twice (for 1M host markers the
  // Chrome trace adds a fifth to the client's writing). `neuronprof
  // convert` writes it from the xplane.pb later.
  std::optional<bool> write_chrome_trace;
  // Ask each server for what its FlightRecorder holds of the last
  // duration_ms, returned at once, instead of a window from now (the
  // request's ProfileOptions.advanced_configuration
  // {"neuronprof_flight_recorder": true}). A neuronprof server without a
  // FlightRecorder fails that host with FAILED_PRECONDITION; servers that
  // do not know the key capture a window as usual.
  bool flight_recorder_now = false;
  // A host whose connection is not up within this time fails with
  // "cannot connect to ADDR"; a refused connection fails at once.
  int64_t connect_timeout_ms = 10000;
  // Connections that fail (refused, unreachable, not up in time) are tried
  // this many times in all (1 .. kMaxConnectAttempts), waiting 250 ms,
  // 500 ms, 1 s, ... (at most 5 s) in between: a server still starting or a
  // dropped SYN among a thousand hosts. Only before a window opens: a
  // failure after it cannot be retried into the same window.
  int connect_attempts = 3;
  // A host whose response has not fully arrived this long after its window
  // ended fails with DEADLINE_EXCEEDED (1 .. kMaxCaptureDurationMs): the
  // server's collection and the transfer of its profile.
  int64_t response_timeout_ms = 60000;
  // Every host's window opens at once, whatever the number of hosts (the
  // windows must cover the same time); this bounds how many hosts at a
  // time read, align and write their received profile (1 ..
  // kMaxParallelHosts): the client's CPU, memory and disk bandwidth. A
  // response that arrives while all slots are busy waits in memory.
  int max_parallel_hosts = 64;
  // Optional. Called from the calling thread about every 250 ms until every
  // host is done, at once when a host changes stage, and once per host when
  // it finishes.
  std::function<void(const CaptureProgress&)> on_progress;
};
#pragma GCC diagnostic pop

// Checks options without connecting to anything. InvalidArgument names the
// field. Thread-safety: any thread (it reads only `options`).
NEURONPROF_API absl::Status ValidateCaptureOptions(const CaptureOptions& options);

// Captures every host in parallel and writes their profiles into one run
// folder. OK when at least one host succeeded (result->hosts says which
// failed and why); an error listing every host's failure when none did
// (the run folder is then removed; on_progress's `finished` reports still
// carry each host's details), or InvalidArgument for bad options.
// Thread-safety: calls on several threads at once are independent (each has
// its own channels and threads; give them different run folders); a server
// still runs one capture at a time and refuses the others.
NEURONPROF_API absl::StatusOr<CaptureResult> Capture(const CaptureOptions& options);

}  // namespace neuronprof

#endif  // NEURONPROF_CAPTURE_H_
