// Peak FLOP/s and memory bandwidth of a capture's devices, for MFU and the
// roofline: NVIDIA GPUs from a table keyed by compute capability (per-SM
// rates scaled by the plane's SM count and clock), device plug-ins from
// the peaks their planes report, the CPU from what the user gives.
// Figures and sources: docs/ANALYSIS.md.
#ifndef NEURONPROF_SRC_ANALYSIS_DEVICES_DEVICE_PEAKS_H_
#define NEURONPROF_SRC_ANALYSIS_DEVICES_DEVICE_PEAKS_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "proto/xplane.pb.h"
#include "src/analysis/ops/op_inputs.h"
#include "src/xplane/xplane_visitor.h"

namespace neuronprof {
namespace analysis {

struct DevicePeak {
  std::string device;  // "GPU:0 NVIDIA H100 (cc 9.0)", "CPU"
  bool known = false;  // false: "no peak known for <device>"
  // Dense FLOP/s: fp16/bf16 is the tensor-core rate where there are
  // tensor cores (else equal to fp32).
  double fp32_flops = 0, fp16_flops = 0, fp64_flops = 0;
  double bytes_per_s = 0;  // 0: unknown (no memory roofline)
  bool tensor_cores = false;
  std::string source;  // where the figures came from
  // The peak that applies to work in `dtype`.
  double FlopsFor(DType dtype) const;
};

// One NVIDIA architecture: dense FLOPs per SM per clock (an FMA is 2) and
// a reference part for planes that do not report SMs, clock or bandwidth.
struct NvidiaArch {
  int major, minor;
  double fp32_per_sm_clock, fp16_tensor_per_sm_clock, fp64_per_sm_clock;
  const char* reference;  // the part the fallback figures describe
  int reference_sms;
  double reference_mhz, reference_gb_per_s;
};
// nullopt for architectures the table does not hold.
std::optional<NvidiaArch> FindNvidiaArch(int major, int minor);

struct PeakOptions {
  double cpu_peak_gflops = 0;  // 0: no CPU peak known
  double cpu_peak_gb_per_s = 0;
};

struct DevicePeaks {
  std::map<int, DevicePeak> planes;  // by plane index, every device plane
  DevicePeak cpu;
};

DevicePeak PlanePeak(const xplane::PlaneVisitor& plane);
DevicePeaks FindDevicePeaks(const tensorflow::profiler::XSpace& space,
                            const std::vector<int>& device_planes, const PeakOptions& options);

}  // namespace analysis
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_ANALYSIS_DEVICES_DEVICE_PEAKS_H_
