// A fake NPU runtime reporting through the device plug-in API
// (neuronprof/device.h). Each device has one worker thread per queue that
// "executes" launched work (a timed spin) and stamps it with the device's
// own clock (CLOCK_MONOTONIC_RAW here, unrelated to the host epoch clock);
// the plug-in pairs that clock with HostEpochNowNs() so the capture maps
// device time onto host time. The training loop launches kernels and copies
// inside StepTrace steps; the profile shows /device:CUSTOM:NPU:<n> planes
// beside /host:CPU with an arrow from each launch to its device work, and
// each device's HBM (weights, then 8 MiB of activations per step) in the
// memory views.
//
//   custom_device_demo [--logdir DIR] [--steps N] [--devices D] [--work_us U]
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "neuronprof/device.h"
#include "neuronprof/neuronprof.h"

namespace {

uint64_t DeviceNowNs() {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC_RAW, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(now.tv_nsec);
}

int64_t ThreadId() { return static_cast<int64_t>(syscall(SYS_gettid)); }

// ---------------------------------------------------------------------------
// The fake runtime: queues of work executed by worker threads.
// ---------------------------------------------------------------------------

struct Work {
  std::string name;
  neuronprof::DeviceEventKind kind;
  int64_t bytes;
  int64_t flops;
  std::string op;
  uint64_t work_ns;
  uint64_t correlation_id;
};

struct Executed {
  Work work;
  int device;
  int queue;
  uint64_t start_ns, end_ns;  // Device clock.
};

struct MemoryOp {
  neuronprof::DeviceMemoryEvent::Kind kind;
  int device;
  uint64_t address;
  int64_t bytes;
  int64_t in_use_after;
  uint64_t time_ns;  // Device clock.
};

struct LaunchCall {
  int64_t thread_id;
  std::string name;
  uint64_t start_ns, end_ns;  // Device clock.
  uint64_t correlation_id;
};

class FakeNpuRuntime {
 public:
  FakeNpuRuntime(int devices, int queues_per_device) {
    for (int d = 0; d < devices; ++d) {
      for (int q = 0; q < queues_per_device; ++q) {
        queues_.push_back(std::make_unique<Queue>(d, q));
      }
    }
    for (auto& queue : queues_) {
      queue->worker = std::thread([this, q = queue.get()] { Run(q); });
    }
  }
  ~FakeNpuRuntime() {
    for (auto& queue : queues_) {
      {
        std::lock_guard<std::mutex> lock(queue->mutex);
        queue->closing = true;
      }
      queue->wake.notify_all();
      queue->worker.join();
    }
  }

  // The runtime's launch call: records itself when tracing is on.
  void Launch(int device, int queue, Work work) {
    const uint64_t start = DeviceNowNs();
    work.correlation_id = next_correlation_.fetch_add(1);
    const uint64_t correlation_id = work.correlation_id;
    Queue& target = *queues_[device * queues_per_device() + queue];
    {
      std::lock_guard<std::mutex> lock(target.mutex);
      target.pending.push_back(std::move(work));
      ++target.in_flight;
    }
    target.wake.notify_one();
    if (tracing_.load(std::memory_order_relaxed)) {
      std::lock_guard<std::mutex> lock(trace_mutex_);
      calls_.push_back({ThreadId(), "npuLaunch", start, DeviceNowNs(), correlation_id});
    }
  }

  // The runtime's HBM allocator: a bump pointer per device that counts the
  // bytes in use, recording itself when tracing is on.
  uint64_t Malloc(int device, int64_t bytes) {
    std::lock_guard<std::mutex> lock(trace_mutex_);
    const uint64_t address = next_address_ += static_cast<uint64_t>(bytes);
    sizes_[address] = bytes;
    in_use_[device] += bytes;
    if (tracing_.load(std::memory_order_relaxed)) {
      memory_.push_back({neuronprof::DeviceMemoryEvent::Kind::kAllocation, device, address, bytes,
                         in_use_[device], DeviceNowNs()});
    }
    return address;
  }
  void Free(int device, uint64_t address) {
    std::lock_guard<std::mutex> lock(trace_mutex_);
    const int64_t bytes = sizes_[address];
    sizes_.erase(address);
    in_use_[device] -= bytes;
    if (tracing_.load(std::memory_order_relaxed)) {
      memory_.push_back({neuronprof::DeviceMemoryEvent::Kind::kFree, device, address, bytes,
                         in_use_[device], DeviceNowNs()});
    }
  }
  std::vector<MemoryOp> TakeMemory() {
    std::lock_guard<std::mutex> lock(trace_mutex_);
    std::vector<MemoryOp> taken;
    taken.swap(memory_);
    return taken;
  }

