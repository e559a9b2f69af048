// Fuzz target: a ProfileRequest as the server receives it
// (src/rpc/profiler_service_impl.cc). First ProfilerServiceImpl::Validate
// (durations, start time, tracer levels, host, session and repository_root
// names, allowed_root), called directly: a refusal must carry a message
// that fits gRPC's metadata and is never INTERNAL or UNKNOWN (a malformed
// request is the client's error), else the target aborts. A request that
// passes goes through Profile() as gRPC would hand it over: a capture
// window of at most 2 ms and the XSpace in the response or saved under
// allowed_root.
//
// allowed_root is a scratch folder made at start-up (removed at exit); a
// repository_root starting with "$ROOT" is rewritten to it, so that seeds
// (and their mutations) reach the saving path.
#include <grpcpp/server_context.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "proto/profiler_service.pb.h"
#include "src/export/atomic_file.h"
#include "src/rpc/grpc_status.h"
#include "src/rpc/profiler_service_impl.h"
#include "tests/fuzz/quiet_protobuf.h"

namespace {

std::string& AllowedRoot() {
  static std::string* root = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/neuronprof_fuzz_XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) std::abort();
    std::atexit([] { neuronprof::exporter::RemoveTree(AllowedRoot()); });
    return new std::string(pattern);
  }();
  return *root;
}

neuronprof::rpc::ProfilerServiceImpl& Service() {
  static auto* service = [] {
    neuronprof::rpc::ServiceOptions options;
    options.allowed_root = AllowedRoot();
    options.max_duration_ms = 2;  // Valid requests capture for 1-2 ms.
    return new neuronprof::rpc::ProfilerServiceImpl(options);
  }();
  return *service;
}

// Aborts on a refusal a client could not act on.
void RequireClearRefusal(const absl::Status& status) {
  const bool server_fault =
      status.code() == absl::StatusCode::kInternal || status.code() == absl::StatusCode::kUnknown;
  if (!server_fault && !status.message().empty() &&
      status.message().size() <= neuronprof::rpc::kMaxStatusMessageBytes) {
    return;
  }
  std::fprintf(stderr, "unclear refusal (%zu bytes): %s\n", status.message().size(),
               status.ToString().substr(0, 300).c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tensorflow::ProfileRequest request;
  if (!request.ParseFromArray(data, static_cast<int>(size))) return 0;
  if (absl::StartsWith(request.repository_root(), "$ROOT")) {
    request.set_repository_root(AllowedRoot() + request.repository_root().substr(5));
  }
  uint64_t duration_ms = 0;
  std::string host;
  neuronprof::rpc::SaveTarget save;
  const absl::Status valid = Service().Validate(request, &duration_ms, &host, &save);
  if (!valid.ok()) {
    RequireClearRefusal(valid);
    return 0;
  }
  grpc::ServerContext context;
  tensorflow::ProfileResponse response;
  Service().Profile(&context, &request, &response);
  Service().call_limit().CallEnded(&context);  // What the server's interceptor does.
  return 0;
}
