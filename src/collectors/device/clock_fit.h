// Maps a device runtime's clock onto the host epoch clock from pairs of
// simultaneous readings: none = identity, one = offset, more = a
// least-squares line (offset and drift).
#ifndef NEURONPROF_SRC_COLLECTORS_DEVICE_CLOCK_FIT_H_
#define NEURONPROF_SRC_COLLECTORS_DEVICE_CLOCK_FIT_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace neuronprof {
namespace collectors {

class DeviceClockFit {
 public:
  // `pairs` holds (device_ns, host_epoch_ns) readings.
  explicit DeviceClockFit(const std::vector<std::pair<uint64_t, int64_t>>& pairs);

  int64_t ToHostEpochNs(uint64_t device_ns) const;
  // Host ns per device ns (1 unless two or more pairs say otherwise).
  double slope() const { return static_cast<double>(slope_); }
  // Non-empty when the pairs were unusable and a plain offset was used.
  const std::string& warning() const { return warning_; }

 private:
  // Centred on the mean reading so that epoch-sized values keep precision.
  long double device_mean_ = 0;
  long double host_mean_ = 0;
  long double slope_ = 1;
  std::string warning_;
};

}  // namespace collectors
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_COLLECTORS_DEVICE_CLOCK_FIT_H_
