// neuronprof capture sessions: the C++ twin of
// torch_neuronx.experimental.profiler.profile(...).
//
//   neuronprof::ProfilerOptions options;
//   options.logdir = "logs";
//   options.ms_duration = 15000;
//   neuronprof::Profiler profiler(options);   // capture starts here
//   ... run steps ...
//   absl::StatusOr<neuronprof::ProfileResult> result = profiler.Stop();
//
// A Profiler captures every marker (and every registered collector) from
// construction until ms_duration elapses, Stop() is called or the object is
// destroyed, whichever comes first, then writes a TensorBoard logdir:
//   <logdir>/plugins/profile/<run>/<host>.xplane.pb      (xprof, TensorBoard)
//   <logdir>/plugins/profile/<run>/<host>.trace.json.gz  (Perfetto, chrome://tracing)
//   <logdir>/<run>/<host>.pt.trace.json.gz                (PyTorch TensorBoard plugin, HTA)
// Only one capture runs per process at a time.
#ifndef NEURONPROF_PROFILER_H_
#define NEURONPROF_PROFILER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "neuronprof/export.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace neuronprof {

enum class ProfileType {
  kTrace,     // Markers and runtime activity ("trace" in torch-neuronx).
  kOperator,  // Plus framework operators ("operator"): link neuronprof::torch
              // and call EnableTorchOperators() (neuronprof/torch.h).
};

struct ProfilerOptions {
  // Port of the tensorflow.ProfilerService gRPC server that remote capture
  // clients (TensorBoard's Capture Profile, `neuronprof capture`, xp.trace)
  // use. The first Profiler with a given port starts it on 127.0.0.1; it
  // then serves for the rest of the process and saves remote captures only
  // under this Profiler's logdir, recording remote windows into this
  // Profiler's max_buffer_bytes. A port held by another program does not
  // stop the capture: ProfileResult::warnings says so. 0 = no server.
  // For other interfaces or settings, see neuronprof/server.h.
  int port = 9012;
  ProfileType profile_type = ProfileType::kTrace;
  // Capture window in milliseconds, 1 .. max_ms_duration. The window also
  // ends at Stop() or destruction.
  int64_t ms_duration = 60000;
  int64_t max_ms_duration = 3600 * 1000;
  // TensorBoard logdir; profiles go under <logdir>/plugins/profile/<run>/.
  std::string logdir = "./logs";
  // Run folder name; default: the capture start time, YYYY_MM_DD_HH_MM_SS
  // (local time, with a _<ms> suffix when needed to stay unique). A plain
  // name: letters, digits, '.', '-', '_'.
  std::string run_name;
  // Host name used in file names; default: this machine's host name.
  std::string host_name;
  // The raw capture (xplane.pb) is serialized once, into
  // <logdir>/.neuronprof_working/<run>/, and moved into the run folder once
  // every output file is written (true), or hard-linked there and kept
  // (false; a copy where the two are on different filesystems).
  bool delete_working = true;
  // 0 = no host markers, 1 = ScopedTrace/StepTrace (kTraceCritical),
  // 2 = info, 3 = verbose. Markers above this level are not recorded.
  int host_tracer_level = 2;
  // 0 = no device activity: registered device plug-ins (neuronprof/device.h)
  // and the CUPTI collector (neuronprof/cupti.h) are not created for this
  // capture. 1 = they run. 2 is accepted as in CaptureOptions (remote
  // captures' "verbose") and records the same as 1. Range 0..2.
  int device_tracer_level = 1;
  // Memory for recorded events (32 bytes each) and copied names. When it is
  // full, further events are dropped and counted, never blocking.
  int64_t max_buffer_bytes = int64_t{256} << 20;
  // Also write <host>.trace.json.gz (Chrome trace event format).
  bool write_chrome_trace = true;
  // Also write <logdir>/<run>/<host>.pt.trace.json.gz: the Kineto trace that
  // torch.profiler writes, for the PyTorch Profiler TensorBoard plugin
  // (torch-tb-profiler, which lists <run> as a run) and HTA. Operators,
  // ProfilerStep#N steps, runtime calls and kernels are linked as there.
  bool write_pytorch_trace = true;
};

// Checks options without starting anything. InvalidArgument names the field.
NEURONPROF_API absl::Status ValidateOptions(const ProfilerOptions& options);

struct ProfileResult {
  std::string run_dir;                 // <logdir>/plugins/profile/<run>
  std::vector<std::string> files;      // Every file written.
  int64_t events = 0;                  // Events recorded on all planes.
  int64_t threads = 0;                 // Host threads with events.
  int64_t dropped_events = 0;          // Lost to a full buffer.
  int64_t duration_ns = 0;             // Length of the capture window.
  int server_port = 0;                 // Capture server's port; 0 = none.
  std::vector<std::string> warnings;   // Also stored in the XSpace.
};

class NEURONPROF_API Profiler {
 public:
  // Starts a capture window. If the options are bad or another capture is
  // running, nothing is captured and status() / Stop() report why.
  explicit Profiler(const ProfilerOptions& options = {});
  // Ends the capture (if still running) and writes the logdir.
  ~Profiler();

  Profiler(const Profiler&) = delete;
  Profiler& operator=(const Profiler&) = delete;

  // OK while capturing or after a successful capture.
  absl::Status status() const;
  // True from construction until the window ends.
  bool capturing() const;
  // Ends the window now (if ms_duration has not ended it already), writes
  // the logdir and returns what was written. Later calls return the same
  // result. If the logdir cannot be written, what was made there for this
  // run is removed and the error names a fallback directory that holds the
  // capture (a fresh $TMPDIR/neuronprof-unsaved-<run>-XXXXXX, mkdtemp).
  absl::StatusOr<ProfileResult> Stop();
  // Blocks until the window ends by itself (ms_duration), then as Stop().
  absl::StatusOr<ProfileResult> WaitForCompletion();

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace neuronprof

#endif  // NEURONPROF_PROFILER_H_
