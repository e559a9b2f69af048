#include "src/collectors/torch/memory_reporter.h"

#include <c10/core/Allocator.h>
#include <c10/util/Exception.h>
#include <c10/util/ThreadLocalDebugInfo.h>

#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <new>
#include <string>
#include <string_view>

#include "neuronprof/internal/recorder.h"
#include "neuronprof/trace.h"
#include "src/collectors/torch/op_callbacks.h"
#include "src/xplane/schema.h"

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

// libtorch's lower-case device type names ("cpu", "cuda", "xpu"), made
// once: c10::DeviceTypeName returns a new std::string each call.
const std::array<std::string, c10::COMPILE_TIME_MAX_DEVICE_TYPES>& DeviceTypeNames() {
  static const auto* names = [] {
    auto* table = new std::array<std::string, c10::COMPILE_TIME_MAX_DEVICE_TYPES>();
    for (size_t i = 0; i < table->size(); ++i) {
      try {
        (*table)[i] = c10::DeviceTypeName(static_cast<c10::DeviceType>(i), /*lower_case=*/true);
      } catch (const c10::Error&) {
        (*table)[i] = "device";  // A value libtorch does not name.
      }
    }
    return table;
  }();
  return *names;
}

// "cpu", "cuda:0": literals for the common devices, else printed into
// `buffer`; never an allocation on the allocator's path.
std::string_view AllocatorName(c10::Device device, char (&buffer)[32]) {
  static constexpr const char* kCuda[] = {"cuda:0", "cuda:1", "cuda:2", "cuda:3",
                                          "cuda:4", "cuda:5", "cuda:6", "cuda:7"};
  if (device.is_cpu()) return "cpu";
  if (device.is_cuda() && device.index() >= 0 && device.index() < 8) return kCuda[device.index()];
  const auto type = static_cast<size_t>(device.type());
  const char* name = type < DeviceTypeNames().size() ? DeviceTypeNames()[type].c_str() : "device";
  const int length = device.has_index()
                         ? std::snprintf(buffer, sizeof(buffer), "%s:%d", name, device.index())
                         : std::snprintf(buffer, sizeof(buffer), "%s", name);
  return std::string_view(buffer, length > 0 ? static_cast<size_t>(length) : 0);
}

// A few marker arguments on the stack (TraceArg has no default
// constructor, and the allocator's path must not allocate).
class StackArgs {
 public:
  template <typename T>
  void Add(std::string_view key, T value) {
    if (count_ < kCapacity) new (&storage_[count_++ * sizeof(TraceArg)]) TraceArg(key, value);
  }
  const TraceArg* data() const { return reinterpret_cast<const TraceArg*>(storage_); }
  size_t size() const { return count_; }

 private:
  static constexpr size_t kCapacity = 12;
  alignas(TraceArg) unsigned char storage_[kCapacity * sizeof(TraceArg)];
  size_t count_ = 0;
};

class MemoryReporter final : public c10::MemoryReportingInfoBase {
 public:
  void reportMemoryUsage(void* ptr, int64_t alloc_size, int64_t total_allocated,
                         int64_t total_reserved, c10::Device device) override {
    if (alloc_size == 0) return;
    const bool free = alloc_size < 0;
    // alloc_size is never INT64_MIN for a real block; guard the negation.
    const int64_t bytes = free ? (alloc_size == INT64_MIN ? INT64_MAX : -alloc_size) : alloc_size;
    // The fewest arguments that carry the report, under compact keys
    // (xplane::kCompactKeys); AnnotateMemoryEvents derives the rest (device type and id, available
    // and peak bytes) when the capture is collected, off the allocating thread.
    char allocator[32];
    StackArgs args;
    // int64, as TSL writes it: xprof reads a uint64 address as 0.
    args.Add(xplane::kCompactAddressKey, static_cast<int64_t>(reinterpret_cast<uintptr_t>(ptr)));
    args.Add(xplane::kCompactRequestedBytesKey, bytes);
    args.Add(xplane::kCompactBytesAllocatedKey, total_allocated);
    if (total_reserved > 0) args.Add(xplane::kCompactPoolReservedKey, total_reserved);
    args.Add(xplane::kCompactAllocatorNameKey, AllocatorName(device, allocator));
    const std::string_view op = CurrentOperatorName();
    if (!op.empty()) args.Add(xplane::kCompactTfOpKey, op);
    Record(free ? xplane::kMemoryDeallocationEvent : xplane::kMemoryAllocationEvent, args);
  }

  void reportOutOfMemory(int64_t alloc_size, int64_t total_allocated, int64_t total_reserved,
                         c10::Device device) override {
    char allocator[32];
    StackArgs args;
    args.Add(xplane::kCompactRequestedBytesKey, alloc_size);
    args.Add(xplane::kCompactBytesAllocatedKey, total_allocated);
    args.Add(xplane::kCompactPoolReservedKey, total_reserved);
    args.Add(xplane::kCompactAllocatorNameKey, AllocatorName(device, allocator));
    args.Add(xplane::kCompactMemoryAnomalyKey, "out of memory");
    Record(xplane::kMemoryAllocationEvent, args);
  }

  bool memoryProfilingEnabled() const override {
    if (CaptureOpen()) return true;
    LeaveThisThread();  // The window is over: free the slot for torch's profilers.
    return false;
  }

 private:
  static void Record(std::string_view name, const StackArgs& args) {
    const uint32_t state = internal::g_capture_state.load(std::memory_order_relaxed);
    if ((state & internal::kLevelMask) == 0) return;
    uint32_t length = 0, args_offset = 0;
    const char* copy =
        internal::CopyName(state, name, args.data(), args.size(), &length, &args_offset);
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
  DeviceTypeNames();  // Built here, not on an allocating thread.
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
