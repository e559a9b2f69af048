#include "src/rpc/profile_call_limit.h"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "src/export/heap_trim.h"

namespace neuronprof {
namespace rpc {
namespace {

constexpr char kProfileMethod[] = "/tensorflow.ProfilerService/Profile";

std::atomic<int> g_calls{0};
std::atomic<int> g_dropped{0};
std::atomic<int> g_one_pass{0};

}  // namespace

int ProfileCallsForTesting() { return g_calls.load(); }
int DroppedResponsesForTesting() { return g_dropped.load(); }
int OnePassResponsesForTesting() { return g_one_pass.load(); }

// One per call of any method; only a call that entered the limit leaves it.
class ProfileCallLimit::CallInterceptor : public grpc::experimental::Interceptor {
 public:
  CallInterceptor(ProfileCallLimit* limit, const grpc::ServerContextBase* context, bool profile)
      : limit_(limit), context_(context), profile_(profile) {}
  // gRPC destroys a call's interceptors with its context, after the sync
  // handler's response has been sent (or the send failed).
  ~CallInterceptor() override { limit_->CallEnded(context_); }

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (profile_ && methods->QueryInterceptionHookPoint(
                        grpc::experimental::InterceptionHookPoints::PRE_SEND_MESSAGE)) {
      SendSerialized(methods);
    }
    methods->Proceed();
  }

 private:
  // Before the send: the bytes the handler serialized replace its message
  // (which holds no profile), so gRPC has nothing left to serialize.
  void SendSerialized(grpc::experimental::InterceptorBatchMethods* methods) {
    grpc::ByteBuffer serialized;
    if (!limit_->TakeSerialized(context_, &serialized)) return;
    methods->ModifySendMessage(nullptr);
    methods->GetSerializedSendMessage()->Swap(&serialized);
    g_one_pass.fetch_add(1);
  }

  ProfileCallLimit* const limit_;
  const grpc::ServerContextBase* const context_;
  const bool profile_;
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

void ProfileCallLimit::Responding(grpc::ServerContextBase* context, grpc::ByteBuffer* serialized) {
  const auto per_mib = std::chrono::seconds(serialized->Length() >> 20);
  grpc_call* call = context->c_call();
  if (call == nullptr) return;  // A handler called outside a server (the fuzz target).
  grpc_call_ref(call);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto [it, added] = sending_.insert(
        {context, {call, std::chrono::steady_clock::now() + response_timeout_ + per_mib, {}}});
    if (added) {
      it->second.serialized.Swap(serialized);
    } else {
      grpc_call_unref(call);  // Once per call; a second is ignored.
    }
  }
  wake_.notify_all();
}

bool ProfileCallLimit::TakeSerialized(const grpc::ServerContextBase* context,
                                      grpc::ByteBuffer* serialized) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = sending_.find(context);
  if (it == sending_.end() || !it->second.serialized.Valid()) return false;
  serialized->Swap(&it->second.serialized);
  return true;
}

void ProfileCallLimit::FreeLater(std::shared_ptr<void> garbage) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    garbage_.push_back(std::move(garbage));
  }
  wake_.notify_all();
}

void ProfileCallLimit::CallEnded(const grpc::ServerContextBase* context) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = sending_.find(context); it != sending_.end()) {
      grpc_call_unref(it->second.call);
      sending_.erase(it);
    }
    if (calls_.erase(context) == 0) return;
    g_calls.fetch_sub(1);
  }
  // A response is large and short-lived: RSS would otherwise stay at its peak.
  exporter::ReleaseFreedHeap();
}

void ProfileCallLimit::CancelOverdue() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    if (!garbage_.empty()) {
      // Freed here, not on the handler's thread: the send goes on meanwhile.
      std::vector<std::shared_ptr<void>> garbage;
      garbage.swap(garbage_);
      lock.unlock();
      garbage.clear();
      exporter::ReleaseFreedHeap();
      lock.lock();
      continue;
    }
    auto next = std::chrono::steady_clock::time_point::max();
    const auto now = std::chrono::steady_clock::now();
    for (auto it = sending_.begin(); it != sending_.end();) {
      if (it->second.deadline <= now) {
        // The client has not read its response: drop it. Its handler
        // thread, blocked in the send, comes back and ends the call.
        grpc_call_cancel_with_status(it->second.call, GRPC_STATUS_CANCELLED,
                                     "the client did not read its Profile response within "
                                     "ProfilerServerOptions::response_timeout_ms",
                                     nullptr);
        grpc_call_unref(it->second.call);
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
      const bool profile =
          info->method() != nullptr && std::strcmp(info->method(), kProfileMethod) == 0;
      return new CallInterceptor(limit_, info->server_context(), profile);
    }

   private:
    ProfileCallLimit* const limit_;
  };
  return std::make_unique<Factory>(this);
}

}  // namespace rpc
}  // namespace neuronprof
