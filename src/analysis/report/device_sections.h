// `neuronprof summary`'s device sections: the kernel and copy tables,
// utilisation against peaks (MFU, roofline per op) and the
// recommendations, as text; the kernel table as CSV.
#ifndef NEURONPROF_SRC_ANALYSIS_REPORT_DEVICE_SECTIONS_H_
#define NEURONPROF_SRC_ANALYSIS_REPORT_DEVICE_SECTIONS_H_

#include <cstddef>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "src/analysis/devices/device_peaks.h"
#include "src/analysis/devices/kernel_table.h"
#include "src/analysis/devices/recommendations.h"
#include "src/analysis/devices/roofline.h"
#include "src/analysis/ops/op_table.h"
#include "src/analysis/text/report_table.h"

namespace neuronprof {
namespace analysis {

void AppendKernelTable(const KernelTable& kernels, const DeviceEvents& device, size_t top,
                       fmt::memory_buffer& out);
void AppendRoofline(const Roofline& roofline, const OpTable& table, const DevicePeaks& peaks,
                    size_t top, fmt::memory_buffer& out);
void AppendRecommendations(const std::vector<Recommendation>& recommendations,
                           fmt::memory_buffer& out);

// Kernel rows then copy/set rows; times in microseconds. "kernels".
ReportTable KernelReportTable(const KernelTable& kernels);
std::string FormatKernelCsv(const KernelTable& kernels);  // its CSV

}  // namespace analysis
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_ANALYSIS_REPORT_DEVICE_SECTIONS_H_
