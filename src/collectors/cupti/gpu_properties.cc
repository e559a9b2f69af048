#include "src/collectors/cupti/gpu_properties.h"

#include <cuda_occupancy.h>

#include <algorithm>

namespace neuronprof {
namespace cupti {

bool GpuProperties::HasOccupancyLimits() const {
  return compute_major > 0 && sm_count > 0 && max_threads_per_block > 0 && max_threads_per_sm > 0 &&
         regs_per_block > 0 && regs_per_sm > 0 && warp_size > 0 && shared_memory_per_block > 0 &&
         shared_memory_per_sm > 0 && shared_memory_per_block_optin > 0;
}

int64_t GpuProperties::MemoryBandwidthBytesPerSecond() const {
  if (memory_clock_khz <= 0 || memory_bus_width_bits <= 0) return 0;
  // Two transfers per clock (DDR/HBM), bus width in bits.
  return int64_t{2} * memory_clock_khz * 1000 * memory_bus_width_bits / 8;
}

std::optional<Occupancy> ComputeOccupancy(const GpuProperties& gpu, const KernelLaunch& launch) {
  if (!gpu.HasOccupancyLimits()) return std::nullopt;
  const int64_t threads = launch.block_x * launch.block_y * launch.block_z;
  if (threads <= 0 || threads > gpu.max_threads_per_block) return std::nullopt;

  // NVIDIA's header-only occupancy calculator (cuda_occupancy.h), fed with
  // driver attributes instead of a live context.
  cudaOccDeviceProp device;
  device.computeMajor = gpu.compute_major;
  device.computeMinor = gpu.compute_minor;
  device.maxThreadsPerBlock = gpu.max_threads_per_block;
  device.maxThreadsPerMultiprocessor = gpu.max_threads_per_sm;
  device.regsPerBlock = gpu.regs_per_block;
  device.regsPerMultiprocessor = gpu.regs_per_sm;
  device.warpSize = gpu.warp_size;
  device.sharedMemPerBlock = static_cast<size_t>(gpu.shared_memory_per_block);
  device.sharedMemPerMultiprocessor = static_cast<size_t>(gpu.shared_memory_per_sm);
  device.numSms = gpu.sm_count;
  device.sharedMemPerBlockOptin = static_cast<size_t>(gpu.shared_memory_per_block_optin);
  device.reservedSharedMemPerBlock = static_cast<size_t>(gpu.reserved_shared_memory_per_block);

  cudaOccFuncAttributes function;
  function.maxThreadsPerBlock = gpu.max_threads_per_block;
  function.numRegs = launch.registers_per_thread;
  function.sharedSizeBytes = static_cast<size_t>(launch.static_shared_memory);
  function.partitionedGCConfig = PARTITIONED_GC_OFF;
  // Dynamic shared memory above the default per-block limit is only
  // possible after the kernel opted in, so model it as opted in.
  const bool opted_in = launch.dynamic_shared_memory > gpu.shared_memory_per_block;
  function.shmemLimitConfig = opted_in ? FUNC_SHMEM_LIMIT_OPTIN : FUNC_SHMEM_LIMIT_DEFAULT;
  function.maxDynamicSharedSizeBytes = opted_in ? device.sharedMemPerBlockOptin : 0;

  cudaOccDeviceState state;
  cudaOccResult result;
  if (cudaOccMaxActiveBlocksPerMultiprocessor(
          &result, &device, &function, &state, static_cast<int>(threads),
          static_cast<size_t>(launch.dynamic_shared_memory)) != CUDA_OCC_SUCCESS) {
    return std::nullopt;
  }
  Occupancy occupancy;
  occupancy.active_blocks_per_sm = result.activeBlocksPerMultiprocessor;
  occupancy.theoretical_pct =
      100.0 * result.activeBlocksPerMultiprocessor * threads / gpu.max_threads_per_sm;
  const double grid_blocks = static_cast<double>(launch.grid_x) * launch.grid_y * launch.grid_z;
  occupancy.blocks_per_sm = grid_blocks / gpu.sm_count;
  const double resident =
      std::min<double>(occupancy.blocks_per_sm, result.activeBlocksPerMultiprocessor);
  occupancy.est_achieved_pct = 100.0 * resident * threads / gpu.max_threads_per_sm;
  return occupancy;
}

}  // namespace cupti
}  // namespace neuronprof
