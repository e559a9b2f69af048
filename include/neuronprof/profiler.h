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
//
// Step schedules (torch.profiler.schedule): with ProfilerOptions::schedule
// set, the Profiler starts idle and Step(), called at the end of every
// training step, moves it through skip_first, then cycles of wait, warmup
// and active steps. Each cycle's active steps become one run, written off
// the training thread:
//
//   options.schedule = neuronprof::ProfilerSchedule{/*wait=*/1, /*warmup=*/1,
//                                                   /*active=*/3, /*repeat=*/2};
//   options.on_trace_ready = [](const neuronprof::ProfileResult& r) { ... };
//   neuronprof::Profiler profiler(options);
//   for (...) { neuronprof::StepTrace s("train", n); ...; profiler.Step(); }
#ifndef NEURONPROF_PROFILER_H_
#define NEURONPROF_PROFILER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "neuronprof/export.h"

namespace neuronprof {

enum class ProfileType {
  kTrace,     // Markers and runtime activity ("trace" in torch-neuronx).
  kOperator,  // Plus framework operators ("operator"): link neuronprof::torch
              // and call EnableTorchOperators() (neuronprof/torch.h).
};

struct ProfileResult {
  std::string run_dir;                // <logdir>/plugins/profile/<run>
  std::vector<std::string> files;     // Every file written.
  int64_t events = 0;                 // Events recorded on all planes.
  int64_t threads = 0;                // Host threads with events.
  int64_t dropped_events = 0;         // Lost to a full buffer.
  int64_t duration_ns = 0;            // Length of the capture window.
  int server_port = 0;                // Capture server's port; 0 = none.
  std::vector<std::string> warnings;  // Also stored in the XSpace.
  // With a schedule: the cycle this run holds (1 = the first) and how many
  // active steps it recorded (fewer than schedule->active when Stop() or
  // the destructor ended the cycle early). 0 without a schedule.
  int64_t cycle = 0;
  int64_t steps = 0;
};

// torch.profiler.schedule(wait, warmup, active, repeat, skip_first), field
// for field and in that order, so ProfilerSchedule{1, 1, 3, 2} reads as
// torch's schedule(wait=1, warmup=1, active=3, repeat=2). Steps are counted
// by Profiler::Step() from 0 (the Profiler's construction starts step 0):
// the first skip_first steps record nothing, then each cycle is `wait`
// steps that record nothing, `warmup` steps that record and are discarded
// (so the first active step does not pay first-touch costs: buffers,
// threads' first events, libtorch's callbacks), then `active` steps that
// are recorded and written as one run. `repeat` cycles, or with 0 until the
// Profiler stops. All >= 0, active > 0.
struct ProfilerSchedule {
  int64_t wait = 0;
  int64_t warmup = 0;
  int64_t active = 1;
  int64_t repeat = 0;
  int64_t skip_first = 0;
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
  // In a distributed job the server listens on port + local_rank (see
  // port_offset_by_local_rank), so that every rank of a host has its own
  // and `neuronprof capture --service_addr host:9012-9015` reaches them all;
  // ProfileResult::server_port says which.
  int port = 9012;
  // Adds local_rank to port (the default); false: every rank asks for
  // `port` itself, and only the first on a host gets it.
  bool port_offset_by_local_rank = true;
  // Rank identity of a distributed job (torch.distributed's): each field
  // when set, else from the variables torch launchers (torchrun,
  // torch.distributed.launch) set, RANK, LOCAL_RANK and WORLD_SIZE; unset
  // and absent means a single process, rank 0 of world size 1. rank and
  // local_rank must be below world_size; a bad value, set here or in the
  // environment, is InvalidArgument naming the field or the variable.
  // MASTER_ADDR and MASTER_PORT are recorded when set. Every output says
  // which rank wrote it: the XSpace (stats rank, local_rank, world_size,
  // backend on its "Task Environment" plane), the Kineto trace's
  // distributedInfo, and the remote captures of the port's server. With
  // world_size > 1 the file names are <host>_rank<r>.* (<host> being
  // host_name or this machine's name), so that ranks sharing a host and a
  // logdir never overwrite each other.
  std::optional<int> rank;
  std::optional<int> local_rank;
  std::optional<int> world_size;
  // The communication backend, e.g. "gloo" or "nccl" (a plain name);
  // optional, written as distributedInfo.backend.
  std::string backend;
  ProfileType profile_type = ProfileType::kTrace;
  // Capture window in milliseconds, 1 .. max_ms_duration. The window also
  // ends at Stop() or destruction. Not used with a schedule (steps, not
  // time, end its phases), but still checked. A window that ends by itself
  // while the program runs on (no WaitForCompletion()) says so in the run's
  // warnings, and Stop()'s result counts the StepTraces and Step() calls
  // begun after it ("ms_duration=50 ended the window at 50 ms; 16 more
  // steps ran after it: raise ProfilerOptions::ms_duration").
  int64_t ms_duration = 60000;
  int64_t max_ms_duration = 3600 * 1000;
  // TensorBoard logdir; profiles go under <logdir>/plugins/profile/<run>/.
  std::string logdir = "./logs";
  // Run folder name; default: the capture start time, YYYY_MM_DD_HH_MM_SS
  // (local time, with a _<ms> suffix when needed to stay unique). A plain
  // name: letters, digits, '.', '-', '_'. With a schedule, each cycle is
  // its own run: <run_name>_cycle_0001, _cycle_0002, ... (zero-padded so
  // they sort), or without run_name the start time of its active phase.
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
  // The files written, by the viewer that reads each. <host>.xplane.pb
  // (xprof, TensorBoard, `neuronprof summary` and `convert`) always.
  //
  // Also write <host>.trace.json.gz (Chrome trace event format, for
  // Perfetto and chrome://tracing). Unset (the default): written unless the
  // Kineto trace below is written for a kOperator capture, which Perfetto
  // and chrome://tracing open as well (it is the same event format), so a
  // libtorch capture is not written as JSON twice (about a third of
  // Stop()'s time). `neuronprof convert` writes it from the xplane.pb later.
  std::optional<bool> write_chrome_trace;
  // Also write <logdir>/<run>/<host>.pt.trace.json.gz: the Kineto trace that
  // torch.profiler writes, for the PyTorch Profiler TensorBoard plugin
  // (torch-tb-profiler, which lists <run> as a run) and HTA. Operators,
  // ProfilerStep#N steps, runtime calls and kernels are linked as there.
  bool write_pytorch_trace = true;
  // Records by step instead of by time; see ProfilerSchedule and Step().
  std::optional<ProfilerSchedule> schedule;
  // Runs after each run's files are written (every cycle of a schedule;
  // once without one), on a thread the Profiler owns, never the one calling
  // Step() or Stop(); one call at a time, cycles in order. It must not call
  // Stop() or destroy the Profiler; what it throws is caught and added to
  // that run's warnings in cycle_results().
  std::function<void(const ProfileResult&)> on_trace_ready;
};

// Checks options without starting anything. InvalidArgument names the field.
// Thread-safety: any thread (it reads only `options` and the environment).
NEURONPROF_API absl::Status ValidateOptions(const ProfilerOptions& options);

// Thread-safety: Profiler is thread-safe: its methods lock a mutex of its own
// and may be called from any threads at once (Stop() from two threads: both
// wait for the one write and return the same result); only destroying it
// must not race a call, and on_trace_ready must not call Stop().
//
// fork(): a child forked while a Profiler lives gets an inert copy of it.
// The threads it owns are not forked, so in the child its methods return
// FailedPrecondition (saying so), capturing() is false, and its
// destruction leaves it alone; markers in the child record nothing. The
// parent's capture goes on unchanged. A child cannot start a capture of
// its own while the copied one is held.
class NEURONPROF_API Profiler {
 public:
  // Starts a capture window. If the options are bad or another capture is
  // running, nothing is captured and status() / Stop() report why.
  explicit Profiler(const ProfilerOptions& options = {});
  // Ends the capture (if still running) and writes the logdir; returns once
  // the memory of the capture's data is handed back.
  ~Profiler();

