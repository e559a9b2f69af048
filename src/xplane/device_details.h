// What device planes say about their device and their kernels, read the
// same way by the analysis (kernel table, peaks) and the exporters (Kineto
// deviceProperties and kernel args): kernel_details launch properties, the
// compute capability and the device's name.
#ifndef NEURONPROF_SRC_XPLANE_DEVICE_DETAILS_H_
#define NEURONPROF_SRC_XPLANE_DEVICE_DETAILS_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "src/xplane/xplane_visitor.h"

namespace neuronprof {
namespace xplane {

// Launch properties of a kernel, parsed from a kernel_details stat. Tokens
// are "key:value" or "key=value" separated by spaces; unknown tokens are
// skipped. Accepted keys: grid, block (X,Y,Z), registers / regs,
// shared_memory / smem (or static_shared + dynamic_shared), blocks_per_sm,
// occupancy / occ_pct (percent; a fraction <= 1 is scaled).
struct KernelLaunch {
  std::optional<std::array<int64_t, 3>> grid;
  std::optional<std::array<int64_t, 3>> block;
  std::optional<int64_t> registers_per_thread;
  std::optional<int64_t> shared_memory;
  std::optional<double> blocks_per_sm;
  std::optional<double> occupancy_pct;
};
KernelLaunch ParseKernelDetails(std::string_view details);

// "8.6", "sm_86", "86" -> {8, 6}; nullopt when unreadable.
std::optional<std::array<int64_t, 2>> ParseComputeCapability(std::string_view text);

// A device plane's compute capability: its "compute_capability" stat (text
// or joined digits), else compute_cap_major / compute_cap_minor (TSL's and
// our CUPTI collector's names); nullopt when it carries none.
std::optional<std::array<int64_t, 2>> ComputeCapability(const PlaneVisitor& plane);

// The device's name from the plane stats "name", "device_name" or
// "gpu_device_name" (TSL's spelling); "" when none.
std::string DeviceName(const PlaneVisitor& plane);

}  // namespace xplane
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_XPLANE_DEVICE_DETAILS_H_
