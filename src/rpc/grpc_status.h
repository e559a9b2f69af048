// absl::Status <-> grpc::Status. Both use the same canonical codes, so the
// mapping is a cast.
#ifndef NEURONPROF_SRC_RPC_GRPC_STATUS_H_
#define NEURONPROF_SRC_RPC_GRPC_STATUS_H_

#include <grpcpp/support/status.h>

#include <cstddef>
#include <string>

#include "absl/status/status.h"

namespace neuronprof {
namespace rpc {

// gRPC drops a status whose message overflows its metadata limit (the
// client then sees RESOURCE_EXHAUSTED "Stream removed"); messages are kept
// well below it. Echoed input is already cut (exporter::QuoteForMessage).
inline constexpr size_t kMaxStatusMessageBytes = 4096;

inline grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  std::string message(status.message());
  if (message.size() > kMaxStatusMessageBytes) {
    message.resize(kMaxStatusMessageBytes);
    message += "...";
  }
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), message);
}

inline absl::StatusCode ToAbslCode(grpc::StatusCode code) {
  return static_cast<absl::StatusCode>(code);
}

}  // namespace rpc
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_RPC_GRPC_STATUS_H_
