// What a GPU can hold (per-SM limits) and the occupancy a kernel launch
// reaches on it. Pure arithmetic: no driver, testable anywhere.
#ifndef NEURONPROF_SRC_COLLECTORS_CUPTI_GPU_PROPERTIES_H_
#define NEURONPROF_SRC_COLLECTORS_CUPTI_GPU_PROPERTIES_H_

#include <cstdint>
#include <optional>
#include <string>

namespace neuronprof {
namespace cupti {

// One device's attributes as the CUDA driver reports them. Zero means
// unknown; occupancy needs every per-SM limit.
struct GpuProperties {
  std::string name;
  int compute_major = 0;
  int compute_minor = 0;
  int sm_count = 0;
  int max_threads_per_block = 0;
  int max_threads_per_sm = 0;
  int max_blocks_per_sm = 0;
  int regs_per_block = 0;
  int regs_per_sm = 0;
  int warp_size = 0;
  int64_t shared_memory_per_block = 0;
  int64_t shared_memory_per_block_optin = 0;
  int64_t shared_memory_per_sm = 0;
  int64_t reserved_shared_memory_per_block = 0;
  int clock_rate_khz = 0;
  int memory_clock_khz = 0;
  int memory_bus_width_bits = 0;
  int64_t memory_bytes = 0;

  bool HasOccupancyLimits() const;
  // Peak DRAM bandwidth in bytes/s (double data rate), 0 when unknown.
  int64_t MemoryBandwidthBytesPerSecond() const;
};

// The launch configuration CUPTI reports for one kernel.
struct KernelLaunch {
  int64_t grid_x = 1, grid_y = 1, grid_z = 1;
  int64_t block_x = 1, block_y = 1, block_z = 1;
  int registers_per_thread = 0;
  int64_t static_shared_memory = 0;
  int64_t dynamic_shared_memory = 0;
};

struct Occupancy {
  int active_blocks_per_sm = 0;  // Resident blocks one SM can hold.
  double theoretical_pct = 0;    // active_blocks * threads / max threads per SM.
  double blocks_per_sm = 0;      // Grid blocks / SM count (Kineto's "blocks per SM").
  // Theoretical occupancy, capped when the grid has too few blocks to fill
  // every SM (Kineto's "est. achieved occupancy %").
  double est_achieved_pct = 0;
};

// Empty when `gpu` lacks a limit or the launch cannot run on it.
std::optional<Occupancy> ComputeOccupancy(const GpuProperties& gpu, const KernelLaunch& launch);

}  // namespace cupti
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_COLLECTORS_CUPTI_GPU_PROPERTIES_H_
