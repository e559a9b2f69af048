#include "fake_accelerator.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <memory>
#include <string>

namespace inference_server {

// The plug-in neuronprof creates per capture: Start/Stop switch recording
// on and off, Flush hands over what was recorded in between.
class FakeAccelerator::Plugin : public neuronprof::DeviceCollector {
 public:
  explicit Plugin(FakeAccelerator* device) : device_(device) {}
  std::string_view device_type() const override { return "NPU"; }
  absl::Status Start() override {
    std::lock_guard<std::mutex> lock(device_->mutex_);
    device_->launches_.clear();
    device_->tracing_.store(true);
    return absl::OkStatus();
  }
  absl::Status Stop() override {
    device_->tracing_.store(false);
    return absl::OkStatus();
  }
  absl::Status Flush(neuronprof::DeviceActivitySink& sink) override {
    std::lock_guard<std::mutex> lock(device_->mutex_);
    // The device clock is the host epoch clock: no clock sync needed.
    sink.SetDeviceProperty(0, "name", "FakeNPU (runs on the host)");
    sink.SetDeviceProperty(0, "peak_teraflops_per_second",
                           std::to_string(device_->peak_gflops_ / 1000));
    for (const Launch& launch : device_->launches_) {
      neuronprof::RuntimeCall call;
      call.thread_id = launch.thread;
      call.name = launch.kind == neuronprof::DeviceEventKind::kKernel ? "npuExecute" : "npuMemcpy";
      call.start_ns = static_cast<uint64_t>(launch.start_ns);
      call.end_ns = static_cast<uint64_t>(launch.end_ns);
      call.host_epoch_clock = true;
      call.correlation_id = launch.correlation_id;
      sink.AddRuntimeCall(call);
      neuronprof::DeviceEvent event;
      event.kind = launch.kind;
      event.queue_id = launch.kind == neuronprof::DeviceEventKind::kKernel ? 0 : 1;
      event.name = launch.name;
      event.start_ns = call.start_ns;
      event.end_ns = call.end_ns;
      event.correlation_id = launch.correlation_id;
      event.flops = launch.flops;
      event.bytes = launch.bytes;
      sink.AddEvent(event);
    }
    device_->launches_.clear();
    return absl::OkStatus();
  }

 private:
  FakeAccelerator* device_;
};

FakeAccelerator::~FakeAccelerator() {
  if (registered_) neuronprof::UnregisterDeviceCollector("fake_npu").IgnoreError();
}

absl::Status FakeAccelerator::Register() {
  absl::Status status = neuronprof::RegisterDeviceCollector(
      "fake_npu", [this] { return std::make_unique<Plugin>(this); });
  registered_ = status.ok();
  return status;
}

void FakeAccelerator::CopyIn(int64_t bytes) {
  const int64_t start = neuronprof::HostEpochNowNs();
  Record("copy_in", neuronprof::DeviceEventKind::kMemcpy, start, -1, bytes);
}

void FakeAccelerator::Record(const char* name, neuronprof::DeviceEventKind kind, int64_t start_ns,
                             int64_t flops, int64_t bytes) {
  if (!tracing_.load(std::memory_order_relaxed)) return;
  const int64_t end_ns = neuronprof::HostEpochNowNs();
  const auto thread = static_cast<int64_t>(syscall(SYS_gettid));
  std::lock_guard<std::mutex> lock(mutex_);
  launches_.push_back({name, kind, thread, start_ns, end_ns, flops, bytes, next_correlation_++});
}

}  // namespace inference_server
