// The flight recorder's session: the one capture gate held for as long as
// a ring capture (core's ring mode) runs, and snapshots of that ring turned
// into an XSpace, while recording goes on. Host markers only: the other
// collectors (libtorch, device plug-ins) run in windows, not rings.
#ifndef NEURONPROF_SRC_SESSION_FLIGHT_SESSION_H_
#define NEURONPROF_SRC_SESSION_FLIGHT_SESSION_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "src/core/recorder.h"
#include "src/session/capture_gate.h"
#include "src/session/capture_session.h"

namespace neuronprof {
namespace session {

class FlightSession {
 public:
  // Takes the capture gate for `holder` (FailedPrecondition naming the
  // capture that runs) and starts the ring (InvalidArgument below
  // core::kMinRingBytes or for a bad level).
  static absl::StatusOr<std::unique_ptr<FlightSession>> Start(int host_tracer_level,
                                                              uint64_t ring_bytes,
                                                              std::string holder);
  ~FlightSession();  // Ends the ring and lets the next capture start.

  FlightSession(const FlightSession&) = delete;
  FlightSession& operator=(const FlightSession&) = delete;

  // The events the ring holds (those that ended in the last `last_ms` when
  // > 0) as an XSpace with its profile times, warnings for drops and
  // clipped events ending with `buffer_advice`, and `note` as a warning of
  // its own when not empty. Thread-safe; recording threads are never
  // blocked.
  absl::StatusOr<CaptureResult> Snapshot(int64_t last_ms, const std::string& buffer_advice,
                                         std::string_view note = {},
                                         SpaceStorage storage = SpaceStorage::kArena) const;

  // The same snapshot, its host plane left to be streamed: what Snapshot
  // gives without the XSpace's ~135 bytes per event.
  absl::StatusOr<StreamedCapture> SnapshotForStreaming(int64_t last_ms,
                                                       const std::string& buffer_advice,
                                                       std::string_view note = {}) const;

  // For the capture server, which serves a live flight recorder's last
  // seconds to remote clients: whether one records in this process now,
  // and its Snapshot (FailedPrecondition when none does). The session
  // cannot end while a snapshot of it is taken.
  static bool IsLive();
  static absl::StatusOr<CaptureResult> SnapshotLive(int64_t last_ms,
                                                    const std::string& buffer_advice,
                                                    std::string_view note, SpaceStorage storage);

 private:
  explicit FlightSession(CaptureGate gate) : gate_(std::move(gate)) {}
  CaptureGate gate_;
};

}  // namespace session
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_SESSION_FLIGHT_SESSION_H_
