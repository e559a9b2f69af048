// Device attributes from the CUDA driver, loaded with dlopen so that
// neuronprof_cupti (and its tests) link and run on machines without one.
#ifndef NEURONPROF_SRC_COLLECTORS_CUPTI_DRIVER_PROPERTIES_H_
#define NEURONPROF_SRC_COLLECTORS_CUPTI_DRIVER_PROPERTIES_H_

#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "neuronprof/device.h"
#include "src/collectors/cupti/gpu_properties.h"

namespace neuronprof {
namespace cupti {

// The NVIDIA driver library CUPTI needs.
inline constexpr char kDriverLibrary[] = "libcuda.so.1";

// OK when `library` (the driver) can be loaded; else FailedPrecondition
// naming it. Tests name a missing library to take the no-driver path on any
// machine.
absl::Status CheckDriverPresent(const std::string& library = kDriverLibrary);

// Every visible GPU by device ordinal (CUPTI's deviceId). Attributes the
// driver refuses stay 0.
absl::StatusOr<std::map<int, GpuProperties>> ReadGpuProperties();

// Writes the plane stats xprof reads for GPUs (gpu_device_name, clock_rate,
// core_count, memory_bandwidth, memory_size, compute_cap_major/minor,
// device_vendor) for `device_id`.
void ReportGpuProperties(int device_id, const GpuProperties& gpu, DeviceActivitySink& sink);

}  // namespace cupti
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_COLLECTORS_CUPTI_DRIVER_PROPERTIES_H_
