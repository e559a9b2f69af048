// Records every kind of host record, into a flight recorder's ring (then
// snapshots it) or a window: nested scopes with integer and string
// arguments, call-site scopes, steps, instants, counters, async spans,
// flows, two threads, and one line of several streaming chunks. Shared by
// the streamed-plane tests and write_streamed_xplane (the CLI and xprof
// read its files).
#ifndef NEURONPROF_TESTS_EXPORT_RING_VARIETY_H_
#define NEURONPROF_TESTS_EXPORT_RING_VARIETY_H_

#include <cstdint>
#include <string>
#include <thread>
#include <utility>

#include "absl/status/statusor.h"
#include "neuronprof/trace.h"
#include "src/collectors/core_status.h"
#include "src/core/recorder.h"

namespace neuronprof {
namespace testing {

// Markers on the main thread: more than eight streaming chunks
// (collectors::kStreamChunkEvents), with counters and async spans among
// them; the worker's nested markers alone (sorted in place for
// streaming): more than one chunk.
inline constexpr int kVarietySteps = 600;

// Records the variety into whatever records now (a ring, a window).
inline void RecordVariety() {
  AsyncTrace life("requests", "request", 7);
  uint64_t produced = 0;
  for (int step = 0; step < kVarietySteps; ++step) {
    StepTrace step_trace("train", step);
    for (int layer = 0; layer < 8; ++layer) {
      NEURONPROF_SCOPE("op");
      const std::string name = "layer_" + std::to_string(layer);
      ScopedTrace copied(name, {{"i", layer}, {"dtype", layer % 2 ? "bf16" : "fp32"}});
    }
    if (step % 50 == 0) {
      TraceInstant("checkpoint", {{"step", step}});
      TraceCounter("queue_depth", step % 7);
      TraceProducer producer("enqueue");
      produced = producer.context_id();
    }
  }
  std::thread worker([produced] {
    SetCurrentThreadName("variety_worker");
    TraceConsumer consumer("run_batch", ContextType::kGeneric, produced);
    for (int i = 0; i < 200; ++i) {
      ScopedTrace work("work", {{"n", i}});
      for (int j = 0; j < 8; ++j) NEURONPROF_SCOPE("part");
    }
  });
  worker.join();
  life = AsyncTrace();  // Ends the span.
}

inline absl::StatusOr<core::RecordedCapture> RecordVarietyInRing() {
  if (auto s = core::StartRingRecording(2, uint64_t{16} << 20); !s.ok()) {
    return collectors::ToStatus(s);
  }
  RecordVariety();
  auto snapshot = core::SnapshotRing(0);
  static_cast<void>(core::StopRecording());  // The snapshot holds a copy.
  if (!snapshot.ok()) return collectors::ToStatus(snapshot.status());
  return std::move(*snapshot);
}

}  // namespace testing
}  // namespace neuronprof

#endif  // NEURONPROF_TESTS_EXPORT_RING_VARIETY_H_
