#include "src/collectors/torch/memory_reporter.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string_view>

#include <c10/core/Allocator.h>
#include <c10/util/Exception.h>
#include <c10/util/ThreadLocalDebugInfo.h>

#include "neuronprof/internal/recorder.h"
#include "neuronprof/trace.h"
#include "src/collectors/torch/op_callbacks.h"
#include "src/xplane/names.h"

namespace neuronprof {
namespace collectors {
namespace libtorch {
namespace {

std::atomic<bool> g_enabled{false};
std::atomic<uint64_t> g_blocked_threads{0};
// Per thread: the capture generation in which this thread was found with
// another profiler in the slot (counted once per capture).
thread_local uint32_t t_blocked_generation = 0;

bool CaptureOpen() {
  return g_enabled.load(std::memory_order_relaxed) &&
         (internal::g_capture_state.load(std::memory_order_relaxed) & internal::kLevelMask) != 0;
}

// "cpu", "cuda:0": a fixed buffer, no allocation on the allocator's path.
std::string_view AllocatorName(c10::Device device, char (&buffer)[32]) {
  const char* type = device.is_cpu() ? "cpu" : device.is_cuda() ? "cuda" : "device";
  const int length = device.has_index()
                         ? std::snprintf(buffer, sizeof(buffer), "%s:%d", type, device.index())
                         : std::snprintf(buffer, sizeof(buffer), "%s", type);
  return std::string_view(buffer, length > 0 ? static_cast<size_t>(length) : 0);
}

std::string_view DeviceTypeName(c10::Device device) {
  return device.is_cpu() ? "CPU" : device.is_cuda() ? "CUDA" : "OTHER";
}

class MemoryReporter final : public c10::MemoryReportingInfoBase {
 public:
  void reportMemoryUsage(void* ptr, int64_t alloc_size, int64_t total_allocated,
                         int64_t total_reserved, c10::Device device) override {
    if (alloc_size == 0) return;
    const bool free = alloc_size < 0;
    // alloc_size is never INT64_MIN for a real block; guard the negation.
    const int64_t bytes = free ? (alloc_size == INT64_MIN ? INT64_MAX : -alloc_size) : alloc_size;
    char allocator[32];
    const TraceArg args[] = {
        {xplane::kAddressStat, reinterpret_cast<uint64_t>(ptr)},
        {xplane::kRequestedBytesStat, bytes},
        {xplane::kAllocationBytesStat, bytes},
        {xplane::kBytesAllocatedStat, total_allocated},
        {xplane::kBytesReservedStat, total_reserved},
        {xplane::kAllocatorNameStat, AllocatorName(device, allocator)},
        {xplane::kMemoryDeviceTypeStat, DeviceTypeName(device)},
        {xplane::kDeviceIdStat, static_cast<int64_t>(device.has_index() ? device.index() : 0)},
        {xplane::kTfOpStat, CurrentOperatorName()},
    };
    const size_t count = args[8].string_value().empty() ? 8 : 9;
    Record(free ? xplane::kMemoryDeallocationEvent : xplane::kMemoryAllocationEvent, args,
           count);
  }

  void reportOutOfMemory(int64_t alloc_size, int64_t total_allocated, int64_t total_reserved,
                         c10::Device device) override {
    char allocator[32];
    const TraceArg args[] = {
        {xplane::kRequestedBytesStat, alloc_size},
        {xplane::kBytesAllocatedStat, total_allocated},
        {xplane::kBytesReservedStat, total_reserved},
        {xplane::kAllocatorNameStat, AllocatorName(device, allocator)},
        {xplane::kMemoryDeviceTypeStat, DeviceTypeName(device)},
        {xplane::kDeviceIdStat, static_cast<int64_t>(device.has_index() ? device.index() : 0)},
        {xplane::kMemoryAnomalyStat, "out of memory"},
    };
    Record(xplane::kMemoryAllocationEvent, args, sizeof(args) / sizeof(args[0]));
  }

  bool memoryProfilingEnabled() const override {
    if (CaptureOpen()) return true;
    LeaveThisThread();  // The window is over: free the slot for torch's profilers.
    return false;
  }

 private:
  static void Record(std::string_view name, const TraceArg* args, size_t count) {
    const uint32_t state = internal::g_capture_state.load(std::memory_order_relaxed);
    if ((state & internal::kLevelMask) == 0) return;
    uint32_t length = 0, args_offset = 0;
    const char* copy = internal::CopyName(state, name, args, count, &length, &args_offset);
    if (copy == nullptr) return;  // Window closed or buffer full (counted).
    const uint64_t now = internal::NowTicks();
    internal::RecordEvent(state, copy, length, args_offset, now, now);
  }

  void LeaveThisThread() const {
    if (c10::ThreadLocalDebugInfo::get(c10::DebugInfoKind::PROFILER_STATE) != this) return;
    try {
      // Only when ours is the newest entry: popping anything else would
      // break whoever pushed it.
      if (c10::ThreadLocalDebugInfo::_peek(c10::DebugInfoKind::PROFILER_STATE).get() == this) {
        c10::ThreadLocalDebugInfo::_pop(c10::DebugInfoKind::PROFILER_STATE);
      }
    } catch (const c10::Error&) {
      // Another kind was pushed after ours; it is popped again later.
    }
  }
};

// Never destroyed: threads may hold it in their debug info after a window
// and until their next allocation, possibly past static destruction.
const std::shared_ptr<MemoryReporter>& Reporter() {
  static auto* reporter = new std::shared_ptr<MemoryReporter>(std::make_shared<MemoryReporter>());
  return *reporter;
}

}  // namespace

void EnableMemoryReports() {
  g_blocked_threads.store(0, std::memory_order_relaxed);
  g_enabled.store(true, std::memory_order_relaxed);
  EnsureMemoryReporterOnThisThread();
}

void DisableMemoryReports() { g_enabled.store(false, std::memory_order_relaxed); }

void EnsureMemoryReporterOnThisThread() {
  if (!g_enabled.load(std::memory_order_relaxed)) return;
  c10::DebugInfoBase* slot = c10::ThreadLocalDebugInfo::get(c10::DebugInfoKind::PROFILER_STATE);
  if (slot == Reporter().get()) return;
  if (slot == nullptr) {
    c10::ThreadLocalDebugInfo::_push(c10::DebugInfoKind::PROFILER_STATE, Reporter());
    return;
  }
  const uint32_t generation =
      internal::GenerationOf(internal::g_capture_state.load(std::memory_order_relaxed));
  if (t_blocked_generation != generation) {
    t_blocked_generation = generation;
    g_blocked_threads.fetch_add(1, std::memory_order_relaxed);
  }
}

uint64_t TakeBlockedMemoryThreadCount() {
  return g_blocked_threads.exchange(0, std::memory_order_relaxed);
}

}  // namespace libtorch
}  // namespace collectors
}  // namespace neuronprof
