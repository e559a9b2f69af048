// Roofline against a peak: MFU per device (model FLOPs / (time x peak))
// and each op's roofline position (arithmetic intensity = FLOPs / bytes,
// attainable = min(peak, intensity x bandwidth), compute- or memory-bound).
// FLOPs a device runtime reports on its events (DeviceEvent::flops) are
// measured, not modelled: on a device plane with any, they are the plane's
// FLOPs for MFU (the op rows' formula FLOPs there are not added: the same
// work counted twice), and each user marker that launched them gets a
// roofline point of its own.
#ifndef NEURONPROF_SRC_ANALYSIS_DEVICES_ROOFLINE_H_
#define NEURONPROF_SRC_ANALYSIS_DEVICES_ROOFLINE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "src/analysis/devices/device_peaks.h"
#include "src/analysis/ops/device_attribution.h"
#include "src/analysis/ops/op_table.h"

namespace neuronprof {
namespace analysis {

// A device plane's peak; the CPU's for -1 (or a plane without one).
const DevicePeak& PeakAt(const DevicePeaks& peaks, int plane);
// The device an op table row ran on: the plane of most of its device time,
// else the CPU.
const DevicePeak& PeakOf(const OpTableRow& row, const DevicePeaks& peaks);
// What the row's FLOP/s are measured against: device time when it has
// some, else its total host time.
int64_t RowTimePs(const OpTableRow& row);

struct RooflinePoint {
  size_t row = 0;             // index into OpTable::rows
  int plane = -1;             // PeakAt's argument
  double achieved = 0;        // FLOP/s over RowTimePs
  double intensity = 0;       // FLOPs per byte; 0 when bytes unknown
  double peak_flops = 0;      // for the row's dtype
  double attainable = 0;      // min(peak, intensity x bandwidth); peak without bandwidth
  bool bound_known = false;   // bandwidth and bytes known
  bool memory_bound = false;  // intensity x bandwidth < peak
  double Efficiency() const { return attainable > 0 ? achieved / attainable : 0; }
};

// The device work one user marker launched on one plane, with the FLOPs
// the runtime reported (DeviceOpEvent::marker_name).
struct MarkerRoofline {
  std::string marker;
  int64_t flops = 0, bytes = 0, device_ps = 0;  // of the events with FLOPs
  RooflinePoint point;                          // point.row is unused
};

struct DeviceRoofline {
  int plane = -1;         // PeakAt's argument
  bool reported = false;  // flops are the runtime's, not the op rows'
  int64_t flops = 0;      // FLOPs of the rows that ran there, else reported
  // False where no op with a known cost ran and the runtime reported none:
  // flops and mfu are unknown there, not zero.
  bool flops_known = false;
  DType dtype = DType::kNone;  // the dtype holding most of them
  double mfu = 0;              // flops / (wall x peak for dtype); 0 when no peak
};

struct Roofline {
  int64_t wall_ps = 0;                  // steps' time, else the span of the ops
  std::vector<DeviceRoofline> devices;  // the CPU first, then device planes
  std::vector<RooflinePoint> ops;       // rows with FLOPs and a known peak, table order
  std::vector<MarkerRoofline> markers;  // by marker name, then plane; known peaks only
};

// `device`: the device events, for the FLOPs their runtime reported.
Roofline BuildRoofline(const OpTable& table, const DevicePeaks& peaks, int64_t wall_ps,
                       const DeviceEvents* device = nullptr);

}  // namespace analysis
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_ANALYSIS_DEVICES_ROOFLINE_H_
