// "host:port" addresses of ProfilerService servers, as capture clients
// (TensorBoard, xprof, TSL's capture_profile) accept them.
#ifndef NEURONPROF_SRC_RPC_SERVICE_ADDRESS_H_
#define NEURONPROF_SRC_RPC_SERVICE_ADDRESS_H_

#include <string>

#include "absl/status/statusor.h"

namespace neuronprof {
namespace rpc {

struct ServiceAddress {
  std::string address;  // As given, without a "grpc://" prefix.
  std::string host;     // Without IPv6 brackets: "worker0", "10.0.0.2", "::1".
  int port = 0;
  // The gRPC target: host:port, with brackets around an IPv6 host.
  std::string Target() const;
};

// Parses "host:port", "[v6addr]:port", each optionally prefixed with
// "grpc://". The port must be 1..65535. InvalidArgument says what is wrong.
absl::StatusOr<ServiceAddress> ParseServiceAddress(const std::string& text);

}  // namespace rpc
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_RPC_SERVICE_ADDRESS_H_
