// Device plug-ins: how an accelerator runtime (a GPU through CUPTI, an NPU,
// an ASIC, an OpenCL queue) puts its activity into neuronprof captures.
//
// A plug-in implements DeviceCollector and registers a factory once:
//
//   class MyNpuCollector : public neuronprof::DeviceCollector {
//     std::string_view device_type() const override { return "NPU"; }
//     absl::Status Start() override { /* enable the runtime's tracing */ }
//     absl::Status Stop() override  { /* disable it; keep what it recorded */ }
//     absl::Status Flush(neuronprof::DeviceActivitySink& sink) override {
//       sink.AddClockSync(runtime_now_ns, neuronprof::HostEpochNowNs());
//       for (const Record& r : records_) sink.AddEvent({...});
//       return absl::OkStatus();
//     }
//   };
//   neuronprof::RegisterDeviceCollector(
//       "my_npu", [] { return std::make_unique<MyNpuCollector>(); });
//
// Every capture with a device_tracer_level > 0 (ProfilerOptions for a
// Profiler, default 1; the request's ProfileOptions for a remote capture
// through the gRPC server, CaptureOptions for `neuronprof capture`) creates
// one collector per factory, calls Start() when the window opens, Stop()
// when it closes, then Flush() once on the collecting thread. Events become the planes
// "/device:GPU:<device_id>" for device_type "GPU" and "/device:CUSTOM:<TYPE>:<device_id>" for any
// other type (xprof's trace viewer shows no other device planes), one line per queue ("Stream
// #<queue>(Kernel,Memcpy)"). Runtime calls go on the plane
// "/host:CPU-<TYPE>-runtime", one line per calling thread (xprof's trace
// viewer shows only host planes named "/host:CPU..."). A runtime call and
// the device events it launched share a correlation id, which xprof and
// the Chrome trace draw as a flow arrow.
// Device and runtime times outside the capture window are dropped and
// counted. A failing collector adds an error to the capture; the other
// planes are kept.
#ifndef NEURONPROF_DEVICE_H_
#define NEURONPROF_DEVICE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>

#include "absl/status/status.h"
#include "neuronprof/export.h"
#include "neuronprof/trace.h"

