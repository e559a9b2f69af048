// One ProfilerServer per requested port, for the life of the process.
#include "src/rpc/process_server.h"

#include <map>
#include <memory>
#include <mutex>

#include "neuronprof/server.h"

namespace neuronprof {
namespace rpc {

absl::Status EnsureProcessServer(int port, const std::string& allowed_root,
                                 int64_t max_buffer_bytes,
                                 const xplane::JobIdentity& identity) {
  // Never destroyed: gRPC's threads may still run during static
  // destruction, and the servers must outlive every Profiler.
  static std::mutex* mutex = new std::mutex;
  static auto* servers = new std::map<int, std::unique_ptr<ProfilerServer>>;
  std::lock_guard<std::mutex> lock(*mutex);
  if (servers->count(port) != 0) return absl::OkStatus();
  ProfilerServerOptions options;
  options.port = port;
  options.allowed_root = allowed_root;
  options.max_buffer_bytes = max_buffer_bytes;
  options.rank = identity.rank;
  options.local_rank = identity.local_rank;
  options.world_size = identity.world_size;
  options.backend = identity.backend;
  auto server = ProfilerServer::Start(options);
  if (!server.ok()) return server.status();
  servers->emplace(port, std::move(*server));
  return absl::OkStatus();
}

}  // namespace rpc
}  // namespace neuronprof
