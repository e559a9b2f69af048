// The process-wide capture server that ProfilerOptions::port asks for.
// Internal: started on first use and kept for the life of the process, as
// torch_xla's xp.start_server keeps its server, so that remote clients can
// capture the program after the Profiler's own window too.
#ifndef NEURONPROF_SRC_RPC_PROCESS_SERVER_H_
#define NEURONPROF_SRC_RPC_PROCESS_SERVER_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "src/xplane/job_identity.h"

namespace neuronprof {
namespace rpc {

// Makes sure this process serves tensorflow.ProfilerService on 127.0.0.1:port
// (1..65535). A server already started here on that port is reused; a new
// one saves profiles only under `allowed_root` and captures with an event
// buffer of `max_buffer_bytes`, reporting `identity` (the job's rank) in
// its captures. The error names the port and, for a rank of a
// distributed job, the rank and local rank.
absl::Status EnsureProcessServer(int port, const std::string& allowed_root,
                                 int64_t max_buffer_bytes, const xplane::JobIdentity& identity);

}  // namespace rpc
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_RPC_PROCESS_SERVER_H_
