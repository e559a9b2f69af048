#include "src/rpc/profile_call_limit.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <algorithm>
#include <atomic>

namespace neuronprof {
namespace rpc {
namespace {

std::atomic<int> g_calls{0};
std::atomic<int> g_dropped{0};

}  // namespace

int ProfileCallsForTesting() { return g_calls.load(); }
int DroppedResponsesForTesting() { return g_dropped.load(); }

// One per call of any method; only a call that entered the limit leaves it.
class ProfileCallLimit::CallInterceptor : public grpc::experimental::Interceptor {
 public:
  CallInterceptor(ProfileCallLimit* limit, const grpc::ServerContextBase* context)
      : limit_(limit), context_(context) {}
  // gRPC destroys a call's interceptors with its context, after the sync
  // handler's response has been sent (or the send failed).
  ~CallInterceptor() override { limit_->CallEnded(context_); }

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    // On the handler's thread once the send is over (sent, failed or
    // cancelled), before it goes on to destroy the call.
    if (methods->QueryInterceptionHookPoint(
            grpc::experimental::InterceptionHookPoints::POST_SEND_MESSAGE)) {
      limit_->Sent(context_);
    }
    methods->Proceed();
  }

 private:
  ProfileCallLimit* const limit_;
  const grpc::ServerContextBase* const context_;
};

ProfileCallLimit::ProfileCallLimit(int max_calls, int64_t response_timeout_ms)
    : max_calls_(max_calls), response_timeout_(response_timeout_ms) {
  watch_ = std::thread([this] { CancelOverdue(); });
}

ProfileCallLimit::~ProfileCallLimit() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  watch_.join();
}

bool ProfileCallLimit::TryEnter(const grpc::ServerContextBase* context) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (static_cast<int>(calls_.size()) >= max_calls_) return false;
  calls_.insert(context);
  g_calls.fetch_add(1);
  return true;
}

void ProfileCallLimit::Responding(grpc::ServerContextBase* context, size_t bytes) {
  const auto per_mib = std::chrono::seconds(bytes >> 20);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    sending_[context] = {context, std::chrono::steady_clock::now() + response_timeout_ + per_mib};
  }
  wake_.notify_all();
}

void ProfileCallLimit::Sent(const grpc::ServerContextBase* context) {
  std::lock_guard<std::mutex> lock(mutex_);
  sending_.erase(context);
}

void ProfileCallLimit::CallEnded(const grpc::ServerContextBase* context) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    sending_.erase(context);
    if (calls_.erase(context) == 0) return;
    g_calls.fetch_sub(1);
  }
#ifdef __GLIBC__
  // A response is large and short-lived: glibc would keep its freed heap
  // (as for the flight recorder's dumps), and RSS would stay at its peak.
  malloc_trim(0);
#endif
}

void ProfileCallLimit::CancelOverdue() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    auto next = std::chrono::steady_clock::time_point::max();
    const auto now = std::chrono::steady_clock::now();
    for (auto it = sending_.begin(); it != sending_.end();) {
      if (it->second.deadline <= now) {
        // The client has not read its response: drop it. Its handler
        // thread, blocked in the send, comes back and ends the call.
        it->second.context->TryCancel();
        g_dropped.fetch_add(1);
        it = sending_.erase(it);
      } else {
        next = std::min(next, it->second.deadline);
        ++it;
      }
    }
    if (next == std::chrono::steady_clock::time_point::max()) {
      wake_.wait(lock);
    } else {
      wake_.wait_until(lock, next);
    }
  }
}

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
ProfileCallLimit::CreateInterceptorFactory() {
  class Factory : public grpc::experimental::ServerInterceptorFactoryInterface {
   public:
    explicit Factory(ProfileCallLimit* limit) : limit_(limit) {}
    grpc::experimental::Interceptor* CreateServerInterceptor(
        grpc::experimental::ServerRpcInfo* info) override {
      return new CallInterceptor(limit_, info->server_context());
    }

   private:
    ProfileCallLimit* const limit_;
  };
  return std::make_unique<Factory>(this);
}

}  // namespace rpc
}  // namespace neuronprof
