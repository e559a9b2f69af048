// A capture with memory events on the host plane, as the libtorch memory
// reporter and a device plug-in record them: one CPU allocation and its
// free on the main thread, a CUDA allocation inside an operator, and an
// NPU HBM usage sample on its pool's line.
#ifndef NEURONPROF_TESTS_EXPORT_MEMORY_SPACE_H_
#define NEURONPROF_TESTS_EXPORT_MEMORY_SPACE_H_

#include <cstdint>
#include <string_view>

#include "proto/xplane.pb.h"
#include "src/xplane/schema.h"
#include "src/xplane/xplane_builder.h"

namespace neuronprof {
namespace testing {

inline constexpr int64_t kMemoryTid = 4242;
inline constexpr int64_t kPoolLineId = int64_t{1} << 48;

struct MemoryEventSpec {
  std::string_view name;
  int64_t ts_ns;
  std::string_view allocator;
  std::string_view device_type;
  int64_t device_id;  // < 0: no device_id stat.
  int64_t addr;
  int64_t bytes;
  int64_t allocated;
  int64_t reserved;  // < 0: no pool_reserved_bytes stat.
};

inline void AddMemoryEvent(xplane::XPlaneBuilder& host, xplane::XLine* line,
                           const MemoryEventSpec& spec) {
  xplane::XEvent* event =
      host.AddEvent(line, host.EventMetadataId(spec.name), spec.ts_ns * 1000, 0);
  host.AddStat(event, xplane::kAllocatorNameStat, spec.allocator);
  host.AddStat(event, xplane::kMemoryDeviceTypeStat, spec.device_type);
  if (spec.device_id >= 0) host.AddStat(event, xplane::kDeviceIdStat, spec.device_id);
  host.AddStat(event, xplane::kAddressStat, spec.addr);
  host.AddStat(event, xplane::kRequestedBytesStat, spec.bytes);
  host.AddStat(event, xplane::kAllocationBytesStat, spec.bytes);
  host.AddStat(event, xplane::kBytesAllocatedStat, spec.allocated);
  if (spec.reserved >= 0) host.AddStat(event, xplane::kPoolReservedStat, spec.reserved);
  host.AddStat(event, xplane::kTfOpStat, std::string_view("aten::empty"));
}

inline tensorflow::profiler::XSpace MemorySpace() {
  tensorflow::profiler::XSpace space;
  xplane::XPlaneBuilder host(xplane::FindOrAddPlane(&space, xplane::kHostPlaneName));
  xplane::XLine* main = host.AddLine(kMemoryTid, "MainThread", 1'000);
  xplane::XEvent* op = host.AddEvent(main, host.EventMetadataId("aten::empty"), 0, 50'000'000);
  host.AddStat(op, xplane::kOpFrameworkStat, std::string_view("torch"));
  AddMemoryEvent(
      host, main,
      {xplane::kMemoryAllocationEvent, 10'000, "cpu", "CPU", -1, 0x1000, 4096, 4096, -1});
  AddMemoryEvent(
      host, main,
      {xplane::kMemoryAllocationEvent, 20'000, "cuda:0", "CUDA", 0, 0x7f00, 1024, 1024, 2'097'152});
  AddMemoryEvent(host, main,
                 {xplane::kMemoryDeallocationEvent, 30'000, "cpu", "CPU", -1, 0x1000, 4096, 0, -1});
  xplane::XLine* pool = host.AddLine(kPoolLineId, "NPU:0/HBM memory", 1'000);
  AddMemoryEvent(
      host, pool,
      {xplane::kMemoryUsageEvent, 40'000, "NPU:0/HBM", "NPU", 0, 0, 0, 65536, 1'048'576});
  return space;
}

}  // namespace testing
}  // namespace neuronprof

#endif  // NEURONPROF_TESTS_EXPORT_MEMORY_SPACE_H_
