// From numbers to a verdict: a short list of recommendations, each with the
// figure that triggered it. Thresholds are in recommendations.cc and
// docs/ANALYSIS.md.
#ifndef NEURONPROF_SRC_ANALYSIS_DEVICES_RECOMMENDATIONS_H_
#define NEURONPROF_SRC_ANALYSIS_DEVICES_RECOMMENDATIONS_H_

#include <string>
#include <vector>

#include "proto/xplane.pb.h"
#include "src/analysis/devices/device_peaks.h"
#include "src/analysis/devices/kernel_table.h"
#include "src/analysis/devices/roofline.h"
#include "src/analysis/ops/device_attribution.h"
#include "src/analysis/ops/op_table.h"
#include "src/analysis/ops/step_breakdown.h"

namespace neuronprof {
namespace analysis {

struct Recommendation {
  std::string id;        // "launch_bound", "host_bound", "low_roofline",
                         // "tensor_core_dims", "fp32_gemm", "cpu_blas_slow"
  std::string advice;    // what to try
  std::string evidence;  // the figure that triggered it
};

// Everything the rules read; all must outlive the call.
struct AnalysisView {
  const OpTable& table;
  const DeviceEvents& device;
  const std::vector<StepBreakdown>& steps;
  const DevicePeaks& peaks;
  const Roofline& roofline;
};

std::vector<Recommendation> Recommend(const AnalysisView& view);

}  // namespace analysis
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_ANALYSIS_DEVICES_RECOMMENDATIONS_H_
