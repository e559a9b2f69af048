#include "src/collectors/device/clock_fit.h"

#include <cmath>

namespace neuronprof {
namespace collectors {

DeviceClockFit::DeviceClockFit(const std::vector<std::pair<uint64_t, int64_t>>& pairs) {
  if (pairs.empty()) return;  // Device times are already host epoch times.
  const long double n = static_cast<long double>(pairs.size());
  // Means via differences from the first pair: sums of raw epoch values
  // would round away the nanoseconds.
  const uint64_t device0 = pairs.front().first;
  const int64_t host0 = pairs.front().second;
  long double device_sum = 0, host_sum = 0;
  for (const auto& [device_ns, host_ns] : pairs) {
    device_sum += static_cast<long double>(static_cast<int64_t>(device_ns - device0));
    host_sum += static_cast<long double>(host_ns - host0);
  }
  const long double device_rel_mean = device_sum / n;
  const long double host_rel_mean = host_sum / n;
  device_mean_ = static_cast<long double>(device0) + device_rel_mean;
  host_mean_ = static_cast<long double>(host0) + host_rel_mean;
  if (pairs.size() < 2) return;
  long double sxx = 0, sxy = 0;
  for (const auto& [device_ns, host_ns] : pairs) {
    const long double x =
        static_cast<long double>(static_cast<int64_t>(device_ns - device0)) - device_rel_mean;
    const long double y = static_cast<long double>(host_ns - host0) - host_rel_mean;
    sxx += x * x;
    sxy += x * y;
  }
  if (sxx <= 0) {
    warning_ =
        "all clock sync pairs have the same device time; used their "
        "mean offset and no drift correction";
    return;
  }
  const long double slope = sxy / sxx;
  // A real clock runs forward at nearly the host's rate; anything else is a
  // plug-in bug, and the drift fit would scatter every event.
  if (!(slope > 0.5L && slope < 2.0L)) {
    warning_ = "the clock sync pairs give a device clock rate of " +
               std::to_string(static_cast<double>(slope)) +
               " host ns per device ns; used their mean offset and no drift "
               "correction";
    return;
  }
  slope_ = slope;
}

int64_t DeviceClockFit::ToHostEpochNs(uint64_t device_ns) const {
  // Whole ns of the host mean plus a rounded small remainder: long double
  // holds uint64 exactly, but rounding one big sum would be needlessly lossy.
  const long double host_whole = std::floor(host_mean_);
  const long double delta =
      slope_ * (static_cast<long double>(device_ns) - device_mean_) + (host_mean_ - host_whole);
  return static_cast<int64_t>(host_whole) + static_cast<int64_t>(std::llround(delta));
}

}  // namespace collectors
}  // namespace neuronprof
