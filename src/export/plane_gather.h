// Some events of a capture's fragments (trace_stream.h) gathered into one
// plane: what the trace writers keep of a fragment once it is gone, for the
// links that cross fragments (launch -> device flows, producer -> consumer
// flows, runtime calls and device work). Never the capture's every event.
#ifndef NEURONPROF_SRC_EXPORT_PLANE_GATHER_H_
#define NEURONPROF_SRC_EXPORT_PLANE_GATHER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "proto/xplane.pb.h"

namespace neuronprof {
namespace exporter {

// A plane's line across fragments: its id and name.
struct LineKey {
  int64_t id;
  std::string name;
  bool operator==(const LineKey& o) const { return id == o.id && name == o.name; }
  template <typename H>
  friend H AbslHashValue(H h, const LineKey& key) {
    return H::combine(std::move(h), key.id, key.name);
  }
};

class PlaneGather {
 public:
  // The fragment's events for which `keep` holds, after those of the same
  // line (by id and name); a new line goes after the others. The plane's
  // id, name, metadata and stats are the first fragment's; offsets are
  // rebased on the gathered line's timestamp.
  void Append(const tensorflow::profiler::XPlane& fragment,
              absl::FunctionRef<bool(const tensorflow::profiler::XEvent&)> keep);
  // Every event of the fragment (lines without events included).
  void Append(const tensorflow::profiler::XPlane& fragment) {
    Append(fragment, [](const tensorflow::profiler::XEvent&) { return true; });
  }
  const tensorflow::profiler::XPlane& plane() const { return plane_; }
  size_t events() const { return events_; }

 private:
  tensorflow::profiler::XPlane plane_;
  bool started_ = false;
  absl::flat_hash_map<LineKey, int> lines_;  // Index in plane_.lines().
  size_t events_ = 0;
};

}  // namespace exporter
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_EXPORT_PLANE_GATHER_H_
