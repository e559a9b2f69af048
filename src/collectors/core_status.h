// core's results as the absl::Status the modules above core return: the
// same code and the same message. Core itself stays free of Abseil (it is
// libneuronprof_markers; see src/core/result.h), so the conversion is here.
#ifndef NEURONPROF_SRC_COLLECTORS_CORE_STATUS_H_
#define NEURONPROF_SRC_COLLECTORS_CORE_STATUS_H_

#include "absl/status/status.h"
#include "src/core/result.h"

namespace neuronprof {
namespace collectors {

// core::ErrorCode's values are absl::StatusCode's: checked, then cast.
static_assert(static_cast<int>(core::ErrorCode::kOk) == static_cast<int>(absl::StatusCode::kOk));
static_assert(static_cast<int>(core::ErrorCode::kInvalidArgument) ==
              static_cast<int>(absl::StatusCode::kInvalidArgument));
static_assert(static_cast<int>(core::ErrorCode::kResourceExhausted) ==
              static_cast<int>(absl::StatusCode::kResourceExhausted));
static_assert(static_cast<int>(core::ErrorCode::kFailedPrecondition) ==
              static_cast<int>(absl::StatusCode::kFailedPrecondition));

inline absl::Status ToStatus(const core::Result<>& result) {
  if (result.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(result.code()), result.message());
}

}  // namespace collectors
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_COLLECTORS_CORE_STATUS_H_
