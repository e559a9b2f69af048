// A distributed job's rank identity (torch.distributed's rank, local rank,
// world size and backend): resolved once from options or the variables
// torch launchers set, stored on the Task Environment plane and read back
// by the exporters and the capture client. A single-process job is rank 0
// of world size 1.
#ifndef NEURONPROF_SRC_XPLANE_JOB_IDENTITY_H_
#define NEURONPROF_SRC_XPLANE_JOB_IDENTITY_H_

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "proto/xplane.pb.h"

namespace neuronprof {
namespace xplane {

struct JobIdentity {
  int rank = 0;
  int local_rank = 0;
  int world_size = 1;
  std::string backend;      // "gloo", "nccl", ...; empty = not known.
  std::string master_addr;  // MASTER_ADDR, when set.
  int master_port = 0;      // MASTER_PORT; 0 = not set.

  bool distributed() const { return world_size > 1; }
  bool operator==(const JobIdentity& other) const;
};

// What the user set; unset fields come from the environment.
struct JobIdentityOptions {
  std::optional<int> rank;
  std::optional<int> local_rank;
  std::optional<int> world_size;
  std::string backend;
};

// Returns the value of an environment variable, or nullptr when unset.
using EnvLookup = std::function<const char*(const char*)>;
const char* ProcessEnv(const char* name);  // getenv

// Each field from `options` when set, else from RANK, LOCAL_RANK,
// WORLD_SIZE (and MASTER_ADDR, MASTER_PORT), else rank 0 of 1.
// InvalidArgument names the field (`field_prefix` + "rank") or the variable
// ("environment variable RANK='x'") of a value that is not a number, is
// negative, or a rank (local rank) not below the world size.
absl::StatusOr<JobIdentity> ResolveJobIdentity(const JobIdentityOptions& options,
                                               std::string_view field_prefix,
                                               const EnvLookup& env = ProcessEnv);

// Sets the identity's stats on the Task Environment plane (adding it if
// missing; call after SetProfileTimes, which resets that plane's stats).
void AddJobIdentity(const JobIdentity& identity, tensorflow::profiler::XSpace* space);
// What AddJobIdentity stored; rank 0 of 1 when the space has none (other
// profilers' captures, older files).
JobIdentity ReadJobIdentity(const tensorflow::profiler::XSpace& space);
JobIdentity ReadJobIdentity(const tensorflow::profiler::XPlane& task_environment);

// The file name prefix of one rank: `host` for a single process,
// "<host>_rank<r>" when world_size > 1, so that the ranks of one host
// never write the same files.
std::string RankedHostName(std::string_view host, const JobIdentity& identity);

}  // namespace xplane
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_XPLANE_JOB_IDENTITY_H_
