// Queue waits and async spans in the tail explanation.
//
// A queue wait: the time from a producer's end (TraceProducer) to the start
// of its first consumer (TraceConsumer of the same context type and id,
// xplane::LinkFlows), named "wait <producer>-><consumer>". It is a part of
// the step that encloses the producer on its line, for the time it lies
// inside the step and outside the step's direct children (it takes from
// the step's "(self)"), and a part of the async span whose id is the
// context's.
//
// An async span's parts (rule in docs/ANALYSIS.md): the markers on any
// thread that produce or consume a context whose id is the span's id (any
// context type; a linked marker nested in another linked to the same id
// counts in its parent), each by name for the time it lies inside the
// span, the queue waits of those producers inside the span, and "(self)":
// the rest of the span's duration (below 0 only when parts on different
// threads overlap).
#ifndef NEURONPROF_SRC_ANALYSIS_MARKERS_FLOW_TAILS_H_
#define NEURONPROF_SRC_ANALYSIS_MARKERS_FLOW_TAILS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "proto/xplane.pb.h"
#include "src/analysis/markers/tail_report.h"
#include "src/analysis/ops/device_attribution.h"
#include "src/analysis/timeline/host_spans.h"

namespace neuronprof {
namespace analysis {

// One per producer whose first consumer starts after it ends (FlowWait:
// tail_report.h).
std::vector<FlowWait> CollectFlowWaits(const tensorflow::profiler::XSpace& space,
                                       const HostSpans& spans);

// For each marker (or batch consumer's link) with a context, the markers
// of other threads linked to that context (FlowWait as BuildStepTails'
// `linked` takes them).
std::vector<FlowWait> CollectLinkedMarkers(const HostSpans& spans);

// Device events attributed to a user marker (DeviceOpEvent::marker), as
// BuildStepTails' `device` takes them.
std::vector<FlowWait> CollectDeviceWork(const DeviceEvents& device);

// One report per (track, name) of async span, kind "async", named
// "<track>/<name>" (the name alone when it is the track's), by name.
// `device`: device work launched in a linked marker (or nested in it)
// counts in that marker's part for its time inside the span and outside
// the marker (taken from "(self)").
std::vector<TailReport> BuildAsyncTails(const HostSpans& spans, const std::vector<FlowWait>& waits,
                                        const std::vector<FlowWait>& device = {});

// Steps' and async spans' reports: BuildStepTails with the waits, linked
// markers and device work (`device`: CollectDeviceEvents of the same spans;
// null: no device time), then BuildAsyncTails.
std::vector<TailReport> BuildTails(const tensorflow::profiler::XSpace& space,
                                   const HostSpans& spans, const DeviceEvents* device = nullptr);

}  // namespace analysis
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_ANALYSIS_MARKERS_FLOW_TAILS_H_
