// What both kinds of Profiler (one time window, or a step schedule) share:
// their capture options, the port's server, and writing one capture as a
// run of the logdir.
#ifndef NEURONPROF_SRC_API_RUN_WRITER_H_
#define NEURONPROF_SRC_API_RUN_WRITER_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "neuronprof/profiler.h"
#include "src/export/logdir.h"
#include "src/session/capture_session.h"
#include "src/session/fork_guard.h"
#include "src/xplane/job_identity.h"

namespace neuronprof {

// Implemented by WindowProfiler (profiler.cc) and ScheduledProfiler
// (scheduled_profiler.h); the methods are Profiler's.
class Profiler::Impl {
 public:
  virtual ~Impl() = default;
  const session::OwnerProcess owner;  // A forked child's copy is inert.
  virtual absl::Status status() const = 0;
  virtual bool capturing() const = 0;
  virtual absl::StatusOr<ProfileResult> Stop() = 0;
  virtual absl::StatusOr<ProfileResult> Wait() = 0;
  virtual absl::Status Step() = 0;
  virtual std::vector<absl::StatusOr<ProfileResult>> Results() const = 0;
};

namespace api {

collectors::CollectorOptions ToCollectorOptions(const ProfilerOptions& options,
                                                const xplane::JobIdentity& identity);

// The job's rank identity: the options' fields, else the environment's.
absl::StatusOr<xplane::JobIdentity> ResolveIdentity(const ProfilerOptions& options);

// The port the capture server listens on: options.port, plus the local
// rank unless port_offset_by_local_rank is false. 0: no server.
int ServerPort(const ProfilerOptions& options, const xplane::JobIdentity& identity);

// Starts the process's capture server of ServerPort (0: none), which
// reports `identity` in its remote captures.
absl::Status EnsureCaptureServer(const ProfilerOptions& options,
                                 const xplane::JobIdentity& identity);

// Whether a run of `options` gets <host>.trace.json.gz: as set, else unless
// a kOperator capture gets its Kineto trace (ProfilerOptions says why).
bool WritesChromeTrace(const ProfilerOptions& options);

// Writes captures into options.logdir; thread-safe (const).
class RunWriter {
 public:
  // `server_status`: what starting the port's server gave, for warnings.
  RunWriter(const ProfilerOptions& options, xplane::JobIdentity identity,
            absl::Status server_status)
      : options_(options),
        identity_(std::move(identity)),
        server_status_(std::move(server_status)) {}

  // Writes `captured` as the run `run_name` (empty: named by its start
  // time), as the header's Profiler::Stop() says, including the fallback
  // folder when the logdir cannot be written. With `numbered`, a run_name
  // that is taken is not refused: the run becomes <run_name>_<n>, n
  // counting up from *numbered (advanced past the names found taken), so
  // that a caller naming many runs alike never runs out of names.
  absl::StatusOr<ProfileResult> Write(session::CaptureResult* captured, const std::string& run_name,
                                      uint64_t* numbered = nullptr) const;
  // Write's work for a capture whose host plane is streamed from its
  // records (session::StreamedCapture): the same files, of the same
  // meaning, without the plane ever held whole.
  absl::StatusOr<ProfileResult> WriteStreamed(session::StreamedCapture* captured,
                                              const std::string& run_name,
                                              uint64_t* numbered = nullptr) const;
  // Write's work, for an XSpace that lives elsewhere (a flight recorder's
  // arena): `space` gets the host name and job identity added. With
  // `streamed`, the xplane.pb also holds that plane (ExportOptions::
  // streamed_plane), which counts its events into `stats` as it is written,
  // and the traces read it from `fragments`.
  absl::StatusOr<ProfileResult> WriteSpace(tensorflow::profiler::XSpace* space,
                                           const collectors::CollectStats& stats,
                                           int64_t start_epoch_ns, int64_t stop_epoch_ns,
                                           const std::string& run_name,
                                           uint64_t* numbered = nullptr,
                                           const exporter::StreamedPlane& streamed = {},
                                           const exporter::PlaneFragments& fragments = {}) const;

  // Runs options.on_trace_ready (if any) on `result`; an exception it
  // throws becomes a warning of the result.
  void NotifyTraceReady(ProfileResult* result) const;

 private:
  // The run folder for `run_name` (empty: named by the start time); a rank
  // of a distributed job with a run_name joins the folder its peers made.
  absl::StatusOr<exporter::RunDirectory> OpenRunDirectory(const std::string& run_name,
                                                          int64_t start_epoch_ns,
                                                          const std::string& host) const;
  // OpenRunDirectory of run_name, else of run_name_<*numbered++> while
  // those are taken (numbered: nullptr for the first only).
  absl::StatusOr<exporter::RunDirectory> OpenFreeRunDirectory(const std::string& run_name,
                                                              int64_t start_epoch_ns,
                                                              const std::string& host,
                                                              uint64_t* numbered) const;
  absl::Status WriteRun(const tensorflow::profiler::XSpace& space, const std::string& run_dir,
                        const std::string& host, const exporter::StreamedPlane& streamed,
                        const exporter::PlaneFragments& fragments,
                        std::vector<std::string>* files) const;

  const ProfilerOptions& options_;  // Owned by the Profiler, outlives this.
  const xplane::JobIdentity identity_;
  const absl::Status server_status_;
};

}  // namespace api
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_API_RUN_WRITER_H_
