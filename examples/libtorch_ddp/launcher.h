// The launcher half of libtorch_ddp: starts one process per rank, as
// torchrun does, and watches them.
#ifndef NEURONPROF_EXAMPLES_LIBTORCH_DDP_LAUNCHER_H_
#define NEURONPROF_EXAMPLES_LIBTORCH_DDP_LAUNCHER_H_

#include <string>
#include <vector>

namespace ddp_example {

struct LaunchOptions {
  int world_size = 4;
  std::string master_addr = "127.0.0.1";
  int master_port = 0;  // 0: a free loopback port, chosen here.
  // Arguments every rank gets after its own program path.
  std::vector<std::string> rank_args;
};

// Runs /proc/self/exe once per rank with RANK, LOCAL_RANK, WORLD_SIZE,
// LOCAL_WORLD_SIZE, MASTER_ADDR and MASTER_PORT set, and waits for them.
// SIGINT/SIGTERM are passed on to every rank. When a rank exits with a
// non-zero status or is killed, it is reported (which rank, status or
// signal), the others get SIGTERM and, 10 s later, SIGKILL.
// Returns 0 when every rank exited 0, else 1.
int LaunchRanks(const LaunchOptions& options);

}  // namespace ddp_example

#endif  // NEURONPROF_EXAMPLES_LIBTORCH_DDP_LAUNCHER_H_
