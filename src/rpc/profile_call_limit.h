// How many Profile calls one server serves at once, and how long a client
// may take to read a response. A call counts from its handler's start
// until gRPC is done with it: a response (up to the capture's size, often
// hundreds of MB) is held until the client reads it, so clients that
// never read would otherwise make the server hold one per call, and a
// server thread with it, for as long as they stay connected.
#ifndef NEURONPROF_SRC_RPC_PROFILE_CALL_LIMIT_H_
#define NEURONPROF_SRC_RPC_PROFILE_CALL_LIMIT_H_

#include <grpc/grpc.h>
#include <grpcpp/server_context.h>
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/server_interceptor.h>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace neuronprof {
namespace rpc {

class ProfileCallLimit {
 public:
  // `response_timeout_ms`: how long a response may wait for its client,
  // plus a second per MiB of it.
  ProfileCallLimit(int max_calls, int64_t response_timeout_ms);
  ~ProfileCallLimit();
  ProfileCallLimit(const ProfileCallLimit&) = delete;
  ProfileCallLimit& operator=(const ProfileCallLimit&) = delete;

  int max_calls() const { return max_calls_; }

  // Takes a place for the call of `context`, false when max_calls calls
  // hold one. The place is given back once gRPC is done with the call, by
  // the interceptor CreateInterceptorFactory makes: a server using this
  // must install it.
  bool TryEnter(const grpc::ServerContextBase* context);
  // The call's handler returns OK now, its response serialized in
  // `serialized` (taken from there; of the size it announced): the
  // interceptor sends these bytes instead of the handler's message. If its
  // client has not taken them by the timeout, the call is cancelled and
  // the bytes dropped.
  void Responding(grpc::ServerContextBase* context, grpc::ByteBuffer* serialized);
  // Frees `garbage` (what a response was serialized from) on the watch
  // thread, then lets the allocator return the heap to the system: the
  // send does not wait for the free.
  void FreeLater(std::shared_ptr<void> garbage);

  // Interceptors that hand gRPC a Profile response's serialized bytes
  // (Responding) in place of its message; they call CallEnded when gRPC
  // destroys the call.
  std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface> CreateInterceptorFactory();
  // Gives the call's place back (if it took one) and lets the allocator
  // return the freed response to the system. Only for a caller of the
  // handler outside a grpc::Server (the fuzz target) besides the
  // interceptor: `context` must not be used by a call any more.
  void CallEnded(const grpc::ServerContextBase* context);

 private:
  class CallInterceptor;
  void CancelOverdue();  // The watch thread.
  // Moves the bytes Responding gave for the call into `serialized`; false
  // if there are none (not a response with emit_xspace, or taken).
  bool TakeSerialized(const grpc::ServerContextBase* context, grpc::ByteBuffer* serialized);

  const int max_calls_;
  const std::chrono::milliseconds response_timeout_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::set<const grpc::ServerContextBase*> calls_;  // Guarded by mutex_.
  // Responses being sent, with their deadlines, until the call ends. The
  // core call is held by a reference of its own, so cancelling it is safe
  // whatever the C++ call's objects are doing meanwhile.
  struct Sending {
    grpc_call* call;
    std::chrono::steady_clock::time_point deadline;
    grpc::ByteBuffer serialized;  // Until the interceptor takes it.
  };
  std::map<const grpc::ServerContextBase*, Sending> sending_;
  // What responses were serialized from, freed by the watch thread.
  std::vector<std::shared_ptr<void>> garbage_;
  bool stopping_ = false;  // Guarded by mutex_.
  std::thread watch_;
};

// For tests: the Profile calls holding a place now, the responses
// dropped for clients that did not read them, and the responses sent as
// the bytes their handler serialized (process-wide).
int ProfileCallsForTesting();
int DroppedResponsesForTesting();
int OnePassResponsesForTesting();

}  // namespace rpc
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_RPC_PROFILE_CALL_LIMIT_H_
