// Device events ("/device:*" planes: kernels, copies, sets, plug-in work)
// and the framework operator that launched each one:
// - by correlation id: the device event shares it with a runtime call (a
//   "/host:*" event, e.g. cudaLaunchKernel on "/host:CPU-GPU-runtime"),
//   and the call's op is the innermost operator around it on the same
//   thread (line id);
// - else by an explicit framework-op stat on the device event (tf_op, the
//   plug-in API's DeviceEvent::framework_op): the op's name or its tf_op
//   value, matched to the latest call of that op starting before it.
// Each device event also gets the innermost user marker (a host event that
// is not an operator, step, memory event or runtime call) around its
// launch on the launching thread: the middle of the runtime call with its
// correlation id, else of the op named by its framework-op stat. So a
// program with markers only still sees its device time in its own terms.
#ifndef NEURONPROF_SRC_ANALYSIS_OPS_DEVICE_ATTRIBUTION_H_
#define NEURONPROF_SRC_ANALYSIS_OPS_DEVICE_ATTRIBUTION_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "proto/xplane.pb.h"
#include "src/analysis/ops/operator_events.h"
#include "src/analysis/timeline/host_spans.h"
#include "src/xplane/xplane_visitor.h"

namespace neuronprof {
namespace analysis {

enum class Attribution { kNone, kCorrelation, kFrameworkOp };

// Views point into the XSpace, which must outlive this.
struct DeviceOpEvent {
  int plane = 0;          // index into the XSpace
  std::string_view name;  // kernel name, "MemcpyHtoD", ...
  std::string kind;       // "kernel", "memcpy", "memset", "other"
  int64_t start_ps = 0, duration_ps = 0;
  int64_t bytes = -1;        // copies and sets; -1 when not recorded
  std::string_view details;  // kernel_details (kernels only)
  std::optional<double> achieved_occupancy_pct;
  int64_t flops = -1;  // reported by the runtime (flops stat); -1 when not
  int op = -1;         // index into OperatorEvents::ops, -1: none
  Attribution attribution = Attribution::kNone;
  // Where it was launched: the thread (host line id) and the middle of the
  // launching call (or op); -1: unknown.
  int64_t launch_thread = -1, launch_ps = -1;
  // The innermost user marker around the launch on that thread: an index
  // into the HostSpans the events were collected with, -1: none.
  int marker = -1;
  std::string_view marker_name;
};

struct DeviceEvents {
  std::vector<DeviceOpEvent> events;  // plane by plane, line by line
  std::vector<int> planes;            // indices of the device planes
  int64_t by_correlation = 0, by_framework_op = 0, unattributed = 0;  // to operators
  int64_t to_marker = 0;       // with a user marker around the launch
  int64_t to_neither = 0;      // neither an operator nor a marker
  int64_t reported_flops = 0;  // sum of the events' flops stats (saturating)
};

// What a device event is: its device_event_kind stat, else the details
// stat it carries ("kernel", "memcpy", "memset"), else "other".
std::string DeviceEventKind(const xplane::PlaneVisitor& plane, const xplane::EventVisitor& event);

// `spans`: the space's CollectHostSpans, which DeviceOpEvent::marker
// indexes; null: collected here.
DeviceEvents CollectDeviceEvents(const tensorflow::profiler::XSpace& space,
                                 const OperatorEvents& ops, const HostSpans* spans = nullptr);

}  // namespace analysis
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_ANALYSIS_OPS_DEVICE_ATTRIBUTION_H_
