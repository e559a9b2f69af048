#include "src/session/flight_session.h"

#include <mutex>

#include "absl/strings/str_cat.h"
#include "src/collectors/core_status.h"
#include "src/collectors/host/host_collector.h"
#include "src/core/recorder.h"
#include "src/xplane/xplane_builder.h"

namespace neuronprof {
namespace session {
namespace {

// The FlightSession that records now (at most one: it holds the capture
// gate). Never destroyed: the capture server may ask during static
// destruction.
std::mutex& LiveMutex() {
  static auto* mutex = new std::mutex;
  return *mutex;
}
const FlightSession* g_live = nullptr;  // Guarded by LiveMutex().

}  // namespace

absl::StatusOr<std::unique_ptr<FlightSession>> FlightSession::Start(int host_tracer_level,
                                                                    uint64_t ring_bytes,
                                                                    std::string holder) {
  auto gate = CaptureGate::Acquire(std::move(holder));
  if (!gate.ok()) return gate.status();
  absl::Status started =
      collectors::ToStatus(core::StartRingRecording(host_tracer_level, ring_bytes));
  if (!started.ok()) return started;  // The gate is released on return.
  std::unique_ptr<FlightSession> session(new FlightSession(std::move(*gate)));
  std::lock_guard<std::mutex> lock(LiveMutex());
  g_live = session.get();
  return session;
}

FlightSession::~FlightSession() {
  {
    std::lock_guard<std::mutex> lock(LiveMutex());  // Waits for a SnapshotLive.
    if (g_live == this) g_live = nullptr;
  }
  static_cast<void>(core::StopRecording());  // Ends the ring; a destructor has no one to tell.
}

bool FlightSession::IsLive() {
  std::lock_guard<std::mutex> lock(LiveMutex());
  return g_live != nullptr;
}

absl::StatusOr<CaptureResult> FlightSession::SnapshotLive(int64_t last_ms,
                                                          const std::string& buffer_advice,
                                                          std::string_view note,
                                                          SpaceStorage storage) {
  std::lock_guard<std::mutex> lock(LiveMutex());
  if (g_live == nullptr) {
    return absl::FailedPreconditionError(
        "no FlightRecorder records in this process (neuronprof::FlightRecorder)");
  }
  return g_live->Snapshot(last_ms, buffer_advice, note, storage);
}

namespace {

// The warnings of a snapshot of the ring after the host plane's own: events
// clipped at the cut, what an overwritten ring kept, the caller's note.
void AddSnapshotWarnings(const core::RecordedCapture& snapshot, int64_t last_ms,
                         std::string_view note, int64_t start_epoch_ns, int64_t stop_epoch_ns,
                         tensorflow::profiler::XSpace* space) {
  if (snapshot.clipped > 0) {
    xplane::AddWarning(space, absl::StrCat("neuronprof: ", snapshot.clipped,
                                           " host events at the flight recorder's cut were "
                                           "left out: their names had been overwritten"));
  }
  // The ring kept less than the dump asks for: say how much, and what keeps
  // more (last_ms 0 asks for everything since the recorder started).
  const int64_t kept_ms = (stop_epoch_ns - start_epoch_ns) / 1000000;
  if (snapshot.ring_overwrote && (last_ms == 0 || kept_ms < last_ms)) {
    xplane::AddWarning(
        space, absl::StrCat("neuronprof: the flight recorder's ring (", snapshot.buffer_bytes,
                            " bytes) had overwritten older events: this dump holds the last ",
                            kept_ms, " ms",
                            last_ms > 0 ? absl::StrCat(" of the ", last_ms, " ms asked for")
                                        : std::string(" the ring retained"),
                            "; raise FlightRecorderOptions::ring_bytes to keep more"));
  }
  if (!note.empty()) xplane::AddWarning(space, note);
}

}  // namespace

absl::StatusOr<CaptureResult> FlightSession::Snapshot(int64_t last_ms,
                                                      const std::string& buffer_advice,
                                                      std::string_view note,
                                                      SpaceStorage storage) const {
  auto snapshot = core::SnapshotRing(last_ms);
  if (!snapshot.ok()) return collectors::ToStatus(snapshot.status());
  CaptureResult result(storage);
  result.start_epoch_ns = snapshot->start_epoch_ns;
  result.stop_epoch_ns = snapshot->stop_epoch_ns;
  xplane::SetProfileTimes(&result.space, result.start_epoch_ns, result.stop_epoch_ns);
  collectors::AddHostPlane(*snapshot, &result.space, &result.stats, buffer_advice);
  AddSnapshotWarnings(*snapshot, last_ms, note, result.start_epoch_ns, result.stop_epoch_ns,
                      &result.space);
  return result;
}

absl::StatusOr<StreamedCapture> FlightSession::SnapshotForStreaming(
    int64_t last_ms, const std::string& buffer_advice, std::string_view note) const {
  auto snapshot = core::SnapshotRing(last_ms);
  if (!snapshot.ok()) return collectors::ToStatus(snapshot.status());
  StreamedCapture streamed;
  streamed.records = std::move(*snapshot);
  collectors::SortSnapshotRecords(&streamed.records);  // No index of pointers.
  CaptureResult& result = streamed.result;
  result.start_epoch_ns = streamed.records.start_epoch_ns;
  result.stop_epoch_ns = streamed.records.stop_epoch_ns;
  xplane::SetProfileTimes(&result.space, result.start_epoch_ns, result.stop_epoch_ns);
  collectors::AddHostWarnings(streamed.records, &result.space, buffer_advice);
  AddSnapshotWarnings(streamed.records, last_ms, note, result.start_epoch_ns, result.stop_epoch_ns,
                      &result.space);
  return streamed;
}

}  // namespace session
}  // namespace neuronprof
