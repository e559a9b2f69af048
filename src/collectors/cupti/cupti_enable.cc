// EnableCuptiCollector: registers the CUPTI collector's factory once.
#include <memory>
#include <mutex>
#include <optional>

#include "absl/status/status.h"
#include "neuronprof/cupti.h"
#include "neuronprof/device.h"
#include "src/collectors/cupti/cupti_collector.h"

namespace neuronprof {
namespace {

bool SameOptions(const CuptiOptions& a, const CuptiOptions& b) {
  return a.buffer_bytes == b.buffer_bytes && a.max_buffers == b.max_buffers &&
         a.driver_api == b.driver_api;
}

}  // namespace

absl::Status EnableCuptiCollector(const CuptiOptions& options) {
  if (absl::Status status = cupti::ValidateCuptiOptions(options); !status.ok()) {
    return status;
  }
  static std::mutex mu;
  static std::optional<CuptiOptions> registered;
  std::lock_guard<std::mutex> lock(mu);
  if (registered.has_value()) {
    if (SameOptions(*registered, options)) return absl::OkStatus();
    return absl::FailedPreconditionError(
        "the CUPTI collector is already enabled with other CuptiOptions; "
        "the first call's options stay in force");
  }
  absl::Status status = RegisterDeviceCollector(
      "cupti", [options] { return std::make_unique<cupti::CuptiCollector>(options); });
  if (status.ok()) registered = options;
  return status;
}

}  // namespace neuronprof
