// gRPC's sync server answers a request it cannot parse (a string field
// holding bytes that are not UTF-8, a truncated message) with INTERNAL and
// an empty message before any handler runs. This interceptor turns that
// answer into INVALID_ARGUMENT naming the method and the fields to check.
#ifndef NEURONPROF_SRC_RPC_PARSE_ERROR_INTERCEPTOR_H_
#define NEURONPROF_SRC_RPC_PARSE_ERROR_INTERCEPTOR_H_

#include <grpcpp/support/server_interceptor.h>

#include <memory>

namespace neuronprof {
namespace rpc {

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
CreateParseErrorInterceptorFactory();

}  // namespace rpc
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_RPC_PARSE_ERROR_INTERCEPTOR_H_
