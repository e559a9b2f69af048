// Shared by the CUPTI tests: an H100's limits as its driver reports them,
// and a view of a typed CUPTI record as the generic one the translator takes.
#ifndef NEURONPROF_TESTS_COLLECTORS_CUPTI_TEST_GPU_H_
#define NEURONPROF_TESTS_COLLECTORS_CUPTI_TEST_GPU_H_

#include <cupti_activity.h>

#include <cstdint>

#include "src/collectors/cupti/driver_properties.h"

namespace neuronprof {
namespace testing {

inline cupti::GpuProperties H100() {
  cupti::GpuProperties gpu;
  gpu.name = "NVIDIA H100 80GB HBM3";
  gpu.compute_major = 9;
  gpu.compute_minor = 0;
  gpu.sm_count = 132;
  gpu.max_threads_per_block = 1024;
  gpu.max_threads_per_sm = 2048;
  gpu.max_blocks_per_sm = 32;
  gpu.regs_per_block = 65536;
  gpu.regs_per_sm = 65536;
  gpu.warp_size = 32;
  gpu.shared_memory_per_block = 49152;
  gpu.shared_memory_per_block_optin = 232448;
  gpu.shared_memory_per_sm = 233472;
  gpu.reserved_shared_memory_per_block = 1024;
  gpu.clock_rate_khz = 1980000;
  gpu.memory_clock_khz = 2619000;
  gpu.memory_bus_width_bits = 5120;
  gpu.memory_bytes = int64_t{85} << 30;
  return gpu;
}

template <typename Record>
const CUpti_Activity& AsActivity(const Record& record) {
  return reinterpret_cast<const CUpti_Activity&>(record);
}

}  // namespace testing
}  // namespace neuronprof

#endif  // NEURONPROF_TESTS_COLLECTORS_CUPTI_TEST_GPU_H_
