// How many Profile calls one server serves at once. A call counts from its
// handler's start until gRPC has sent its response or given up on the
// client: a response (up to the capture's size, often hundreds of MB) is
// held until the client reads it, so clients that never read would
// otherwise make the server hold one per call.
#ifndef NEURONPROF_SRC_RPC_PROFILE_CALL_LIMIT_H_
#define NEURONPROF_SRC_RPC_PROFILE_CALL_LIMIT_H_

#include <memory>
#include <mutex>
#include <set>

#include <grpcpp/server_context.h>
#include <grpcpp/support/server_interceptor.h>

namespace neuronprof {
namespace rpc {

class ProfileCallLimit {
 public:
  explicit ProfileCallLimit(int max_calls) : max_calls_(max_calls) {}

  int max_calls() const { return max_calls_; }

  // Takes a place for the call of `context`, false when max_calls calls
  // hold one. The place is given back once gRPC is done with the call, by
  // the interceptor CreateInterceptorFactory makes: a server using this
  // must install it.
  bool TryEnter(const grpc::ServerContextBase* context);

  // Interceptors that give a call's place back when the call is destroyed
  // (after its response was sent, or the client went), and let the
  // allocator return the freed response to the system.
  std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
  CreateInterceptorFactory();

 private:
  class LeaveOnDestruction;
  void Leave(const grpc::ServerContextBase* context);

  const int max_calls_;
  std::mutex mutex_;
  std::set<const grpc::ServerContextBase*> calls_;  // Guarded by mutex_.
};

// For tests: the Profile calls holding a place now (process-wide).
int ProfileCallsForTesting();

}  // namespace rpc
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_RPC_PROFILE_CALL_LIMIT_H_
