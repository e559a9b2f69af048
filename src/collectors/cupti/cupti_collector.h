// The CUPTI device collector: enables CUPTI's activity API for a capture
// window, keeps the records in a lock-free buffer pool, and translates them
// when the capture is collected.
#ifndef NEURONPROF_SRC_COLLECTORS_CUPTI_CUPTI_COLLECTOR_H_
#define NEURONPROF_SRC_COLLECTORS_CUPTI_CUPTI_COLLECTOR_H_

#include <cupti_activity.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "neuronprof/cupti.h"
#include "neuronprof/device.h"
#include "src/collectors/cupti/buffer_pool.h"
#include "src/collectors/cupti/driver_properties.h"
#include "src/collectors/cupti/gpu_properties.h"

namespace neuronprof {
namespace cupti {

absl::Status ValidateCuptiOptions(const CuptiOptions& options);

// One per process: CUPTI has a single pair of buffer callbacks, so the
// state they reach is global. One capture window at a time.
class CuptiTracer {
 public:
  static CuptiTracer& Get();

  // Enables the activity kinds once `driver_library` loads. On failure
  // nothing stays enabled and the error names the cause (no driver, CUPTI's
  // result for the failing kind).
  absl::Status Start(const CuptiOptions& options,
                     const std::string& driver_library = kDriverLibrary);
  // Forces CUPTI to hand back every buffer, then disables the kinds.
  absl::Status Stop();
  // Translates what the last window recorded into `sink`.
  absl::Status Flush(DeviceActivitySink& sink);

  bool active() const;
  std::vector<CUpti_ActivityKind> enabled_kinds() const;

 private:
  struct ClockPair {
    uint64_t cupti_ns = 0;
    int64_t host_ns = 0;
  };
  CuptiTracer() = default;
  absl::Status PreparePool(const CuptiOptions& options);
  void DisableAll();
  static std::optional<ClockPair> ReadClocks();

  mutable std::mutex mu_;
  bool active_ = false;
  bool flushed_ = true;
  std::vector<CUpti_ActivityKind> enabled_;
  std::unique_ptr<ActivityBufferPool> pool_;
  std::vector<ClockPair> clock_pairs_;
  uint64_t cupti_dropped_ = 0;
  std::optional<std::map<int, GpuProperties>> gpus_;  // Read once.
};

class CuptiCollector : public DeviceCollector {
 public:
  // `driver_library`: tests name a missing one to take the no-driver path.
  explicit CuptiCollector(CuptiOptions options, std::string driver_library = kDriverLibrary)
      : options_(options), driver_library_(std::move(driver_library)) {}
  ~CuptiCollector() override;

  std::string_view device_type() const override { return "GPU"; }
  absl::Status Start() override;
  absl::Status Stop() override;
  absl::Status Flush(DeviceActivitySink& sink) override;

 private:
  CuptiOptions options_;
  std::string driver_library_;
  bool started_ = false;
  bool ran_ = false;  // Start() succeeded: Flush() has this window's data.
};

}  // namespace cupti
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_COLLECTORS_CUPTI_CUPTI_COLLECTOR_H_
