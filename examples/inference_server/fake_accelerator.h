// A stand-in accelerator ("NPU") with a device plug-in
// (neuronprof/device.h): its kernels run on the calling thread, and while
// a capture is on, each run is recorded as a runtime call on that thread
// and the device work it launched, linked by a correlation id, with the
// FLOPs it did. `neuronprof summary` then gives the device time and FLOPs
// to the server's markers around each launch, and an MFU against the
// peak given here.
#ifndef NEURONPROF_EXAMPLES_INFERENCE_SERVER_FAKE_ACCELERATOR_H_
#define NEURONPROF_EXAMPLES_INFERENCE_SERVER_FAKE_ACCELERATOR_H_

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "absl/status/status.h"
#include "neuronprof/device.h"

namespace inference_server {

class FakeAccelerator {
 public:
  // `peak_gflops`: the FLOP/s the plug-in reports as the device's peak.
  explicit FakeAccelerator(double peak_gflops) : peak_gflops_(peak_gflops) {}
  ~FakeAccelerator();

  // Registers this device's plug-in: captures that start later record it.
  absl::Status Register();

  // A host-to-device copy of `bytes` (recorded only; nothing moves).
  void CopyIn(int64_t bytes);

  // Runs `kernel` "on the device": `flops` is what it computes.
  template <typename Kernel>
  void Run(const char* name, int64_t flops, Kernel&& kernel) {
    const int64_t start = neuronprof::HostEpochNowNs();
    kernel();
    Record(name, neuronprof::DeviceEventKind::kKernel, start, flops, -1);
  }

 private:
  class Plugin;
  struct Launch {
    const char* name;
    neuronprof::DeviceEventKind kind;
    int64_t thread, start_ns, end_ns, flops, bytes;
    uint64_t correlation_id;
  };
  void Record(const char* name, neuronprof::DeviceEventKind kind, int64_t start_ns, int64_t flops,
              int64_t bytes);

  const double peak_gflops_;
  bool registered_ = false;
  std::atomic<bool> tracing_{false};
  std::mutex mutex_;
  std::vector<Launch> launches_;  // since the capture started
  uint64_t next_correlation_ = 1;
};

}  // namespace inference_server

#endif  // NEURONPROF_EXAMPLES_INFERENCE_SERVER_FAKE_ACCELERATOR_H_