  Profiler(const Profiler&) = delete;
  Profiler& operator=(const Profiler&) = delete;

  // OK while capturing or after a successful capture.
  absl::Status status() const;
  // True from construction until the window ends; with a schedule, while a
  // warmup or active phase records.
  bool capturing() const;
  // Ends the window now (if ms_duration has not ended it already), writes
  // the logdir and returns what was written. Later calls return the same
  // result. If the logdir cannot be written, what was made there for this
  // run is removed and the error names a fallback directory that holds the
  // capture (a fresh $TMPDIR/neuronprof-unsaved-<run>-XXXXXX, mkdtemp).
  // Returns once the files are written: the memory that held the capture's
  // data (hundreds of MB for a million operators) may go back to the system
  // after that, on a thread of its own; all of it has by the time the
  // Profiler is destroyed.
  absl::StatusOr<ProfileResult> Stop();
  // Blocks until the window ends by itself (ms_duration), then as Stop().
  // With a schedule there is no time window: the same as Stop().
  absl::StatusOr<ProfileResult> WaitForCompletion();

  // Marks the end of a training step (torch's prof.step()) and moves the
  // schedule on: starts recording when a warmup or active phase begins and,
  // after a cycle's last active step, stops it and hands it to the writer
  // thread (Step() does not wait for files; only stopping the recorders and
  // collecting the capture happen here). The next cycle may start while
  // earlier ones are still being written. Errors: a cycle that cannot start
  // (another capture holds the process's one capture, or a collector fails)
  // is skipped and its Step() says why; FailedPrecondition after Stop().
  // Without a schedule Step() does nothing and returns OK, as torch's
  // prof.step() does, so a loop may call it either way.
  absl::Status Step();
  // With a schedule: the result of every cycle written so far, in order
  // (after Stop(), every cycle). Stop() returns the last; it is an error
  // (FailedPrecondition) when no active step was reached. A Stop() or
  // destruction inside an active phase writes the steps recorded so far as
  // the last cycle; inside a warmup phase it discards the warmup, as torch
  // does. status() is the first error of a cycle (refused start, failed
  // write), else OK. Without a schedule: the one result, once written.
  std::vector<absl::StatusOr<ProfileResult>> cycle_results() const;

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace neuronprof

#endif  // NEURONPROF_PROFILER_H_
