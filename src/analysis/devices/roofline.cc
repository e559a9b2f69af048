#include "src/analysis/devices/roofline.h"

#include <algorithm>
#include <map>

#include "src/xplane/saturating.h"

namespace neuronprof {
namespace analysis {
namespace {

// `achieved` FLOP/s of `flops` in `dtype` moving `bytes` (<= 0: unknown).
RooflinePoint Place(double achieved, int64_t flops, int64_t bytes, DType dtype,
                    const DevicePeak& peak) {
  RooflinePoint point;
  point.achieved = achieved;
  point.peak_flops = peak.FlopsFor(dtype);
  point.attainable = point.peak_flops;
  if (bytes > 0) {
    point.intensity = static_cast<double>(flops) / static_cast<double>(bytes);
    if (peak.bytes_per_s > 0) {
      point.bound_known = true;
      const double memory_roof = point.intensity * peak.bytes_per_s;
      point.memory_bound = memory_roof < point.peak_flops;
      point.attainable = std::min(point.peak_flops, memory_roof);
    }
  }
  return point;
}

RooflinePoint Place(const OpTableRow& row, size_t index, const DevicePeak& peak) {
  RooflinePoint point = Place(row.device_ps > 0 ? row.DeviceFlopsPerSecond() : row.FlopsPerSecond(),
                              row.flops, row.bytes, row.matrix_dtype, peak);
  point.row = index;
  point.plane = row.device_plane;
  return point;
}

// Reported FLOPs per device plane, and per (marker, plane).
struct ReportedFlops {
  std::map<int, int64_t> planes;
  std::map<std::pair<std::string_view, int>, MarkerRoofline> markers;
};

ReportedFlops SumReportedFlops(const DeviceEvents& device) {
  ReportedFlops sums;
  for (const DeviceOpEvent& event : device.events) {
    if (event.flops <= 0) continue;
    sums.planes[event.plane] = SaturatingAdd(sums.planes[event.plane], event.flops);
    if (event.marker < 0) continue;
    MarkerRoofline& marker = sums.markers[{event.marker_name, event.plane}];
    marker.flops = SaturatingAdd(marker.flops, event.flops);
    if (event.bytes > 0) marker.bytes = SaturatingAdd(marker.bytes, event.bytes);
    marker.device_ps = SaturatingAdd(marker.device_ps, event.duration_ps);
  }
  return sums;
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

Roofline BuildRoofline(const OpTable& table, const DevicePeaks& peaks, int64_t wall_ps,
                       const DeviceEvents* device) {
  Roofline result;
  result.wall_ps = wall_ps;
  const ReportedFlops reported = device ? SumReportedFlops(*device) : ReportedFlops{};
  // FLOPs per device plane (-1: CPU) and, within it, per dtype.
  std::map<int, std::map<DType, int64_t>> flops;
  for (const auto& [plane, count] : reported.planes) flops[plane][DType::kNone] = count;
  for (size_t i = 0; i < table.rows.size(); ++i) {
    const OpTableRow& row = table.rows[i];
    if (row.flops <= 0) continue;
    const DevicePeak& peak = PeakOf(row, peaks);
    const int plane = peaks.planes.count(row.device_plane) ? row.device_plane : -1;
    if (!reported.planes.count(plane)) {
      flops[plane][row.matrix_dtype] = SaturatingAdd(flops[plane][row.matrix_dtype], row.flops);
    }
    if (peak.known && RowTimePs(row) > 0) result.ops.push_back(Place(row, i, peak));
  }
  auto add = [&](int plane) {
    const DevicePeak& peak = PeakAt(peaks, plane);
    DeviceRoofline device;
    device.plane = plane;
    device.reported = reported.planes.count(plane) > 0;
    device.flops_known = !flops[plane].empty();
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
  for (const auto& [key, sums] : reported.markers) {
    const DevicePeak& peak = PeakAt(peaks, key.second);
    if (!peak.known || sums.device_ps <= 0) continue;
    MarkerRoofline marker = sums;
    marker.marker = std::string(key.first);
    const double achieved = static_cast<double>(sums.flops) / (sums.device_ps * 1e-12);
    marker.point = Place(achieved, sums.flops, sums.bytes, DType::kNone, peak);
    marker.point.plane = key.second;
    result.markers.push_back(std::move(marker));
  }
  return result;
}

}  // namespace analysis
}  // namespace neuronprof
