// neuronprof::ProfilerServer: a grpc::Server hosting ProfilerServiceImpl.
#include <grpcpp/grpcpp.h>

#include <climits>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "neuronprof/server.h"
#include "src/rpc/parse_error_interceptor.h"
#include "src/rpc/profiler_service_impl.h"
#include "src/session/fork_guard.h"
#include "src/xplane/job_identity.h"

namespace neuronprof {

namespace {

rpc::ServiceOptions ToServiceOptions(const ProfilerServerOptions& options,
                                     xplane::JobIdentity identity) {
  rpc::ServiceOptions service;
  service.identity = std::move(identity);
  service.allowed_root = options.allowed_root;
  service.max_duration_ms = options.max_duration_ms;
  service.max_buffer_bytes = static_cast<uint64_t>(options.max_buffer_bytes);
  service.response_timeout_ms = options.response_timeout_ms;
  service.write_chrome_trace = options.write_chrome_trace;
  service.write_pytorch_trace = options.write_pytorch_trace;
  return service;
}

}  // namespace

class ProfilerServer::Impl {
 public:
  Impl(const ProfilerServerOptions& options, xplane::JobIdentity identity)
      : service_(ToServiceOptions(options, std::move(identity))) {}
  ~Impl() { Shutdown(); }

  const session::OwnerProcess owner;  // A forked child's copy is inert.

  absl::Status Start(const ProfilerServerOptions& options) {
    const std::string address =
        absl::StrCat(options.bind_all_interfaces ? "[::]" : "127.0.0.1", ":", options.port);
    grpc::ServerBuilder builder;
    int selected_port = 0;
    builder.AddListeningPort(address, grpc::InsecureServerCredentials(), &selected_port);
    // Without this, a second server could share a port that is in use.
    builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
    // Requests are small (rpc::kMaxRequestBytes bounds what one may make
    // the server parse); responses easily exceed gRPC's 4 MiB default.
    builder.SetMaxReceiveMessageSize(rpc::kMaxRequestBytes);
    builder.SetMaxSendMessageSize(INT_MAX);
    builder.RegisterService(&service_);
    std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>>
        interceptors;
    interceptors.push_back(rpc::CreateParseErrorInterceptorFactory());
    interceptors.push_back(service_.call_limit().CreateInterceptorFactory());
    builder.experimental().SetInterceptorCreators(std::move(interceptors));
    server_ = builder.BuildAndStart();
    if (server_ == nullptr || selected_port == 0) {
      if (server_ != nullptr) server_->Shutdown();
      server_.reset();
      return absl::UnavailableError(absl::StrCat("cannot listen on ", address,
                                                 " for the profiler server: port ", options.port,
                                                 " is in use or not allowed"));
    }
    port_ = selected_port;
    return absl::OkStatus();
  }

  int port() const { return port_; }

  void Shutdown() {
    std::lock_guard<std::mutex> lock(shutdown_mutex_);
    if (server_ == nullptr) return;
    service_.BeginShutdown();
    server_->Shutdown();
    server_->Wait();
    server_.reset();
  }

 private:
  rpc::ProfilerServiceImpl service_;
  std::unique_ptr<grpc::Server> server_;
  std::mutex shutdown_mutex_;
  int port_ = 0;
};

absl::StatusOr<std::unique_ptr<ProfilerServer>> ProfilerServer::Start(
    const ProfilerServerOptions& options) {
  if (options.port < 0 || options.port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("port must be 0..65535 (0 = any free port), got ", options.port));
  }
  if (options.max_duration_ms <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_duration_ms must be positive, got ", options.max_duration_ms));
  }
  constexpr int64_t kMinBuffer = 64 * 1024;
  constexpr int64_t kMaxBuffer = int64_t{1} << 40;
  if (options.max_buffer_bytes < kMinBuffer || options.max_buffer_bytes > kMaxBuffer) {
    return absl::InvalidArgumentError(absl::StrCat("max_buffer_bytes must be ", kMinBuffer, "..",
                                                   kMaxBuffer, ", got ", options.max_buffer_bytes));
  }
  constexpr int64_t kMaxResponseTimeoutMs = int64_t{1} << 40;  // 34 years: ns fit int64.
  if (options.response_timeout_ms <= 0 || options.response_timeout_ms > kMaxResponseTimeoutMs) {
    return absl::InvalidArgumentError(absl::StrCat("response_timeout_ms must be 1..",
                                                   kMaxResponseTimeoutMs, ", got ",
                                                   options.response_timeout_ms));
  }
  if (options.allowed_root.empty()) {
    return absl::InvalidArgumentError("allowed_root must not be empty");
  }
  xplane::JobIdentityOptions job;
  job.rank = options.rank;
  job.local_rank = options.local_rank;
  job.world_size = options.world_size;
  job.backend = options.backend;
  auto identity = xplane::ResolveJobIdentity(job, "ProfilerServerOptions::");
  if (!identity.ok()) return identity.status();
  auto impl = std::make_unique<Impl>(options, std::move(*identity));
  if (auto s = impl->Start(options); !s.ok()) return s;
  return std::unique_ptr<ProfilerServer>(new ProfilerServer(std::move(impl)));
}

ProfilerServer::ProfilerServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ProfilerServer::~ProfilerServer() {
  // A forked child has none of gRPC's threads: shutting down would wait
  // for them.
  if (impl_->owner.ForkedCopy()) session::OwnerProcess::LeaveAlone(impl_);
}
int ProfilerServer::port() const { return impl_->port(); }
void ProfilerServer::Shutdown() {
  if (!impl_->owner.ForkedCopy()) impl_->Shutdown();
}

absl::StatusOr<std::unique_ptr<ProfilerServer>> StartProfilerServer(int port) {
  ProfilerServerOptions options;
  options.port = port;
  return ProfilerServer::Start(options);
}

}  // namespace neuronprof
