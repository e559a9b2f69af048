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
// or let the recorder dump by itself when a step is slow:
//
//   recorder.TriggerOnSlowStep("request", /*threshold_ms=*/200,
//                              /*cooldown_ms=*/60000);
//
// Cost: markers take the same inline path as under a Profiler (no lock,
// allocation or extra atomic per event; a block switch, once per ~2000
// events, does one CAS more). A dump never blocks recording threads: it
// freezes block switches while it copies the ring (a thread that fills its
// 64 KiB block meanwhile drops its events until the freeze ends, counted in
// the dump's warnings and ProfileResult::dropped_events, which count since
// each thread began) and writes the files afterwards, on the calling
// thread. Its memory: the copy, at most ring_bytes (one mapping: for
// last_ms 0 the records' part committed before the freeze, the names
// faulted in as copied, a name that repeats a recent one's bytes copied
// once; the untouched middle given back after the freeze), unmapped when
// Dump returns. No XSpace is built: the host plane is streamed into the
// .xplane.pb 512 events at a time, each thread's markers sorted in the
// copy, and the Chrome and Kineto files (write_chrome_trace,
// write_pytorch_trace) come from fragments of it built again, 8K events at
// a time. What a dump costs in time, drops and memory, measured:
// docs/PERFORMANCE.md ("flight-recorder dump" rows, and "Flight recorder
// and the capture server").
//
// Remote clients pull the last seconds through the capture server: see
// FlightRecorderOptions::port.
//
// Host markers only (ScopedTrace, StepTrace, NEURONPROF_SCOPE): libtorch
// operators and device plug-ins record in Profiler windows. A
// FlightRecorder is a capture: while it lives, no Profiler or remote
// capture can start in this process, and it cannot start while one runs.
#ifndef NEURONPROF_FLIGHT_RECORDER_H_
#define NEURONPROF_FLIGHT_RECORDER_H_

#include <cstdint>
#include <functional>
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
  // blocks, at least 4) and committed by the constructor (a one-time cost
  // that grows with the ring: docs/PERFORMANCE.md), so that recording never
  // takes a page fault. Each
  // event takes 32 bytes plus its copied name and arguments;
  // NEURONPROF_SCOPE literals take no name bytes.
  int64_t ring_bytes = int64_t{64} << 20;
  // Dumps go to <logdir>/plugins/profile/<run>/ as for a Profiler, <run>
  // being the dump's time and reason, with _<n> (a counter of this
  // recorder) when that name is taken: never an earlier run's folder.
  std::string logdir = "./logs";
  // Host name used in file names; default: this machine's host name. In a
  // distributed job (RANK, LOCAL_RANK, WORLD_SIZE set, as for
  // ProfilerOptions) dumps are named <host>_rank<r> and carry the rank.
  std::string host_name;
  // 1 = ScopedTrace/StepTrace (kTraceCritical), 2 = info, 3 = verbose.
  int host_tracer_level = 2;
  // Also write <host>.trace.json.gz (Chrome trace event format). Off by
  // default, as is write_pytorch_trace: a dump happens inside a live
  // process, and with the .xplane.pb alone its memory stays within the
  // ring (see above). TensorBoard/xprof and `neuronprof summary` read the
  // .xplane.pb; `neuronprof convert RUN_DIR` (Chrome) or
  // `--format kineto` (PyTorch plugin, HTA, Perfetto) writes the others
  // later, outside the process.
  bool write_chrome_trace = false;
  // Also write <logdir>/<run>/<host>.pt.trace.json.gz (Kineto trace).
  bool write_pytorch_trace = false;
  // Also serve remote captures (tensorflow.ProfilerService, as
  // ProfilerOptions::port) on this port; 0: no server. Such a process
  // answers every Profile request from the ring: a plain request (e.g.
  // TensorBoard's Capture Profile) gets its window once the window has
  // passed; one with ProfileOptions.advanced_configuration
  // {"neuronprof_flight_recorder": true} (`neuronprof capture
  // --flight_recorder`) gets the last duration_ms at once. The server
  // lives until the process ends; if the port cannot be bound, every
  // dump's warnings say why. As for a Profiler, a rank listens on
  // port + LOCAL_RANK.
  int port = 0;
  // A signal that makes the recorder dump, e.g. SIGUSR2 for
  // `kill -USR2 <pid>`: SIGHUP, SIGUSR1, SIGUSR2 or a real-time signal;
  // 0: none. The recorder installs its handler for its life (and puts the
  // previous one back after); the handler only wakes a thread the
  // recorder owns, which dumps everything retained into a run named
  // <time>_signal_<SIGNAME>. Signals that arrive during a dump make one
  // more dump.
  int dump_signal = 0;
  // Called on that thread with each signalled dump's result (its run, or
  // why it failed). Optional; must not destroy the FlightRecorder.
  std::function<void(const absl::StatusOr<ProfileResult>&)> on_signal_dump;
};

// A slow-step trigger: see FlightRecorder::TriggerOnSlowStep.
struct SlowStepTrigger {
  // The name of the StepTraces to watch (exact match, arguments aside).
  std::string step_name;
  // A step longer than this (> 0) triggers a dump.
  int64_t threshold_ms = 0;
  // After a triggered dump, slow steps of this name trigger nothing for
  // this long (>= 0; 0: every slow step may dump).
  int64_t cooldown_ms = 60000;
  // The dump's window, as Dump's last_ms (0: everything retained).
  int64_t last_ms = 0;
  // Called on the recorder's trigger thread with each triggered dump's
  // result (its run, or why it failed). Optional; must not destroy the
  // FlightRecorder.
  std::function<void(const absl::StatusOr<ProfileResult>&)> on_dump;
};

// Thread-safety: FlightRecorder is thread-safe: Dump, TriggerOnSlowStep and
// status() may be called from any threads at once (a Dump while another of
// this recorder runs is refused, FailedPrecondition); only destroying it
// must not race a call, and on_dump must not destroy it. In a child forked
// while it lives, its copy is inert as a Profiler's is (profiler.h).
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

  // Dumps by itself when a StepTrace named `step_name` lasts longer than
  // `threshold_ms`, at most once per `cooldown_ms` per name. The dump runs
  // on a background thread the recorder owns (the slow step's thread never
  // waits for it); its run folder is named slow_<step_name>_<ms>ms, its
  // warnings name the step, its number, duration and threshold, and an
  // event "slow_step_trigger" on the thread "neuronprof_trigger" spans the
  // slow step exactly.
  // A slow step that comes while the previous one of its name is still
  // waiting for its dump is counted in the next dump's warning, not dumped.
  // Calling it again for a name replaces that name's settings. Up to 16
  // names. Errors: status() when not recording; InvalidArgument for an
  // empty name, threshold_ms <= 0, cooldown_ms < 0 or last_ms < 0;
  // ResourceExhausted past 16 names.
  //
  // Cost: StepTraces only (not ScopedTrace). With no trigger armed a
  // StepTrace pays one relaxed load in its (out-of-line) constructor and a
  // branch at its end. Once one is armed every StepTrace compares its name
  // with the watched names at its start, out of line, and a watched step
  // reads the clock once more at its end; see docs/PERFORMANCE.md.
  absl::Status TriggerOnSlowStep(std::string_view step_name, int64_t threshold_ms,
                                 int64_t cooldown_ms);
  absl::Status TriggerOnSlowStep(const SlowStepTrigger& trigger);

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace neuronprof

#endif  // NEURONPROF_FLIGHT_RECORDER_H_
