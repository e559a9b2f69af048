#include "src/collectors/cupti/activity_translator.h"

#include <cupti_callbacks.h>
#include <cxxabi.h>

#include <cstdlib>
#include <memory>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace neuronprof {
namespace cupti {
namespace {

// The fields that plain and peer copy records share, under the same names.
template <typename CopyRecord>
DeviceEvent CopyEventOf(const CopyRecord& copy) {
  DeviceEvent event;
  event.device_id = static_cast<int>(copy.deviceId);
  event.queue_id = copy.streamId;
  event.start_ns = copy.start;
  event.end_ns = copy.end;
  event.correlation_id = copy.correlationId;
  event.bytes = static_cast<int64_t>(copy.bytes);
  return event;
}

// Stat keys on kernel events; TSL's name for the first, Kineto's meaning
// for the other two (its exporter writes "blocks per SM" and
// "est. achieved occupancy %").
constexpr char kTheoreticalOccupancyPct[] = "theoretical_occupancy_pct";
constexpr char kBlocksPerSm[] = "blocks_per_sm";
constexpr char kEstAchievedOccupancyPct[] = "est_achieved_occupancy_pct";

// CUPTI's names end in a version: cudaLaunchKernel_v7000. Viewers and
// Kineto show the plain name.
std::string_view StripVersionSuffix(std::string_view name) {
  const size_t pos = name.rfind("_v");
  if (pos == std::string_view::npos || pos + 2 == name.size()) return name;
  for (size_t i = pos + 2; i < name.size(); ++i) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(name[i]))) return name;
  }
  return name.substr(0, pos);
}

}  // namespace

std::string_view MemcpyKindName(uint8_t copy_kind) {
  switch (copy_kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
      return "HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
      return "DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA:
      return "HtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH:
      return "AtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA:
      return "AtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD:
      return "AtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA:
      return "DtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
      return "DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
      return "HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
      return "PtoP";
    default:
      return "Unknown";
  }
}

std::string_view MemoryKindName(uint32_t memory_kind) {
  switch (memory_kind) {
    case CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE:
      return "pageable";
    case CUPTI_ACTIVITY_MEMORY_KIND_PINNED:
      return "pinned";
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE:
      return "device";
    case CUPTI_ACTIVITY_MEMORY_KIND_ARRAY:
      return "array";
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED:
      return "managed";
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC:
      return "device_static";
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC:
      return "managed_static";
    default:
      return "unknown";
  }
}

std::string_view ApiName(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  // libcupti's own table: it answers without a driver or GPU.
  const char* name = nullptr;
  if (cuptiGetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || name == nullptr) {
    return {};
  }
  return StripVersionSuffix(name);
}

std::string KernelDetails(const KernelLaunch& launch, double occupancy_pct) {
  // Keys and order as TSL's CUPTI tracer writes them; xprof's kernel stats
  // split on spaces and read each "key:value".
  return absl::StrCat("regs:", launch.registers_per_thread,
                      " static_shared:", launch.static_shared_memory,
                      " dynamic_shared:", launch.dynamic_shared_memory, " grid:", launch.grid_x,
                      ",", launch.grid_y, ",", launch.grid_z, " block:", launch.block_x, ",",
                      launch.block_y, ",", launch.block_z, " occ_pct:", occupancy_pct);
}

ActivityTranslator::ActivityTranslator(DeviceActivitySink& sink,
                                       const std::map<int, GpuProperties>& gpus)
    : sink_(sink), gpus_(gpus) {}

void ActivityTranslator::Translate(const CUpti_Activity& record) {
  switch (record.kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      TranslateKernel(reinterpret_cast<const KernelRecord&>(record));
      return;
    case CUPTI_ACTIVITY_KIND_MEMCPY:
      TranslateMemcpy(reinterpret_cast<const MemcpyRecord&>(record));
      return;
    case CUPTI_ACTIVITY_KIND_MEMCPY2:
      TranslatePeerMemcpy(reinterpret_cast<const PeerMemcpyRecord&>(record));
      return;
    case CUPTI_ACTIVITY_KIND_MEMSET:
      TranslateMemset(reinterpret_cast<const MemsetRecord&>(record));
      return;
    case CUPTI_ACTIVITY_KIND_MEMORY2:
      TranslateMemory(reinterpret_cast<const MemoryRecord&>(record));
      return;
    case CUPTI_ACTIVITY_KIND_RUNTIME:
      TranslateApi(reinterpret_cast<const ApiRecord&>(record), CUPTI_CB_DOMAIN_RUNTIME_API);
      return;
    case CUPTI_ACTIVITY_KIND_DRIVER:
      TranslateApi(reinterpret_cast<const ApiRecord&>(record), CUPTI_CB_DOMAIN_DRIVER_API);
      return;
    default:
      ++unknown_kind_;
      return;
  }
}