  // Waits until every queue is idle.
  void Synchronize() {
    for (auto& queue : queues_) {
      std::unique_lock<std::mutex> lock(queue->mutex);
      queue->idle.wait(lock, [&] { return queue->in_flight == 0; });
    }
  }

  void SetTracing(bool on) { tracing_.store(on); }
  // Hands over what was traced so far.
  void TakeTrace(std::vector<Executed>* executed, std::vector<LaunchCall>* calls) {
    std::lock_guard<std::mutex> lock(trace_mutex_);
    executed->swap(executed_);
    calls->swap(calls_);
    executed_.clear();
    calls_.clear();
  }
  int queues_per_device() const { return 2; }

 private:
  struct Queue {
    Queue(int d, int q) : device(d), index(q) {}
    int device, index;
    std::mutex mutex;
    std::condition_variable wake, idle;
    std::deque<Work> pending;
    int in_flight = 0;
    bool closing = false;
    std::thread worker;
  };

  void Run(Queue* queue) {
    for (;;) {
      Work work;
      {
        std::unique_lock<std::mutex> lock(queue->mutex);
        queue->wake.wait(lock, [&] { return queue->closing || !queue->pending.empty(); });
        if (queue->pending.empty()) return;
        work = std::move(queue->pending.front());
        queue->pending.pop_front();
      }
      const uint64_t start = DeviceNowNs();
      while (DeviceNowNs() - start < work.work_ns) {
      }
      const uint64_t end = DeviceNowNs();
      if (tracing_.load(std::memory_order_relaxed)) {
        std::lock_guard<std::mutex> lock(trace_mutex_);
        executed_.push_back({std::move(work), queue->device, queue->index, start, end});
      }
      std::lock_guard<std::mutex> lock(queue->mutex);
      if (--queue->in_flight == 0) queue->idle.notify_all();
    }
  }

  std::vector<std::unique_ptr<Queue>> queues_;
  std::atomic<uint64_t> next_correlation_{1};
  std::atomic<bool> tracing_{false};
  std::mutex trace_mutex_;
  std::vector<Executed> executed_;
  std::vector<LaunchCall> calls_;
  uint64_t next_address_ = 0x100000000;
  std::map<uint64_t, int64_t> sizes_;
  std::map<int, int64_t> in_use_;
  std::vector<MemoryOp> memory_;
};

// ---------------------------------------------------------------------------
// The plug-in: what a real accelerator runtime would ship.
// ---------------------------------------------------------------------------

class FakeNpuCollector : public neuronprof::DeviceCollector {
 public:
  explicit FakeNpuCollector(FakeNpuRuntime* runtime) : runtime_(runtime) {}
  std::string_view device_type() const override { return "NPU"; }

  absl::Status Start() override {
    TakeSyncPair();
    runtime_->SetTracing(true);
    return absl::OkStatus();
  }
  absl::Status Stop() override {
    runtime_->SetTracing(false);
    TakeSyncPair();
    return absl::OkStatus();
  }
  absl::Status Flush(neuronprof::DeviceActivitySink& sink) override {
    for (const auto& [device_ns, host_ns] : sync_pairs_) sink.AddClockSync(device_ns, host_ns);
    std::vector<Executed> executed;
    std::vector<LaunchCall> calls;
    runtime_->TakeTrace(&executed, &calls);
    sink.SetDeviceProperty(0, "name", "FakeNPU");
    sink.SetDeviceProperty(0, "queues", int64_t{runtime_->queues_per_device()});
    for (const LaunchCall& call : calls) {
      neuronprof::RuntimeCall record;
      record.thread_id = call.thread_id;
      record.name = call.name;
      record.start_ns = call.start_ns;
      record.end_ns = call.end_ns;
      record.correlation_id = call.correlation_id;
      sink.AddRuntimeCall(record);
    }
    for (const MemoryOp& op : runtime_->TakeMemory()) {
      neuronprof::DeviceMemoryEvent memory;
      memory.kind = op.kind;
      memory.device_id = op.device;
      memory.pool = "HBM";
      memory.time_ns = op.time_ns;
      memory.address = op.address;
      memory.bytes = op.bytes;
      memory.allocated_bytes = op.in_use_after;
      memory.reserved_bytes = int64_t{16} << 30;  // The device's HBM.
      sink.AddMemoryEvent(memory);
    }
    for (const Executed& item : executed) {
      neuronprof::DeviceEvent event;
      event.kind = item.work.kind;
      event.device_id = item.device;
      event.queue_id = item.queue;
      event.name = item.work.name;
      event.start_ns = item.start_ns;
      event.end_ns = item.end_ns;
      event.correlation_id = item.work.correlation_id;
      event.bytes = item.work.bytes;
      event.flops = item.work.flops;
      event.framework_op = item.work.op;
      sink.AddEvent(event);
    }
    return absl::OkStatus();
  }

