#include "src/analysis/utilisation.h"

#include <algorithm>
#include <map>

#include "src/analysis/saturating.h"

namespace neuronprof {
namespace analysis {
namespace {

RooflinePoint Place(const OpTableRow& row, size_t index, const DevicePeak& peak) {
  RooflinePoint point;
  point.row = index;
  point.plane = row.device_plane;
  point.achieved = row.device_ps > 0 ? row.DeviceFlopsPerSecond() : row.FlopsPerSecond();
  point.peak_flops = peak.FlopsFor(row.matrix_dtype);
  point.attainable = point.peak_flops;
  if (row.bytes > 0) {
    point.intensity = static_cast<double>(row.flops) / static_cast<double>(row.bytes);
    if (peak.bytes_per_s > 0) {
      point.bound_known = true;
      const double memory_roof = point.intensity * peak.bytes_per_s;
      point.memory_bound = memory_roof < point.peak_flops;
      point.attainable = std::min(point.peak_flops, memory_roof);
    }
  }
  return point;
}

}  // namespace

const DevicePeak& PeakAt(const DevicePeaks& peaks, int plane) {
  auto it = peaks.planes.find(plane);
  return it != peaks.planes.end() ? it->second : peaks.cpu;
}

const DevicePeak& PeakOf(const OpTableRow& row, const DevicePeaks& peaks) {
  return PeakAt(peaks, row.device_plane);
}

int64_t RowTimePs(const OpTableRow& row) {
  return row.device_ps > 0 ? row.device_ps : row.total_ps;
}

Utilisation BuildUtilisation(const OpTable& table, const DevicePeaks& peaks, int64_t wall_ps) {
  Utilisation result;
  result.wall_ps = wall_ps;
  // FLOPs per device plane (-1: CPU) and, within it, per dtype.
  std::map<int, std::map<DType, int64_t>> flops;
  for (size_t i = 0; i < table.rows.size(); ++i) {
    const OpTableRow& row = table.rows[i];
    if (row.flops <= 0) continue;
    const DevicePeak& peak = PeakOf(row, peaks);
    const int plane = peaks.planes.count(row.device_plane) ? row.device_plane : -1;
    flops[plane][row.matrix_dtype] = SaturatingAdd(flops[plane][row.matrix_dtype], row.flops);
    if (peak.known && RowTimePs(row) > 0) result.ops.push_back(Place(row, i, peak));
  }
  auto add = [&](int plane) {
    const DevicePeak& peak = PeakAt(peaks, plane);
    DeviceUtilisation device;
    device.plane = plane;
    int64_t most = -1;
    for (const auto& [dtype, count] : flops[plane]) {
      device.flops = SaturatingAdd(device.flops, count);
      if (count > most) {
        most = count;
        device.dtype = dtype;
      }
    }
    const double peak_flops = peak.FlopsFor(device.dtype);
    if (peak.known && peak_flops > 0 && wall_ps > 0) {
      device.mfu = static_cast<double>(device.flops) / (wall_ps * 1e-12 * peak_flops);
    }
    result.devices.push_back(device);
  };
  add(-1);
  for (const auto& [plane, peak] : peaks.planes) add(plane);
  return result;
}

}  // namespace analysis
}  // namespace neuronprof
