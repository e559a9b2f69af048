#include "src/collectors/device/device_activity.h"

namespace neuronprof {
namespace collectors {

void DeviceActivityBuffer::AddClockSync(uint64_t device_ns, int64_t host_epoch_ns) {
  activity_.clock_pairs.emplace_back(device_ns, host_epoch_ns);
}

void DeviceActivityBuffer::AddEvent(const DeviceEvent& event) {
  OwnedDeviceEvent& owned = activity_.events.emplace_back();
  owned.kind = event.kind;
  owned.device_id = event.device_id;
  owned.queue_id = event.queue_id;
  owned.name = std::string(event.name);
  owned.start_ns = event.start_ns;
  owned.end_ns = event.end_ns;
  owned.correlation_id = event.correlation_id;
  owned.bytes = event.bytes;
  owned.flops = event.flops;
  owned.framework_op = std::string(event.framework_op);
  owned.details = std::string(event.details);
  if (event.stats == nullptr) return;
  owned.stats.reserve(event.num_stats);
  for (size_t i = 0; i < event.num_stats; ++i) {
    const TraceArg& arg = event.stats[i];
    OwnedStat& stat = owned.stats.emplace_back();
    stat.key = std::string(arg.key());
    switch (arg.kind()) {
      case TraceArg::Kind::kInt:
        stat.value = arg.int_value();
        break;
      case TraceArg::Kind::kUint:
        stat.value = static_cast<uint64_t>(arg.int_value());
        break;
      case TraceArg::Kind::kDouble:
        stat.value = arg.double_value();
        break;
      case TraceArg::Kind::kString:
        stat.value = std::string(arg.string_value());
        break;
    }
  }
}

void DeviceActivityBuffer::AddRuntimeCall(const RuntimeCall& call) {
  OwnedRuntimeCall& owned = activity_.runtime_calls.emplace_back();
  owned.thread_id = call.thread_id;
  owned.name = std::string(call.name);
  owned.start_ns = call.start_ns;
  owned.end_ns = call.end_ns;
  owned.host_epoch_clock = call.host_epoch_clock;
  owned.correlation_id = call.correlation_id;
}

void DeviceActivityBuffer::AddMemoryEvent(const DeviceMemoryEvent& event) {
  OwnedDeviceMemoryEvent& owned = activity_.memory_events.emplace_back();
  owned.kind = event.kind;
  owned.device_id = event.device_id;
  owned.pool = std::string(event.pool);
  owned.time_ns = event.time_ns;
  owned.host_epoch_clock = event.host_epoch_clock;
  owned.address = event.address;
  owned.bytes = event.bytes;
  owned.allocated_bytes = event.allocated_bytes;
  owned.reserved_bytes = event.reserved_bytes;
  owned.framework_op = std::string(event.framework_op);
}

void DeviceActivityBuffer::AddDropped(uint64_t count, std::string_view reason) {
  if (count == 0) return;
  activity_.dropped[reason.empty() ? std::string("no reason given") : std::string(reason)] += count;
}

void DeviceActivityBuffer::SetDeviceProperty(int device_id, std::string_view key,
                                             std::string_view value) {
  SetProperty(device_id, key, std::string(value));
}

void DeviceActivityBuffer::SetDeviceProperty(int device_id, std::string_view key, int64_t value) {
  SetProperty(device_id, key, value);
}

void DeviceActivityBuffer::SetProperty(int device_id, std::string_view key, DeviceProperty value) {
  auto& properties = activity_.properties[device_id];
  for (auto& [existing_key, existing_value] : properties) {
    if (existing_key == key) {
      existing_value = std::move(value);
      return;
    }
  }
  properties.emplace_back(std::string(key), std::move(value));
}

}  // namespace collectors
}  // namespace neuronprof
