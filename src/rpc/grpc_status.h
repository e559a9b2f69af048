// absl::Status <-> grpc::Status. Both use the same canonical codes, so the
// mapping is a cast.
#ifndef NEURONPROF_SRC_RPC_GRPC_STATUS_H_
#define NEURONPROF_SRC_RPC_GRPC_STATUS_H_

#include <string>

#include <grpcpp/support/status.h>

#include "absl/status/status.h"

namespace neuronprof {
namespace rpc {

inline grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()),
                      std::string(status.message()));
}

inline absl::StatusCode ToAbslCode(grpc::StatusCode code) {
  return static_cast<absl::StatusCode>(code);
}

}  // namespace rpc
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_RPC_GRPC_STATUS_H_
