// Writing an .xplane.pb whose last plane is streamed while it is built
// (xplane::XPlaneSink): the plane is never held whole, so a file of
// millions of events takes a chunk of events in memory, not an XSpace.
// A message's length is written as a fixed-width (non-minimal, 5-byte)
// varint placeholder and filled in when the message ends; protobuf's
// parsers (C++, Python) and map_entry_rewrite' rewrite read it like any varint.
#ifndef NEURONPROF_SRC_EXPORT_XPLANE_STREAM_H_
#define NEURONPROF_SRC_EXPORT_XPLANE_STREAM_H_

#include <functional>
#include <string>

#include "absl/status/status.h"
#include "proto/xplane.pb.h"
#include "src/xplane/plane_sink.h"

namespace neuronprof {
namespace exporter {

// Hands one plane to the sink, piece by piece; returns the first error.
using StreamedPlane = std::function<absl::Status(xplane::XPlaneSink*)>;

// Writes `path` atomically (AtomicFile): `space` with the plane that
// `plane` streams after its planes, read back as one XSpace.
absl::Status WriteXSpaceStreamed(const tensorflow::profiler::XSpace& space,
                                 const StreamedPlane& plane, const std::string& path);

}  // namespace exporter
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_EXPORT_XPLANE_STREAM_H_
