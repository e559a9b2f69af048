#include "src/rpc/profile_call_limit.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <atomic>

namespace neuronprof {
namespace rpc {
namespace {

std::atomic<int> g_calls{0};

}  // namespace

// One per call of any method; only a call that entered the limit leaves it.
class ProfileCallLimit::LeaveOnDestruction : public grpc::experimental::Interceptor {
 public:
  LeaveOnDestruction(ProfileCallLimit* limit, const grpc::ServerContextBase* context)
      : limit_(limit), context_(context) {}
  // gRPC destroys a call's interceptors with its context, after the sync
  // handler's response has been sent (or the send failed).
  ~LeaveOnDestruction() override { limit_->Leave(context_); }

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    methods->Proceed();
  }

 private:
  ProfileCallLimit* const limit_;
  const grpc::ServerContextBase* const context_;
};

int ProfileCallsForTesting() { return g_calls.load(); }

bool ProfileCallLimit::TryEnter(const grpc::ServerContextBase* context) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (static_cast<int>(calls_.size()) >= max_calls_) return false;
  calls_.insert(context);
  g_calls.fetch_add(1);
  return true;
}

void ProfileCallLimit::Leave(const grpc::ServerContextBase* context) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (calls_.erase(context) == 0) return;
    g_calls.fetch_sub(1);
  }
#ifdef __GLIBC__
  // A response is large and short-lived: glibc would keep its freed heap
  // (as for the flight recorder's dumps), and RSS would stay at its peak.
  malloc_trim(0);
#endif
}

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
ProfileCallLimit::CreateInterceptorFactory() {
  class Factory : public grpc::experimental::ServerInterceptorFactoryInterface {
   public:
    explicit Factory(ProfileCallLimit* limit) : limit_(limit) {}
    grpc::experimental::Interceptor* CreateServerInterceptor(
        grpc::experimental::ServerRpcInfo* info) override {
      return new LeaveOnDestruction(limit_, info->server_context());
    }

   private:
    ProfileCallLimit* const limit_;
  };
  return std::make_unique<Factory>(this);
}

}  // namespace rpc
}  // namespace neuronprof
