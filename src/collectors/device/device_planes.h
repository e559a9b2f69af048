// Turns one device plug-in's activity into XSpace planes: device events on
// "/device:GPU:<N>" or "/device:CUSTOM:<TYPE>:<N>" (one line per queue), and
// runtime calls on "/host:CPU-<TYPE>-runtime" (one line per calling thread).
#ifndef NEURONPROF_SRC_COLLECTORS_DEVICE_DEVICE_PLANES_H_
#define NEURONPROF_SRC_COLLECTORS_DEVICE_DEVICE_PLANES_H_

#include <string>
#include <string_view>

#include "proto/xplane.pb.h"
#include "src/collectors/collector.h"
#include "src/collectors/device/device_activity.h"

namespace neuronprof {
namespace collectors {

// The plane that holds the runtime calls of `device_type`'s plug-ins.
std::string RuntimePlaneName(std::string_view device_type);
// The plane that holds device `device_id` of `device_type`.
std::string DevicePlaneName(std::string_view device_type, int device_id);

// Adds `activity` to `space`, whose "Task Environment" plane must already
// hold the capture window: device times are mapped onto the host clock,
// and events outside the window are dropped. Drops (the plug-in's and
// ours) are counted in `stats` and explained in the space's warnings.
void AddDeviceActivity(std::string_view collector_name, std::string_view device_type,
                       const DeviceActivity& activity, tensorflow::profiler::XSpace* space,
                       CollectStats* stats);

}  // namespace collectors
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_COLLECTORS_DEVICE_DEVICE_PLANES_H_
