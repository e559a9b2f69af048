// Collects ScopedTrace / StepTrace markers into the "/host:CPU" plane: one
// line per thread, events sorted by start so viewers nest them.
#ifndef NEURONPROF_SRC_COLLECTORS_HOST_HOST_COLLECTOR_H_
#define NEURONPROF_SRC_COLLECTORS_HOST_HOST_COLLECTOR_H_

#include <memory>
#include <string>

#include "src/collectors/collector.h"
#include "src/core/recorder.h"
#include "src/xplane/plane_sink.h"

namespace neuronprof {
namespace collectors {

// Builds the host plane from one recorded capture; adds a warning to the
// space when events were dropped, ending with `buffer_advice`.
void AddHostPlane(const core::RecordedCapture& capture,
                  tensorflow::profiler::XSpace* space, CollectStats* stats,
                  const std::string& buffer_advice = kLocalBufferAdvice);

// Events a streamed host plane holds at most: its chunk (~128 KiB).
inline constexpr int kStreamChunkEvents = 512;

// The same plane, handed to `sink` kStreamChunkEvents events at a time
// instead of built whole (never more than one chunk of events in memory),
// as the plane that would follow `space`'s planes (its times relative to
// `space`'s profile start). The first error of the sink, which then gets
// nothing more. The warnings AddHostPlane adds come from AddHostWarnings.
absl::Status StreamHostPlane(const core::RecordedCapture& capture,
                             const tensorflow::profiler::XSpace& space,
                             xplane::XPlaneSink* sink, CollectStats* stats);
// Sorts, in the snapshot's own copy, each thread's records that are all
// markers into the order of their line, so that building the line needs
// no index of pointers (8 bytes per event). Nothing for a capture's pool.
void SortSnapshotRecords(core::RecordedCapture* snapshot);
void AddHostWarnings(const core::RecordedCapture& capture, tensorflow::profiler::XSpace* space,
                     const std::string& buffer_advice);

std::unique_ptr<Collector> CreateHostCollector(const CaptureOptions& options);

}  // namespace collectors
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_COLLECTORS_HOST_HOST_COLLECTOR_H_
