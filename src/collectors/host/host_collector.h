// Collects ScopedTrace / StepTrace markers into the "/host:CPU" plane: one
// line per thread, events sorted by start so viewers nest them.
#ifndef NEURONPROF_SRC_COLLECTORS_HOST_HOST_COLLECTOR_H_
#define NEURONPROF_SRC_COLLECTORS_HOST_HOST_COLLECTOR_H_

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "src/collectors/collector.h"
#include "src/core/recorder.h"
#include "src/xplane/plane_sink.h"

namespace neuronprof {
namespace collectors {

// Lines of at least this many events (a libtorch thread's) are built in
// two halves on two threads: the same plane, ids included.
inline constexpr size_t kSplitLineEvents = 100000;

// Builds the host plane from one recorded capture; adds a warning to the
// space when events were dropped, ending with `buffer_advice`.
// `split_line_events`: for tests, which split short lines.
void AddHostPlane(const core::RecordedCapture& capture, tensorflow::profiler::XSpace* space,
                  CollectStats* stats, const std::string& buffer_advice = kLocalBufferAdvice,
                  size_t split_line_events = kSplitLineEvents);

// Events a streamed host plane holds at most: its chunk (~128 KiB).
inline constexpr int kStreamChunkEvents = 512;

// The same plane, handed to `sink` kStreamChunkEvents events at a time
// instead of built whole (never more than one chunk of events in memory),
// as the plane that would follow `space`'s planes (its times relative to
// `space`'s profile start). The first error of the sink, which then gets
// nothing more. The warnings AddHostPlane adds come from AddHostWarnings.
// `built`, when given, gets the plane's fields but its lines (metadata,
// stats: what the sink got at EndPlane), for FragmentHostPlane.
absl::Status StreamHostPlane(const core::RecordedCapture& capture,
                             const tensorflow::profiler::XSpace& space, xplane::XPlaneSink* sink,
                             CollectStats* stats, tensorflow::profiler::XPlane* built = nullptr);

// The same plane cut into fragments (export/trace_stream.h) for the trace
// writers, built again from the records: `fragment` gets `built`'s fields
// (StreamHostPlane's: the whole plane's metadata, which a fragment carries
// from the first), then for each fragment the next events of the lines,
// at most `max_events` in all, line by line in the plane's order; `ready`
// is called with it (it may take the events), then its lines are cleared.
// Never more than one fragment of events in memory. The first error of
// `ready`, which then gets nothing more.
absl::Status FragmentHostPlane(const core::RecordedCapture& capture,
                               const tensorflow::profiler::XSpace& space,
                               const tensorflow::profiler::XPlane& built,
                               tensorflow::profiler::XPlane* fragment, int max_events,
                               const std::function<absl::Status()>& ready);

// The records a host collector (CreateHostCollector's) took at Stop(),
// moved out of it, with the warnings AddHostPlane would add to `space`
// (AddHostWarnings with the collector's buffer advice): for a capture whose
// host plane is streamed instead of collected.
core::RecordedCapture TakeHostRecords(Collector* host_collector,
                                      tensorflow::profiler::XSpace* space);
// Sorts, in the snapshot's own copy, each thread's records that are all
// markers into the order of their line, so that building the line needs
// no index of pointers (8 bytes per event). Nothing for a capture's pool.
void SortSnapshotRecords(core::RecordedCapture* snapshot);
void AddHostWarnings(const core::RecordedCapture& capture, tensorflow::profiler::XSpace* space,
                     const std::string& buffer_advice);

std::unique_ptr<Collector> CreateHostCollector(const CollectorOptions& options);

}  // namespace collectors
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_COLLECTORS_HOST_HOST_COLLECTOR_H_
