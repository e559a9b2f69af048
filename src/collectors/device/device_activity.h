// What one device plug-in reported during Flush(), copied out of the
// caller's buffers: the sink the plug-in writes to, and the data it keeps.
#ifndef NEURONPROF_SRC_COLLECTORS_DEVICE_DEVICE_ACTIVITY_H_
#define NEURONPROF_SRC_COLLECTORS_DEVICE_DEVICE_ACTIVITY_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "neuronprof/device.h"

namespace neuronprof {
namespace collectors {

// A TraceArg whose strings are owned.
struct OwnedStat {
  std::string key;
  std::variant<int64_t, uint64_t, double, std::string> value;
};

struct OwnedDeviceEvent {
  DeviceEventKind kind = DeviceEventKind::kKernel;
  int device_id = 0;
  int64_t queue_id = 0;
  std::string name;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint64_t correlation_id = 0;
  int64_t bytes = -1;
  int64_t flops = -1;
  std::string framework_op;
  std::string details;
  std::vector<OwnedStat> stats;
};

struct OwnedRuntimeCall {
  int64_t thread_id = 0;
  std::string name;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  bool host_epoch_clock = false;
  uint64_t correlation_id = 0;
};

struct OwnedDeviceMemoryEvent {
  DeviceMemoryEvent::Kind kind = DeviceMemoryEvent::Kind::kAllocation;
  int device_id = 0;
  std::string pool;
  uint64_t time_ns = 0;
  bool host_epoch_clock = false;
  uint64_t address = 0;
  int64_t bytes = 0;
  int64_t allocated_bytes = -1;
  int64_t reserved_bytes = -1;
  std::string framework_op;
};

using DeviceProperty = std::variant<int64_t, std::string>;

struct DeviceActivity {
  std::vector<std::pair<uint64_t, int64_t>> clock_pairs;  // (device, host)
  std::vector<OwnedDeviceEvent> events;
  std::vector<OwnedRuntimeCall> runtime_calls;
  std::vector<OwnedDeviceMemoryEvent> memory_events;
  std::map<std::string, uint64_t> dropped;  // reason -> count
  // device id -> properties in the order first set; a later set replaces.
  std::map<int, std::vector<std::pair<std::string, DeviceProperty>>> properties;
};

// The sink handed to DeviceCollector::Flush(): copies everything it gets.
class DeviceActivityBuffer : public DeviceActivitySink {
 public:
  void AddClockSync(uint64_t device_ns, int64_t host_epoch_ns) override;
  void AddEvent(const DeviceEvent& event) override;
  void AddRuntimeCall(const RuntimeCall& call) override;
  void AddDropped(uint64_t count, std::string_view reason) override;
  void SetDeviceProperty(int device_id, std::string_view key, std::string_view value) override;
  void SetDeviceProperty(int device_id, std::string_view key, int64_t value) override;
  void AddMemoryEvent(const DeviceMemoryEvent& event) override;

  DeviceActivity& activity() { return activity_; }

 private:
  void SetProperty(int device_id, std::string_view key, DeviceProperty value);

  DeviceActivity activity_;
};

}  // namespace collectors
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_COLLECTORS_DEVICE_DEVICE_ACTIVITY_H_