namespace neuronprof {

// Nanoseconds since the Unix epoch on the clock every neuronprof plane uses.
// Pair it with the device runtime's own clock in AddClockSync.
// Thread-safety: any thread, at any time.
NEURONPROF_API int64_t HostEpochNowNs();

enum class DeviceEventKind : uint8_t { kKernel, kMemcpy, kMemset, kOther };

// One interval of work on a device queue. Strings and stats are copied
// during the AddEvent call.
struct DeviceEvent {
  DeviceEventKind kind = DeviceEventKind::kKernel;
  int device_id = 0;      // Plane "/device:<TYPE>:<device_id>".
  int64_t queue_id = 0;   // Stream / queue: one line each.
  std::string_view name;  // Kernel name, "Memcpy HtoD", ...
  uint64_t start_ns = 0;  // In the device clock (see AddClockSync).
  uint64_t end_ns = 0;
  uint64_t correlation_id = 0;    // 0 = none; links to a RuntimeCall.
  int64_t bytes = -1;             // Memcpy / memset size; -1 = unknown.
  int64_t flops = -1;             // -1 = unknown.
  std::string_view framework_op;  // Framework op that launched it, if known.
  // Kernels: "grid:X,Y,Z block:X,Y,Z registers:N shared_memory:N ...".
  // Memcpy: "kind:HtoD ...". Shown as kernel_details / memcpy_details.
  std::string_view details;
  const TraceArg* stats = nullptr;  // Extra stats, shown on the event.
  size_t num_stats = 0;
};

// A host-side runtime call (a kernel launch, an async copy) that queued
// device work; times in the device clock unless `host_epoch_clock` is set.
struct RuntimeCall {
  int64_t thread_id = 0;  // OS thread id of the caller.
  std::string_view name;  // "cudaLaunchKernel", "nrt_execute", ...
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  bool host_epoch_clock = false;  // True: start/end are HostEpochNowNs() times.
  uint64_t correlation_id = 0;
};

// Memory of a device pool (HBM, device memory, a runtime's arena): one
// allocation, one free, or a sample of the bytes in use. Shown with
// libtorch's memory: MemoryAllocation / MemoryDeallocation events of the
// allocator "<TYPE>:<device_id>" (or "<TYPE>:<device_id>/<pool>") on the
// "/host:CPU" plane, which xprof's memory_profile, the Kineto trace's
// [memory] events, the Chrome trace's counters and `neuronprof summary`
// read. Times in the device clock (see AddClockSync) unless
// host_epoch_clock is set.
struct DeviceMemoryEvent {
  enum class Kind : uint8_t { kAllocation, kFree, kUsageSample };
  Kind kind = Kind::kAllocation;
  int device_id = 0;
  std::string_view pool;  // "" for the device's one pool.
  uint64_t time_ns = 0;
  bool host_epoch_clock = false;  // True: time_ns is a HostEpochNowNs() time.
  uint64_t address = 0;           // Allocations and frees.
  // Allocations and frees: the block's size (> 0). Usage samples: the
  // bytes in use.
  int64_t bytes = 0;
  // Bytes in use after an allocation or free, as the runtime counts them;
  // -1: neuronprof adds up the events of the window (starting from 0).
  int64_t allocated_bytes = -1;
  int64_t reserved_bytes = -1;    // The pool's size; -1 = unknown.
  std::string_view framework_op;  // The op that asked for it, if known.
};

// Receives one collector's activity during Flush(). Thread-safety: not
// thread-safe: call it from the thread running Flush() only; valid only for
// the duration of the Flush() call.
class NEURONPROF_API DeviceActivitySink {
 public:
  virtual ~DeviceActivitySink() = default;
  // A pair of simultaneous readings of the device clock and HostEpochNowNs().
  // One pair gives an offset; two or more also correct for drift. With none,
  // device times are taken as host epoch times.
  virtual void AddClockSync(uint64_t device_ns, int64_t host_epoch_ns) = 0;
  virtual void AddEvent(const DeviceEvent& event) = 0;
  virtual void AddRuntimeCall(const RuntimeCall& call) = 0;
  // Records the runtime lost (buffer overflow, ...); reported as drops with
  // `reason` in the capture's warnings.
  virtual void AddDropped(uint64_t count, std::string_view reason) = 0;
  // Per-device facts shown on the device plane ("name", "compute_capability",
  // "memory_bytes", ...).
  virtual void SetDeviceProperty(int device_id, std::string_view key, std::string_view value) = 0;
  virtual void SetDeviceProperty(int device_id, std::string_view key, int64_t value) = 0;
  // One memory allocation, free or usage sample (strings copied). Not pure
  // virtual, so sinks written for tests before it existed still compile.
  virtual void AddMemoryEvent(const DeviceMemoryEvent& /*event*/) {}
};

// Thread-safety: neuronprof calls Start, Stop, Flush and the destructor of
// one instance on one thread at a time (the thread that starts or stops the
// capture, which may differ between Start and Stop), never concurrently;
// what the plug-in records in between (runtime callbacks on any thread) it
// synchronises itself.
class NEURONPROF_API DeviceCollector {
 public:
  virtual ~DeviceCollector() = default;
  // "GPU", "NPU", ...: a plain name (letters, digits, '.', '-' and '_',
  // the rule of run and host names). Names the planes.
  virtual std::string_view device_type() const = 0;
  // Called when the window opens. An error leaves this collector out of the
  // capture and is reported in its errors.
  virtual absl::Status Start() = 0;
  // Called when the window closes; no activity after it returns is kept.
  virtual absl::Status Stop() = 0;
  // Reports everything recorded between Start() and Stop().
  virtual absl::Status Flush(DeviceActivitySink& sink) = 0;
};

using DeviceCollectorFactory = std::function<std::unique_ptr<DeviceCollector>()>;

// Adds a device collector to every later capture. `name` ("cupti",
// "my_npu": a plain name, letters, digits, '.', '-' and '_', else
// InvalidArgument "... is not a plain name: ...") names it in
// messages and must be unique: a second registration under the same name is
// AlreadyExists. A device_type() that is not a plain name is reported as the
// collector's error when a capture starts. A factory may return nullptr when its
// device is absent. Thread-safety: any thread (the registry takes a mutex).
NEURONPROF_API absl::Status RegisterDeviceCollector(std::string_view name,
                                                    DeviceCollectorFactory factory);

// Removes a registration (before unloading a plug-in's library, or between
// tests); captures that start later do not create it. NotFound if `name` is
// not registered. Thread-safety: any thread (the registry takes a mutex).
NEURONPROF_API absl::Status UnregisterDeviceCollector(std::string_view name);

}  // namespace neuronprof

#endif  // NEURONPROF_DEVICE_H_
