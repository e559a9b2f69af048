#include "src/session/flight_session.h"

#include <mutex>

#include "absl/strings/str_cat.h"
#include "src/collectors/host/host_collector.h"
#include "src/core/recorder.h"
#include "src/session/mapped_arena.h"
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

absl::StatusOr<std::unique_ptr<FlightSession>> FlightSession::Start(
    int host_tracer_level, uint64_t ring_bytes, std::string holder) {
  auto gate = CaptureGate::Acquire(std::move(holder));
  if (!gate.ok()) return gate.status();
  absl::Status started = core::StartRingRecording(host_tracer_level, ring_bytes);
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
  core::StopRecording().IgnoreError();
}

bool FlightSession::IsLive() {
  std::lock_guard<std::mutex> lock(LiveMutex());
  return g_live != nullptr;
}

absl::StatusOr<CaptureResult> FlightSession::SnapshotLive(int64_t last_ms,
                                                          const std::string& buffer_advice,
                                                          std::string_view note) {
  std::lock_guard<std::mutex> lock(LiveMutex());
  if (g_live == nullptr) {
    return absl::FailedPreconditionError(
        "no FlightRecorder records in this process (neuronprof::FlightRecorder)");
  }
  return g_live->Snapshot(last_ms, buffer_advice, note);
}

ArenaSnapshot::ArenaSnapshot() = default;
ArenaSnapshot::~ArenaSnapshot() = default;
ArenaSnapshot::ArenaSnapshot(ArenaSnapshot&&) noexcept = default;
ArenaSnapshot& ArenaSnapshot::operator=(ArenaSnapshot&&) noexcept = default;

absl::StatusOr<CaptureResult> FlightSession::Snapshot(int64_t last_ms,
                                                      const std::string& buffer_advice,
                                                      std::string_view note) const {
  CaptureResult result;
  absl::Status built = BuildSnapshot(last_ms, buffer_advice, note, &result.space, &result.stats,
                                     &result.start_epoch_ns, &result.stop_epoch_ns);
  if (!built.ok()) return built;
  return result;
}

absl::StatusOr<ArenaSnapshot> FlightSession::SnapshotOnArena(int64_t last_ms,
                                                             const std::string& buffer_advice,
                                                             std::string_view note) const {
  ArenaSnapshot result;
  result.arena = NewMappedArena();
  if (result.arena != nullptr) {
    result.space =
        google::protobuf::Arena::CreateMessage<tensorflow::profiler::XSpace>(result.arena.get());
  } else {
    result.heap_space = std::make_unique<tensorflow::profiler::XSpace>();
    result.space = result.heap_space.get();
  }
  absl::Status built = BuildSnapshot(last_ms, buffer_advice, note, result.space, &result.stats,
                                     &result.start_epoch_ns, &result.stop_epoch_ns);
  if (!built.ok()) return built;
  return result;
}

absl::Status FlightSession::BuildSnapshot(int64_t last_ms, const std::string& buffer_advice,
                                          std::string_view note,
                                          tensorflow::profiler::XSpace* space,
                                          collectors::CollectStats* stats,
                                          int64_t* start_epoch_ns,
                                          int64_t* stop_epoch_ns) const {
  // The ring's copy goes when this returns: the XSpace holds what it needs.
  auto snapshot = core::SnapshotRing(last_ms);
  if (!snapshot.ok()) return snapshot.status();
  *start_epoch_ns = snapshot->start_epoch_ns;
  *stop_epoch_ns = snapshot->stop_epoch_ns;
  xplane::SetProfileTimes(space, *start_epoch_ns, *stop_epoch_ns);
  collectors::AddHostPlane(*snapshot, space, stats, buffer_advice);
  if (snapshot->clipped > 0) {
    xplane::AddWarning(space,
                       absl::StrCat("neuronprof: ", snapshot->clipped,
                                    " host events at the flight recorder's cut were "
                                    "left out: their names had been overwritten"));
  }
  // The ring kept less than the dump asks for: say how much, and what keeps
  // more (last_ms 0 asks for everything since the recorder started).
  const int64_t kept_ms = (*stop_epoch_ns - *start_epoch_ns) / 1000000;
  if (snapshot->ring_overwrote && (last_ms == 0 || kept_ms < last_ms)) {
    xplane::AddWarning(
        space,
        absl::StrCat("neuronprof: the flight recorder's ring (", snapshot->buffer_bytes,
                     " bytes) had overwritten older events: this dump holds the last ",
                     kept_ms, " ms",
                     last_ms > 0 ? absl::StrCat(" of the ", last_ms, " ms asked for")
                                 : std::string(" the ring retained"),
                     "; raise FlightRecorderOptions::ring_bytes to keep more"));
  }
  if (!note.empty()) xplane::AddWarning(space, note);
  return absl::OkStatus();
}

}  // namespace session
}  // namespace neuronprof
