// The kernel table (per kernel name and launch configuration: calls,
// device time, grid/block, registers, shared memory, occupancy, a
// tensor-core flag) and the copy/set rows (bytes, achieved bandwidth), as
// the PyTorch profiler plugin's kernel view and PyProf show them.
#ifndef NEURONPROF_SRC_ANALYSIS_DEVICES_KERNEL_TABLE_H_
#define NEURONPROF_SRC_ANALYSIS_DEVICES_KERNEL_TABLE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/analysis/ops/device_attribution.h"
#include "src/xplane/device_details.h"

namespace neuronprof {
namespace analysis {

// All launches of one kernel name with one kernel_details text.
struct KernelRow {
  std::string name;
  int64_t calls = 0;
  int64_t total_ps = 0, min_ps = 0, max_ps = 0;
  xplane::KernelLaunch launch;  // grid, block, registers, shared memory, theoretical occupancy
  // Estimated achieved occupancy, weighted by duration; absent when the
  // events carry none.
  std::optional<double> achieved_occupancy_pct;
  bool tensor_cores = false;
  int64_t MeanPs() const { return calls > 0 ? total_ps / calls : 0; }
};

// Copies and sets, per name ("MemcpyHtoD", "Memset").
struct TransferRow {
  std::string name;
  std::string kind;  // "memcpy" / "memset"
  int64_t calls = 0, total_ps = 0;
  int64_t bytes = 0;
  int64_t unknown_bytes_calls = 0;  // calls whose size was not recorded
  // bytes / time of the calls with a known size; 0 when none.
  int64_t known_ps = 0;
  double BytesPerSecond() const;
};

struct KernelTable {
  std::vector<KernelRow> kernels;      // by total time, longest first
  std::vector<TransferRow> transfers;  // by total time, longest first
  int64_t kernel_ps = 0, tensor_core_ps = 0;
};

// The PyTorch profiler plugin's rule (after PyProf): a kernel uses tensor
// cores when its name holds one of their instruction or library markers
// ("884", "1688", "16816", "hmma", "imma", "xmma", "wgmma", "tensorop",
// cuDNN's tensor-core conv kernels), case-insensitive.
bool UsesTensorCores(std::string_view kernel_name);

KernelTable BuildKernelTable(const DeviceEvents& device);

}  // namespace analysis
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_ANALYSIS_DEVICES_KERNEL_TABLE_H_
