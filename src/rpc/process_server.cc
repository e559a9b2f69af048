// One ProfilerServer per requested port, for the life of the process.
#include "src/rpc/process_server.h"

#include <map>
#include <memory>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "neuronprof/server.h"

namespace neuronprof {
namespace rpc {

absl::Status EnsureProcessServer(int port, const std::string& allowed_root,
                                 int64_t max_buffer_bytes, const xplane::JobIdentity& identity) {
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
  if (!server.ok()) {
    if (!identity.distributed()) return server.status();
    // Ranks share a base port: say which rank's port (port + local_rank)
    // collides with another program.
    return absl::Status(
        server.status().code(),
        absl::StrCat("rank ", identity.rank, " (local_rank ", identity.local_rank,
                     ") cannot serve on port ", port, ": ", server.status().message()));
  }
  servers->emplace(port, std::move(*server));
  return absl::OkStatus();
}

}  // namespace rpc
}  // namespace neuronprof