void ActivityTranslator::Finish() {
  if (without_times_ > 0) {
    sink_.AddDropped(without_times_,
                     "CUPTI records without valid start/end times "
                     "(work still running when the capture stopped)");
  }
  if (unknown_kind_ > 0) {
    sink_.AddDropped(unknown_kind_,
                     "CUPTI records of kinds neuronprof does "
                     "not translate");
  }
  without_times_ = unknown_kind_ = 0;
}

bool ActivityTranslator::UsableTimes(uint64_t start, uint64_t end) {
  // CUPTI leaves 0 in records whose work had not finished at a forced flush.
  if (start == 0 || end < start) {
    ++without_times_;
    return false;
  }
  return true;
}

std::string_view ActivityTranslator::KernelName(const char* mangled) {
  if (mangled == nullptr || *mangled == '\0') return "(unnamed kernel)";
  auto [it, inserted] = kernel_names_.try_emplace(mangled);
  if (inserted) {
    int status = 0;
    std::unique_ptr<char, decltype(&std::free)> demangled(
        abi::__cxa_demangle(mangled, nullptr, nullptr, &status), &std::free);
    it->second = (status == 0 && demangled) ? demangled.get() : mangled;
  }
  return it->second;
}

void ActivityTranslator::TranslateKernel(const KernelRecord& kernel) {
  if (!UsableTimes(kernel.start, kernel.end)) return;
  KernelLaunch launch;
  launch.grid_x = kernel.gridX;
  launch.grid_y = kernel.gridY;
  launch.grid_z = kernel.gridZ;
  launch.block_x = kernel.blockX;
  launch.block_y = kernel.blockY;
  launch.block_z = kernel.blockZ;
  launch.registers_per_thread = kernel.registersPerThread;
  launch.static_shared_memory = kernel.staticSharedMemory;
  launch.dynamic_shared_memory = kernel.dynamicSharedMemory;

  const int device_id = static_cast<int>(kernel.deviceId);
  std::optional<Occupancy> occupancy;
  if (auto gpu = gpus_.find(device_id); gpu != gpus_.end()) {
    occupancy = ComputeOccupancy(gpu->second, launch);
  }
  TraceArg stats[] = {{kTheoreticalOccupancyPct, occupancy ? occupancy->theoretical_pct : 0.0},
                      {kBlocksPerSm, occupancy ? occupancy->blocks_per_sm : 0.0},
                      {kEstAchievedOccupancyPct, occupancy ? occupancy->est_achieved_pct : 0.0}};
  scratch_ = KernelDetails(launch, occupancy ? occupancy->theoretical_pct : 0);

  DeviceEvent event;
  event.kind = DeviceEventKind::kKernel;
  event.device_id = device_id;
  event.queue_id = kernel.streamId;
  event.name = KernelName(kernel.name);
  event.start_ns = kernel.start;
  event.end_ns = kernel.end;
  event.correlation_id = kernel.correlationId;
  event.details = scratch_;
  if (occupancy) {
    event.stats = stats;
    event.num_stats = std::size(stats);
  }
  sink_.AddEvent(event);
  devices_seen_.insert(device_id);
  ++events_;
}

void ActivityTranslator::AddCopy(DeviceEvent& event, uint8_t copy_kind, uint8_t src_kind,
                                 uint8_t dst_kind, uint8_t flags, uint32_t dest_device) {
  const std::string_view kind = MemcpyKindName(copy_kind);
  // "MemcpyHtoD": xprof classifies copies by this name prefix
  // (case-insensitive MEMCPYHToD / MEMCPYDToH / MEMCPYDToD).
  const std::string name = copy_kind == CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN
                               ? std::string("Memcpy")
                               : "Memcpy" + std::string(kind);
  scratch_ = absl::StrCat(
      "kind:", std::string(kind), " kind_src:", std::string(MemoryKindName(src_kind)),
      " kind_dst:", std::string(MemoryKindName(dst_kind)), " size:", event.bytes,
      " dest:", dest_device, " async:", (flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC) ? 1 : 0);
  event.kind = DeviceEventKind::kMemcpy;
  event.name = name;
  event.details = scratch_;
  sink_.AddEvent(event);
  devices_seen_.insert(event.device_id);
  ++events_;
}

