// Every scope on the host planes' lines, with the scope it nests in and its
// self time: the one nesting walk behind the markers table, the step
// statistics and the tail explanation (linear in the events of a line).
#ifndef NEURONPROF_SRC_ANALYSIS_TIMELINE_HOST_SPANS_H_
#define NEURONPROF_SRC_ANALYSIS_TIMELINE_HOST_SPANS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "proto/xplane.pb.h"

namespace neuronprof {
namespace analysis {

// kRuntimeCall: a device runtime's call (every event of a
// "/host:CPU-<TYPE>-runtime" plane, and events with a correlation_id, as
// TSL merges launches into "/host:CPU"): not the user's marker.
// kAsync: an AsyncTrace span on an async track's lane (its thread is the
// track's name); nothing nests in it.
enum class SpanKind : uint8_t { kMarker, kStep, kOperator, kRuntimeCall, kAsync };

struct HostSpan {
  SpanKind kind = SpanKind::kMarker;
  std::string_view name;  // a view into the XSpace
  int source = -1;        // index into HostSpans::sources; -1: none
  int thread = 0;         // index into HostSpans::threads
  int64_t start_ps = 0, duration_ps = 0;
  // duration_ps minus the time of the scopes nested directly in it (on its
  // line; a child that outlasts its parent counts up to the parent's end).
  int64_t self_ps = 0;
  int32_t parent = -1;  // the innermost enclosing span on the line; -1: none
  // The context id a marker produces (_p) or consumes (_c), an async span's
  // id (async_id); 0: none.
  uint64_t context = 0;
  const tensorflow::profiler::XEvent* event = nullptr;  // for flow links
};

// A link of a multi-id consumer (TraceBatchConsumer): an instant carrying
// a context id, which belongs to the span enclosing it on its line.
struct SpanLink {
  uint64_t context = 0;
  int32_t span = -1;  // index into HostSpans::spans
  const tensorflow::profiler::XEvent* event = nullptr;
};

struct HostSpans {
  std::vector<HostSpan> spans;       // per line, parents before children
  std::vector<SpanLink> links;       // by line, in time order
  std::vector<std::string> threads;  // a line's name, else "thread <id>"
  std::vector<int64_t> thread_ids;   // each thread's line id (the OS thread id)
  std::vector<std::string> sources;  // ShortSource of the source stat
};

// Markers (NEURONPROF_SCOPE, ScopedTrace, TraceProducer/TraceConsumer),
// steps (StepTrace: IsStepEvent), operators and async spans of every
// "/host:*" plane; memory events, instants (TraceInstant) and counter
// samples (the _counters_ line) are not scopes and are left out; an
// instant with a context id (a TraceBatchConsumer's link) is a SpanLink. Negative
// durations count as 0. The XSpace must outlive the result.
HostSpans CollectHostSpans(const tensorflow::profiler::XSpace& space);

// The last two components of a path ("src/dir/file.cc:12" -> "dir/file.cc:12"),
// a view into `source`.
std::string_view ShortSource(std::string_view source);

}  // namespace analysis
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_ANALYSIS_TIMELINE_HOST_SPANS_H_
