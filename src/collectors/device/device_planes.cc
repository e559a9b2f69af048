#include "src/collectors/device/device_planes.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "src/collectors/device/clock_fit.h"
#include "src/xplane/absl_view.h"
#include "src/xplane/schema.h"
#include "src/xplane/xplane_builder.h"
#include "src/xplane/xplane_visitor.h"

namespace neuronprof {
namespace collectors {
namespace {

using tensorflow::profiler::XEvent;
using tensorflow::profiler::XLine;
using tensorflow::profiler::XPlane;
using tensorflow::profiler::XSpace;
using tensorflow::profiler::XStat;

constexpr char kOutsideWindow[] = "outside the capture window";
constexpr char kEndsBeforeStart[] = "the event ends before it starts";
constexpr char kNegativeDevice[] = "negative device_id";

// A device event or runtime call with its host epoch times.
template <typename Record>
struct Mapped {
  const Record* record;
  int64_t start_ns;
  int64_t end_ns;
};

const char* KindName(DeviceEventKind kind) {
  switch (kind) {
    case DeviceEventKind::kKernel:
      return "kernel";
    case DeviceEventKind::kMemcpy:
      return "memcpy";
    case DeviceEventKind::kMemset:
      return "memset";
    case DeviceEventKind::kOther:
      break;
  }
  return "other";
}

const char* DetailsStatName(DeviceEventKind kind) {
  switch (kind) {
    case DeviceEventKind::kKernel:
      return xplane::kKernelDetailsStat;
    case DeviceEventKind::kMemcpy:
      return xplane::kMemcpyDetailsStat;
    case DeviceEventKind::kMemset:
      return xplane::kMemsetDetailsStat;
    case DeviceEventKind::kOther:
      break;
  }
  return xplane::kDeviceDetailsStat;
}

// "Stream #3(Kernel,Memcpy)": the form TSL gives GPU stream lines.
std::string QueueLineName(int64_t queue_id, const std::vector<Mapped<OwnedDeviceEvent>>& events) {
  bool seen[4] = {false, false, false, false};
  for (const auto& event : events) seen[static_cast<int>(event.record->kind)] = true;
  static constexpr const char* kLabels[4] = {"Kernel", "Memcpy", "Memset", "Other"};
  std::vector<const char*> kinds;
  for (int i = 0; i < 4; ++i) {
    if (seen[i]) kinds.push_back(kLabels[i]);
  }
  return absl::StrCat("Stream #", queue_id, "(", absl::StrJoin(kinds, ","), ")");
}

std::string ThreadName(int64_t thread_id) {
  std::ifstream comm(absl::StrCat("/proc/self/task/", thread_id, "/comm"));
  std::string name;
  if (comm && std::getline(comm, name) && !name.empty()) return name;
  return absl::StrCat("thread ", thread_id);
}

void AddUserStat(xplane::XPlaneBuilder& plane, XEvent* event, const OwnedStat& stat) {
  std::visit(
      [&](const auto& value) {
        using T = std::decay_t<decltype(value)>;
        if constexpr (std::is_same_v<T, std::string>) {
          plane.AddStat(event, stat.key, std::string_view(value));
        } else {
          plane.AddStat(event, stat.key, value);
        }
      },
      stat.value);
}

// Plane ids pick the trace viewer's process: GPU planes use the device
// ordinal, as TSL does; custom planes count up so that two device types
// never share a process.
XPlane* FindOrAddDevicePlane(XSpace* space, std::string_view device_type, int device_id) {
  const std::string name = DevicePlaneName(device_type, device_id);
  if (XPlane* existing = const_cast<XPlane*>(xplane::FindPlane(*space, name))) {
    return existing;
  }
  int64_t custom_planes = 0;
  for (const XPlane& plane : space->planes()) {
    custom_planes += absl::StartsWith(plane.name(), xplane::kCustomDevicePlanePrefix);
  }
  XPlane* plane = xplane::FindOrAddPlane(space, name);
  plane->set_id(device_type == "GPU" ? device_id : custom_planes);
  return plane;
}

void AddDevicePlane(std::string_view device_type, int device_id,
                    std::map<int64_t, std::vector<Mapped<OwnedDeviceEvent>>>& queues,
                    const DeviceActivity& activity, int64_t profile_start_ns, XSpace* space) {
  xplane::XPlaneBuilder plane(FindOrAddDevicePlane(space, device_type, device_id));
  plane.AddPlaneStat(xplane::kDeviceIdStat, static_cast<int64_t>(device_id));
  plane.AddPlaneStat(xplane::kDeviceTypeStat, device_type);
  auto properties = activity.properties.find(device_id);
  if (properties != activity.properties.end()) {
    for (const auto& [key, value] : properties->second) {
      if (const auto* number = std::get_if<int64_t>(&value)) {
        plane.AddPlaneStat(key, *number);
      } else {
        plane.AddPlaneStat(key, std::get<std::string>(value));
      }
    }
  }
  for (auto& [queue_id, events] : queues) {
    // Parents before children: earlier start first, longer first on ties.
    std::sort(events.begin(), events.end(), [](const auto& a, const auto& b) {
      if (a.start_ns != b.start_ns) return a.start_ns < b.start_ns;
      return a.end_ns > b.end_ns;
    });
    const int64_t line_start = events.front().start_ns;
    XLine* line =
        plane.AddLine(queue_id, QueueLineName(queue_id, events), line_start - profile_start_ns);
    int64_t line_end = line_start;
    for (const auto& mapped : events) {
      const OwnedDeviceEvent& record = *mapped.record;
      XEvent* event = plane.AddEvent(line, plane.EventMetadataId(record.name),
                                     (mapped.start_ns - line_start) * 1000,
                                     (mapped.end_ns - mapped.start_ns) * 1000);
      line_end = std::max(line_end, mapped.end_ns);
      plane.AddStat(event, xplane::kDeviceIdStat, static_cast<int64_t>(record.device_id));
      plane.AddStat(event, xplane::kStreamIdStat, record.queue_id);
      if (record.correlation_id != 0) {
        plane.AddStat(event, xplane::kCorrelationIdStat, record.correlation_id);
      }
      plane.AddStat(event, xplane::kDeviceEventKindStat, std::string_view(KindName(record.kind)));
      if (!record.details.empty()) {
        plane.AddStat(event, DetailsStatName(record.kind), std::string_view(record.details));
      }
      if (record.bytes >= 0) plane.AddStat(event, xplane::kBytesStat, record.bytes);
      if (record.flops >= 0) plane.AddStat(event, xplane::kFlopsStat, record.flops);
      if (!record.framework_op.empty()) {
        plane.AddStat(event, xplane::kTfOpStat, std::string_view(record.framework_op));
      }
      for (const OwnedStat& stat : record.stats) AddUserStat(plane, event, stat);
    }
    line->set_duration_ps((line_end - line_start) * 1000);
  }
}

// Runtime calls get their own host plane, one line per calling thread named
// like that thread's /host:CPU line. Its name starts with "/host:CPU", the
// prefix xprof's trace viewer takes host planes by (it shows neither
// "/host:CUPTI" nor other host planes), and ends in "-runtime", which tells
// exporters these are launch calls.
void AddRuntimeCalls(std::string_view device_type,
                     std::map<int64_t, std::vector<Mapped<OwnedRuntimeCall>>>& by_thread,
                     int64_t profile_start_ns, XSpace* space) {
  const XPlane* host = xplane::FindPlane(*space, xplane::kHostPlaneName);
  xplane::XPlaneBuilder plane(xplane::FindOrAddPlane(space, RuntimePlaneName(device_type)));
  for (auto& [thread_id, calls] : by_thread) {
    std::sort(calls.begin(), calls.end(), [](const auto& a, const auto& b) {
      if (a.start_ns != b.start_ns) return a.start_ns < b.start_ns;
      return a.end_ns > b.end_ns;
    });
    std::string name;
    if (host != nullptr) {
      const int64_t id = thread_id;  // C++17 lambdas cannot capture bindings.
      xplane::PlaneVisitor(*host).ForEachLine([&](const xplane::LineVisitor& line) {
        if (line.Id() == id) name = std::string(line.Name());
      });
    }
    if (name.empty()) name = ThreadName(thread_id);
    const int64_t line_start = calls.front().start_ns;
    XLine* line = plane.AddLine(thread_id, name, line_start - profile_start_ns);
    int64_t line_end = line_start;
    for (const auto& mapped : calls) {
      XEvent* event = plane.AddEvent(line, plane.EventMetadataId(mapped.record->name),
                                     (mapped.start_ns - line_start) * 1000,
                                     (mapped.end_ns - mapped.start_ns) * 1000);
      line_end = std::max(line_end, mapped.end_ns);
      if (mapped.record->correlation_id != 0) {
        plane.AddStat(event, xplane::kCorrelationIdStat, mapped.record->correlation_id);
      }
    }
    line->set_duration_ps((line_end - line_start) * 1000);
  }
}

std::string AllocatorName(std::string_view device_type, const OwnedDeviceMemoryEvent& event) {
  std::string name = absl::StrCat(xplane::AbslView(device_type), ":", event.device_id);
  if (!event.pool.empty()) absl::StrAppend(&name, "/", event.pool);
  return name;
}

const char* MemoryEventName(DeviceMemoryEvent::Kind kind) {
  switch (kind) {
    case DeviceMemoryEvent::Kind::kAllocation:
      return xplane::kMemoryAllocationEvent;
    case DeviceMemoryEvent::Kind::kFree:
      return xplane::kMemoryDeallocationEvent;
    case DeviceMemoryEvent::Kind::kUsageSample:
      break;
  }
  return xplane::kMemoryUsageEvent;
}

// Device memory goes on the "/host:CPU" plane, one line per pool, where
// xprof's memory_profile and the exporters find libtorch's memory too.
void AddDeviceMemory(std::string_view device_type,
                     std::map<std::string, std::vector<Mapped<OwnedDeviceMemoryEvent>>>& pools,
                     int64_t profile_start_ns, XSpace* space) {
  xplane::XPlaneBuilder plane(xplane::FindOrAddPlane(space, xplane::kHostPlaneName));
  int64_t line_id = xplane::kMemoryLineIdBase;
  for (XLine& existing : *plane.plane()->mutable_lines()) {
    line_id = std::max(line_id, existing.id() + 1);
  }
  for (auto& [allocator, events] : pools) {
    std::stable_sort(events.begin(), events.end(),
                     [](const auto& a, const auto& b) { return a.start_ns < b.start_ns; });
    const int64_t line_start = events.front().start_ns;
    XLine* line =
        plane.AddLine(line_id++, absl::StrCat(allocator, " memory"), line_start - profile_start_ns);
    for (const auto& mapped : events) {
      const OwnedDeviceMemoryEvent& record = *mapped.record;
      XEvent* event = plane.AddEvent(line, plane.EventMetadataId(MemoryEventName(record.kind)),
                                     (mapped.start_ns - line_start) * 1000, 0);
      plane.AddStat(event, xplane::kAllocatorNameStat, std::string_view(allocator));
      plane.AddStat(event, xplane::kMemoryDeviceTypeStat, device_type);
      plane.AddStat(event, xplane::kDeviceIdStat, static_cast<int64_t>(record.device_id));
      if (record.kind == DeviceMemoryEvent::Kind::kUsageSample) {
        plane.AddStat(event, xplane::kBytesAllocatedStat, record.bytes);
      } else {
        plane.AddStat(event, xplane::kAddressStat, static_cast<int64_t>(record.address));
        plane.AddStat(event, xplane::kRequestedBytesStat, record.bytes);
        plane.AddStat(event, xplane::kAllocationBytesStat, record.bytes);
        if (record.allocated_bytes >= 0) {
          plane.AddStat(event, xplane::kBytesAllocatedStat, record.allocated_bytes);
        }
      }
      if (record.reserved_bytes >= 0) {
        plane.AddStat(event, xplane::kPoolReservedStat, record.reserved_bytes);
        const int64_t in_use = record.kind == DeviceMemoryEvent::Kind::kUsageSample
                                   ? record.bytes
                                   : record.allocated_bytes;
        if (in_use >= 0 && in_use <= record.reserved_bytes) {
          plane.AddStat(event, xplane::kBytesAvailableStat, record.reserved_bytes - in_use);
        }
      }
      if (!record.framework_op.empty()) {
        plane.AddStat(event, xplane::kTfOpStat, std::string_view(record.framework_op));
      }
    }
    line->set_duration_ps((events.back().start_ns - line_start) * 1000);
  }
}

}  // namespace

std::string RuntimePlaneName(std::string_view device_type) {
  return absl::StrCat(xplane::kHostPlaneName, "-", xplane::AbslView(device_type),
                      xplane::kRuntimePlaneSuffix);
}

std::string DevicePlaneName(std::string_view device_type, int device_id) {
  if (device_type == "GPU") return absl::StrCat(xplane::kGpuPlanePrefix, device_id);
  return absl::StrCat(xplane::kCustomDevicePlanePrefix, xplane::AbslView(device_type), ":",
                      device_id);
}

void AddDeviceActivity(std::string_view collector_name, std::string_view device_type,
                       const DeviceActivity& activity, XSpace* space, CollectStats* stats) {
  const int64_t window_start = xplane::ProfileStartEpochNs(*space);
  const int64_t window_stop = xplane::ProfileStopEpochNs(*space);
  const DeviceClockFit clock(activity.clock_pairs);
  if (!clock.warning().empty()) {
    xplane::AddWarning(
        space, absl::StrCat("neuronprof: device plug-in '", xplane::AbslView(collector_name),
                            "': ", clock.warning()));
  }
  std::map<std::string, uint64_t> our_drops;
  auto keep = [&](uint64_t start, uint64_t end, int64_t host_start, int64_t host_end) {
    if (end < start) {
      ++our_drops[kEndsBeforeStart];
      return false;
    }
    if (host_start < window_start || (window_stop > 0 && host_end > window_stop)) {
      ++our_drops[kOutsideWindow];
      return false;
    }
    return true;
  };

  std::map<int, std::map<int64_t, std::vector<Mapped<OwnedDeviceEvent>>>> devices;
  for (const OwnedDeviceEvent& event : activity.events) {
    if (event.device_id < 0) {
      ++our_drops[kNegativeDevice];
      continue;
    }
    const int64_t start = clock.ToHostEpochNs(event.start_ns);
    const int64_t end = clock.ToHostEpochNs(event.end_ns);
    if (!keep(event.start_ns, event.end_ns, start, end)) continue;
    devices[event.device_id][event.queue_id].push_back({&event, start, end});
  }
  std::map<int64_t, std::vector<Mapped<OwnedRuntimeCall>>> threads;
  for (const OwnedRuntimeCall& call : activity.runtime_calls) {
    const int64_t start = call.host_epoch_clock ? static_cast<int64_t>(call.start_ns)
                                                : clock.ToHostEpochNs(call.start_ns);
    const int64_t end = call.host_epoch_clock ? static_cast<int64_t>(call.end_ns)
                                              : clock.ToHostEpochNs(call.end_ns);
    if (!keep(call.start_ns, call.end_ns, start, end)) continue;
    threads[call.thread_id].push_back({&call, start, end});
  }
  std::map<std::string, std::vector<Mapped<OwnedDeviceMemoryEvent>>> pools;
  for (const OwnedDeviceMemoryEvent& event : activity.memory_events) {
    if (event.device_id < 0) {
      ++our_drops[kNegativeDevice];
      continue;
    }
    const int64_t time = event.host_epoch_clock ? static_cast<int64_t>(event.time_ns)
                                                : clock.ToHostEpochNs(event.time_ns);
    if (!keep(event.time_ns, event.time_ns, time, time)) continue;
    pools[AllocatorName(device_type, event)].push_back({&event, time, time});
  }
  // Devices with properties but no events still get their plane.
  for (const auto& [device_id, unused] : activity.properties) {
    if (device_id >= 0) devices[device_id];
  }

  for (auto& [device_id, queues] : devices) {
    AddDevicePlane(device_type, device_id, queues, activity, window_start, space);
    for (const auto& [queue_id, events] : queues) {
      stats->events += static_cast<int64_t>(events.size());
    }
  }
  if (!threads.empty()) AddRuntimeCalls(device_type, threads, window_start, space);
  if (!pools.empty()) AddDeviceMemory(device_type, pools, window_start, space);
  for (const auto& [allocator, events] : pools) {
    stats->events += static_cast<int64_t>(events.size());
  }
  for (const auto& [thread_id, calls] : threads) {
    stats->events += static_cast<int64_t>(calls.size());
  }

  for (const auto& [reason, count] : activity.dropped) {
    stats->dropped += static_cast<int64_t>(count);
    xplane::AddWarning(
        space, absl::StrCat("neuronprof: device plug-in '", xplane::AbslView(collector_name), "' (",
                            xplane::AbslView(device_type), ") lost ", count, " records: ", reason));
  }
  for (const auto& [reason, count] : our_drops) {
    stats->dropped += static_cast<int64_t>(count);
    xplane::AddWarning(
        space, absl::StrCat("neuronprof: dropped ", count, " records of device plug-in '",
                            xplane::AbslView(collector_name), "' (", xplane::AbslView(device_type),
                            "): ", reason));
  }
}

}  // namespace collectors
}  // namespace neuronprof
