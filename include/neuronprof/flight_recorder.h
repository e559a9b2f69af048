// neuronprof::FlightRecorder: a capture that never ends. Every thread's
// markers go into a ring of fixed size; once it is full the oldest blocks
// (64 KiB each) are overwritten. Dump() writes what the ring holds (or only
// the last N ms) as a normal run while recording goes on:
//
//   neuronprof::FlightRecorderOptions options;
//   options.ring_bytes = 64 << 20;
//   options.logdir = "logs";
//   neuronprof::FlightRecorder recorder(options);   // recording starts here
//   ...
//   if (step_was_slow) recorder.Dump("slow step", /*last_ms=*/5000);
//
// Cost: markers take the same inline path as under a Profiler (no lock,
// allocation or extra atomic per event; a block switch, once per ~2000
// events, does one CAS more). A dump never blocks recording threads: it
// freezes block switches for the few ms it copies the ring (a thread that
// fills its block meanwhile drops events, counted in the dump's warnings)
// and writes the files afterwards, on the calling thread.
//
// Host markers only (ScopedTrace, StepTrace, NEURONPROF_SCOPE): libtorch
// operators and device plug-ins record in Profiler windows. A
// FlightRecorder is a capture: while it lives, no Profiler or remote
// capture can start in this process, and it cannot start while one runs.
#ifndef NEURONPROF_FLIGHT_RECORDER_H_
#define NEURONPROF_FLIGHT_RECORDER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "neuronprof/export.h"
#include "neuronprof/profiler.h"

namespace neuronprof {

struct FlightRecorderOptions {
  // Memory for the ring, fixed for the recorder's life (whole 64 KiB
  // blocks, at least 4). Each event takes 32 bytes plus its copied name
  // and arguments; NEURONPROF_SCOPE literals take no name bytes.
  int64_t ring_bytes = int64_t{64} << 20;
  // Dumps go to <logdir>/plugins/profile/<run>/ as for a Profiler, <run>
  // being the dump's time and reason.
  std::string logdir = "./logs";
  // Host name used in file names; default: this machine's host name.
  std::string host_name;
  // 1 = ScopedTrace/StepTrace (kTraceCritical), 2 = info, 3 = verbose.
  int host_tracer_level = 2;
  // Also write <host>.trace.json.gz (Chrome trace event format).
  bool write_chrome_trace = true;
  // Also write <logdir>/<run>/<host>.pt.trace.json.gz (Kineto trace).
  bool write_pytorch_trace = true;
};

class NEURONPROF_API FlightRecorder {
 public:
  // Starts recording. Bad options (InvalidArgument naming the field) or
  // another capture running (FailedPrecondition naming it) leave it
  // stopped: status() and Dump() say why.
  explicit FlightRecorder(const FlightRecorderOptions& options = {});
  // Stops recording; lets the next capture start.
  ~FlightRecorder();

  FlightRecorder(const FlightRecorder&) = delete;
  FlightRecorder& operator=(const FlightRecorder&) = delete;

  // OK while recording.
  absl::Status status() const;

  // Writes the events the ring holds as a run, those that ended in the last
  // `last_ms` milliseconds when > 0 (0: everything retained). `reason` (any
  // text; made a plain name) ends the run's folder name. Events that
  // straddle the ring's cut are whole or left out, never corrupt; how many
  // were left out is in ProfileResult::warnings. Errors: the recorder's
  // status() when it is not recording; FailedPrecondition while another
  // Dump of this recorder runs; InvalidArgument for last_ms < 0; the
  // writer's error (nothing of the run left behind) when the logdir cannot
  // be written.
  absl::StatusOr<ProfileResult> Dump(std::string_view reason, int64_t last_ms = 0);

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace neuronprof

#endif  // NEURONPROF_FLIGHT_RECORDER_H_
