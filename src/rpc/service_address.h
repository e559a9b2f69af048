// "host:port" addresses of ProfilerService servers, as capture clients
// (TensorBoard, xprof, TSL's capture_profile) accept them.
#ifndef NEURONPROF_SRC_RPC_SERVICE_ADDRESS_H_
#define NEURONPROF_SRC_RPC_SERVICE_ADDRESS_H_

#include <string>
#include <vector>

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

// The most ports one range may name: a typo such as 9012-19012 must not
// start ten thousand captures.
inline constexpr int kMaxPortRange = 1024;

// As ParseServiceAddress, and also a port range "host:9012-9015" (the
// servers of the ranks of one host, each on 9012 + local_rank), which
// gives one address per port in order, each `address` "host:port".
// InvalidArgument for a reversed range, one of more than kMaxPortRange
// ports, or ports outside 1..65535.
absl::StatusOr<std::vector<ServiceAddress>> ParseServiceAddresses(const std::string& text);

}  // namespace rpc
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_RPC_SERVICE_ADDRESS_H_