 private:
  // Device clock and host clock read back to back.
  void TakeSyncPair() {
    const uint64_t device_before = DeviceNowNs();
    const int64_t host = neuronprof::HostEpochNowNs();
    const uint64_t device_after = DeviceNowNs();
    sync_pairs_.emplace_back(device_before + (device_after - device_before) / 2, host);
  }

  FakeNpuRuntime* runtime_;
  std::vector<std::pair<uint64_t, int64_t>> sync_pairs_;
};

struct Config {
  std::string logdir = "logs";
  int steps = 8;
  int devices = 2;
  int work_us = 200;
};

bool ParseArgs(int argc, char** argv, Config* config) {
  for (int i = 1; i < argc; ++i) {
    auto value = [&](const char* flag) -> const char* {
      if (std::strcmp(argv[i], flag) != 0 || i + 1 >= argc) return nullptr;
      return argv[++i];
    };
    if (const char* v = value("--logdir"))
      config->logdir = v;
    else if (const char* v = value("--steps"))
      config->steps = std::atoi(v);
    else if (const char* v = value("--devices"))
      config->devices = std::atoi(v);
    else if (const char* v = value("--work_us"))
      config->work_us = std::atoi(v);
    else {
      std::fprintf(stderr, "usage: %s [--logdir DIR] [--steps N] [--devices D] [--work_us U]\n",
                   argv[0]);
      return false;
    }
  }
  if (config->steps <= 0 || config->devices <= 0 || config->work_us <= 0) {
    std::fprintf(stderr, "steps, devices and work_us must be positive\n");
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Config config;
  if (!ParseArgs(argc, argv, &config)) return 2;
  FakeNpuRuntime runtime(config.devices, 2);
  absl::Status registered = neuronprof::RegisterDeviceCollector(
      "fake_npu", [&runtime] { return std::make_unique<FakeNpuCollector>(&runtime); });
  if (!registered.ok()) {
    std::fprintf(stderr, "cannot register the plug-in: %s\n", registered.ToString().c_str());
    return 1;
  }

  neuronprof::ProfilerOptions options;
  options.logdir = config.logdir;
  options.port = 0;
  neuronprof::Profiler profiler(options);
  if (!profiler.status().ok()) {
    std::fprintf(stderr, "cannot start the profiler: %s\n", profiler.status().ToString().c_str());
    return 1;
  }
  const uint64_t work_ns = static_cast<uint64_t>(config.work_us) * 1000;
  std::vector<uint64_t> weights;  // Allocated once, held for the whole run.
  for (int d = 0; d < config.devices; ++d) weights.push_back(runtime.Malloc(d, 64 << 20));
  for (int step = 0; step < config.steps; ++step) {
    neuronprof::StepTrace step_trace("train", step);
    std::vector<uint64_t> activations;
    for (int d = 0; d < config.devices; ++d) {
      NEURONPROF_SCOPE("load_batch");
      activations.push_back(runtime.Malloc(d, 8 << 20));
      runtime.Launch(
          d, 1,
          {"Memcpy HtoD", neuronprof::DeviceEventKind::kMemcpy, 1 << 20, -1, "", work_ns / 2, 0});
    }
    {
      NEURONPROF_SCOPE("forward");
      for (int d = 0; d < config.devices; ++d) {
        runtime.Launch(d, 0,
                       {"matmul", neuronprof::DeviceEventKind::kKernel, -1, 2 * 64 * 256 * 256,
                        "MLP/fc1/matmul:MatMul", work_ns, 0});
        runtime.Launch(d, 0,
                       {"relu", neuronprof::DeviceEventKind::kKernel, -1, 64 * 256,
                        "MLP/fc1/relu:Relu", work_ns / 4, 0});
      }
    }
    {
      NEURONPROF_SCOPE("synchronize");
      runtime.Synchronize();
    }
    for (int d = 0; d < config.devices; ++d) runtime.Free(d, activations[d]);
  }
  auto result = profiler.Stop();
  if (!result.ok()) {
    std::fprintf(stderr, "profile not written: %s\n", result.status().ToString().c_str());
    return 1;
  }
  std::printf("Captured %lld events (%lld dropped).\n", static_cast<long long>(result->events),
              static_cast<long long>(result->dropped_events));
  for (const std::string& file : result->files) std::printf("  wrote %s\n", file.c_str());
  for (const std::string& warning : result->warnings) {
    std::printf("  warning: %s\n", warning.c_str());
  }
  return 0;
}
