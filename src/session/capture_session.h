// One capture window over every collector: the host recorder plus whatever
// collectors are registered. Only one window runs per process at a time;
// the Profiler and the profiler gRPC server both go through this.
#ifndef NEURONPROF_SRC_SESSION_CAPTURE_SESSION_H_
#define NEURONPROF_SRC_SESSION_CAPTURE_SESSION_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "google/protobuf/arena.h"
#include "proto/xplane.pb.h"
#include "src/collectors/collector.h"
#include "src/core/recorder.h"
#include "src/session/capture_gate.h"
#include "src/xplane/plane_sink.h"

namespace neuronprof {
namespace session {

// Where a capture's XSpace lives. On an arena (the default) its million
// events and stats take a few large blocks instead of one allocation each,
// and are freed at once. kHeap: for a caller that moves the XSpace into
// a message that is not on that arena (else a copy).
enum class SpaceStorage { kArena, kHeap };

struct CaptureResult {
  explicit CaptureResult(SpaceStorage storage = SpaceStorage::kArena);
  CaptureResult(CaptureResult&&) = default;  // `space` stays where it is.

  std::unique_ptr<google::protobuf::Arena> arena;         // kArena: holds `space`
  std::unique_ptr<tensorflow::profiler::XSpace> on_heap;  // kHeap: `space`
  tensorflow::profiler::XSpace& space;
  collectors::CollectStats stats;
  int64_t start_epoch_ns = 0;
  int64_t stop_epoch_ns = 0;
};

// A capture whose host plane is written while it is built, never held
// whole (a flight dump's, a host-markers-only window's): `result` holds
// the rest of the XSpace (profile times, warnings), `records` the host
// recorder's records, read in place by each pass.
struct StreamedCapture {
  StreamedCapture() : result(SpaceStorage::kHeap) {}
  // The host plane, after result.space's planes, into `sink` (the
  // xplane.pb); its events and threads counted into result.stats. May run
  // more than once (a write that failed, then the fallback folder's).
  absl::Status WriteHostPlane(xplane::XPlaneSink* sink);
  // The same plane again, cut into fragments of kFragmentEvents events for
  // the trace writers (collectors::FragmentHostPlane); after
  // WriteHostPlane, whose plane metadata it hands on (FailedPrecondition
  // before).
  absl::Status WriteHostFragments(tensorflow::profiler::XPlane* fragment,
                                  const std::function<absl::Status()>& ready) const;
  static constexpr int kFragmentEvents = 8 * 1024;

  CaptureResult result;
  core::RecordedCapture records;
  // WriteHostPlane's plane but its lines; `built` once it has run whole.
  tensorflow::profiler::XPlane host_plane;
  bool built = false;
};

// Discards what a capture recorded before `epoch_ns` (a schedule's warmup):
// every event that started earlier, on every plane, and the lines left
// empty. The capture then starts at `epoch_ns`: line times are rebased,
// the Task Environment plane, start_epoch_ns and the event and thread
// counts say so. Nothing happens for a time at or before the start.
void DiscardBefore(int64_t epoch_ns, CaptureResult* result);

class CaptureSession {
 public:
  // Starts every collector (the contract is in collectors/collector.h).
  // FailedPrecondition if another window is open; if a collector fails to
  // start, the ones already started are stopped and the error names it.
  static absl::StatusOr<std::unique_ptr<CaptureSession>> Start(
      const collectors::CollectorOptions& options,
      std::string holder = "a CaptureSession of this program");
  // The same with the gate already taken (held until Stop()).
  static absl::StatusOr<std::unique_ptr<CaptureSession>> Start(
      const collectors::CollectorOptions& options, CaptureGate gate);
  // What Start() would refuse about the collectors without starting any
  // (kOperator with no operator collector), for captures that start later.
  static absl::Status CheckCollectors(const collectors::CollectorOptions& options);
  ~CaptureSession();  // Stops the collectors if Stop() was not called.

  CaptureSession(const CaptureSession&) = delete;
  CaptureSession& operator=(const CaptureSession&) = delete;

  int64_t start_epoch_ns() const { return start_epoch_ns_; }
  // Recording goes on, but what was recorded until now is discarded at
  // Stop() (DiscardBefore this moment; a schedule's warmup has ended).
  void DiscardEarlierEvents();
  // Stops every collector and merges their planes, their warnings and, when
  // a collector records operators, the operator annotation of the host
  // plane. Collector failures become errors in the XSpace rather than
  // losing the other planes.
  absl::StatusOr<CaptureResult> Stop(SpaceStorage storage = SpaceStorage::kArena);
  // Whether StopForStreaming() may stop this capture: the host recorder
  // is its only collector (no operators, no device plug-in) and nothing is
  // to be discarded; the other planes are the small ones Stop() adds.
  bool CanStreamHostPlane() const;
  // Stop() without building the host plane: the XSpace that Stop() would
  // give but that plane, which the records it returns hold (written by
  // StreamedCapture's passes, with the same events, stats and names).
  absl::StatusOr<StreamedCapture> StopForStreaming();

 private:
  CaptureSession() = default;
  void Release();

  std::vector<std::unique_ptr<collectors::Collector>> collectors_;
  CaptureGate gate_;
  int64_t start_epoch_ns_ = 0;
  int64_t discard_before_ns_ = 0;
  bool stopped_ = false;
};

// The StepTraces begun while nothing records them, counted from Start to
// Stop (core/step_watch): a Profiler's steps after its window ended.
void StartCountingUnrecordedSteps();
int64_t StopCountingUnrecordedSteps();

}  // namespace session
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_SESSION_CAPTURE_SESSION_H_