void ActivityTranslator::TranslateMemcpy(const MemcpyRecord& copy) {
  if (!UsableTimes(copy.start, copy.end)) return;
  DeviceEvent event = CopyEventOf(copy);
  AddCopy(event, copy.copyKind, copy.srcKind, copy.dstKind, copy.flags, copy.deviceId);
}

void ActivityTranslator::TranslatePeerMemcpy(const PeerMemcpyRecord& copy) {
  if (!UsableTimes(copy.start, copy.end)) return;
  DeviceEvent event = CopyEventOf(copy);
  AddCopy(event, copy.copyKind, copy.srcKind, copy.dstKind, copy.flags, copy.dstDeviceId);
}

// cudaMalloc / cudaFree and the driver's allocations: one memory event of
// the pool named by the memory kind ("GPU:0/device", "GPU:0/pinned").
void ActivityTranslator::TranslateMemory(const MemoryRecord& memory) {
  DeviceMemoryEvent event;
  switch (memory.memoryOperationType) {
    case CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION:
      event.kind = DeviceMemoryEvent::Kind::kAllocation;
      break;
    case CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE:
      event.kind = DeviceMemoryEvent::Kind::kFree;
      break;
    default:
      ++unknown_kind_;
      return;
  }
  if (memory.timestamp == 0) {
    ++without_times_;
    return;
  }
  event.device_id = static_cast<int>(memory.deviceId);
  event.pool = MemoryKindName(memory.memoryKind);
  event.time_ns = memory.timestamp;
  event.address = memory.address;
  event.bytes = static_cast<int64_t>(memory.bytes);
  sink_.AddMemoryEvent(event);
  devices_seen_.insert(event.device_id);
  ++events_;
}

void ActivityTranslator::TranslateMemset(const MemsetRecord& memset) {
  if (!UsableTimes(memset.start, memset.end)) return;
  scratch_ = absl::StrCat("kind:", std::string(MemoryKindName(memset.memoryKind)),
                          " num_bytes:", memset.bytes,
                          " async:", (memset.flags & CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC) ? 1 : 0);
  DeviceEvent event;
  event.kind = DeviceEventKind::kMemset;
  event.device_id = static_cast<int>(memset.deviceId);
  event.queue_id = memset.streamId;
  event.name = "Memset";
  event.start_ns = memset.start;
  event.end_ns = memset.end;
  event.correlation_id = memset.correlationId;
  event.bytes = static_cast<int64_t>(memset.bytes);
  event.details = scratch_;
  sink_.AddEvent(event);
  devices_seen_.insert(event.device_id);
  ++events_;
}

std::string_view ActivityTranslator::CallName(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  const uint64_t key = (uint64_t{static_cast<uint32_t>(domain)} << 32) | cbid;
  auto [it, inserted] = call_names_.try_emplace(key);
  if (inserted) {
    const std::string_view name = ApiName(domain, cbid);
    // An id this libcupti does not know still gets a stable, honest name.
    it->second =
        !name.empty()
            ? std::string(name)
            : absl::StrCat(domain == CUPTI_CB_DOMAIN_RUNTIME_API ? "cuda_runtime_" : "cuda_driver_",
                           cbid);
  }
  return it->second;
}

void ActivityTranslator::TranslateApi(const ApiRecord& api, CUpti_CallbackDomain domain) {
  if (!UsableTimes(api.start, api.end)) return;
  RuntimeCall call;
  call.thread_id = api.threadId;
  call.name = CallName(domain, api.cbid);
  call.start_ns = api.start;
  call.end_ns = api.end;
  call.correlation_id = api.correlationId;
  sink_.AddRuntimeCall(call);
  ++runtime_calls_;
}

}  // namespace cupti
}  // namespace neuronprof
