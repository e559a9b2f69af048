// The trace recorder's control side: starts and stops captures and hands the
// recorded events to the host collector. The per-event side is inline in
// include/neuronprof/internal/recorder.h.
#ifndef NEURONPROF_SRC_CORE_RECORDER_H_
#define NEURONPROF_SRC_CORE_RECORDER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "neuronprof/internal/recorder.h"
#include "src/core/clock.h"

// NEURONPROF_API here: exported from libneuronprof_markers for the other
// neuronprof libraries (not public API; see neuronprof/export.h).

namespace neuronprof {
namespace core {

class EventPool;

// Everything one thread recorded in one capture.
struct ThreadEvents {
  int64_t thread_id = 0;
  std::string thread_name;
  bool exited = false;  // The thread ended before the capture did.
  std::vector<internal::EventRecord> events;  // In the order they ended.
  uint64_t dropped = 0;    // Lost to a full buffer.
  uint64_t too_large = 0;  // Markers larger than a block (never recorded).
};

// The result of one capture. Owns the memory that copied names point into,
// so records stay valid as long as this object lives.
struct NEURONPROF_API RecordedCapture {
  RecordedCapture();
  ~RecordedCapture();
  RecordedCapture(RecordedCapture&&) noexcept;
  RecordedCapture& operator=(RecordedCapture&&) noexcept;

  std::vector<ThreadEvents> threads;  // Threads with at least one event or drop.
  uint64_t dropped = 0;               // Sum over threads, plus unattributed.
  // Markers whose name and arguments, encoded, exceed one block
  // (kBlockBytes): not recorded, and not counted in `dropped`.
  uint64_t too_large = 0;
  uint64_t largest_too_large = 0;     // Encoded bytes of the largest one.
  uint64_t buffer_bytes = 0;          // Size of the capture's buffer.
  TickConverter clock;
  int64_t start_epoch_ns = 0;
  int64_t stop_epoch_ns = 0;
  std::unique_ptr<EventPool> pool;
};

// Enables markers up to `host_tracer_level` (1..3; 0 records nothing but
// still opens a window). Fails if a capture is already running or the
// buffer cannot be reserved.
NEURONPROF_API absl::Status StartRecording(int host_tracer_level, uint64_t max_buffer_bytes);

// Disables markers, waits until no thread is still writing a record, and
// returns everything recorded since StartRecording.
NEURONPROF_API absl::StatusOr<RecordedCapture> StopRecording();

bool IsRecording();

// Size of one buffer block; every thread that records claims at least one.
constexpr uint64_t kBlockBytes = 64 * 1024;

}  // namespace core
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_CORE_RECORDER_H_
