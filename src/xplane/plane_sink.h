// A plane handed over in pieces while it is built, so that a writer can put
// it out without ever holding it whole (a flight recorder's dump): a line's
// events in chunks, then the line's other fields, then the plane's.
// Protobuf merges a message's fields in any order, so what the pieces make
// up reads back as the plane built whole.
#ifndef NEURONPROF_SRC_XPLANE_PLANE_SINK_H_
#define NEURONPROF_SRC_XPLANE_PLANE_SINK_H_

#include "absl/status/status.h"
#include "proto/xplane.pb.h"

namespace neuronprof {
namespace xplane {

class XPlaneSink {
 public:
  virtual ~XPlaneSink() = default;
  // The next events of the line being built, in order (any number of
  // calls per line, none for a line without events).
  virtual absl::Status AddEvents(
      const google::protobuf::RepeatedPtrField<tensorflow::profiler::XEvent>& events) = 0;
  // The line's fields but its events (handed over by AddEvents): it ends.
  virtual absl::Status EndLine(const tensorflow::profiler::XLine& line) = 0;
  // The plane's fields but its lines (id, name, metadata, stats): it ends.
  virtual absl::Status EndPlane(const tensorflow::profiler::XPlane& plane) = 0;
};

}  // namespace xplane
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_XPLANE_PLANE_SINK_H_
