#include "src/xplane/job_identity.h"

#include <cstdlib>
#include <limits>

#include "absl/strings/str_cat.h"
#include "src/xplane/plain_name.h"
#include "src/xplane/schema.h"
#include "src/xplane/xplane_builder.h"
#include "src/xplane/xplane_visitor.h"

namespace neuronprof {
namespace xplane {
namespace {

using tensorflow::profiler::XPlane;
using tensorflow::profiler::XSpace;

constexpr const char* kIdentityStats[] = {kRankStat,    kLocalRankStat,  kWorldSizeStat,
                                          kBackendStat, kMasterAddrStat, kMasterPortStat};

// Decimal digits only: "+1", " 1" or "1e3" in a launcher's variable is a
// mistake worth reporting, not a number to guess at.
std::optional<int> ParseCount(std::string_view text) {
  if (text.empty() || text.size() > 9) return std::nullopt;
  int value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  return value;
}

// One field: the option when set, else the variable, else `fallback`.
absl::Status ResolveField(const std::optional<int>& option, const std::string& field,
                          const char* variable, const EnvLookup& env, int fallback, int* value,
                          std::string* source) {
  if (option.has_value()) {
    *value = *option;
    *source = field;
    if (*value < 0) {
      return absl::InvalidArgumentError(absl::StrCat(field, " must not be negative, got ", *value));
    }
    return absl::OkStatus();
  }
  const char* text = env(variable);
  if (text == nullptr || *text == '\0') {
    *value = fallback;
    *source = absl::StrCat(field, " (default)");
    return absl::OkStatus();
  }
  *source = absl::StrCat("environment variable ", variable, "=", QuoteForMessage(text));
  const std::optional<int> parsed = ParseCount(text);
  if (!parsed.has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat(*source, " is not a non-negative integer (set ", field, " to override it)"));
  }
  *value = *parsed;
  return absl::OkStatus();
}

void RemoveIdentityStats(XPlane* plane) {
  auto* stats = plane->mutable_stats();
  int kept = 0;
  for (int i = 0; i < stats->size(); ++i) {
    const auto found = plane->stat_metadata().find(stats->Get(i).metadata_id());
    bool identity = false;
    if (found != plane->stat_metadata().end()) {
      for (const char* name : kIdentityStats) identity |= found->second.name() == name;
    }
    if (identity) continue;
    if (kept != i) stats->SwapElements(kept, i);
    ++kept;
  }
  stats->DeleteSubrange(kept, stats->size() - kept);
}

}  // namespace

bool JobIdentity::operator==(const JobIdentity& other) const {
  return rank == other.rank && local_rank == other.local_rank && world_size == other.world_size &&
         backend == other.backend && master_addr == other.master_addr &&
         master_port == other.master_port;
}

const char* ProcessEnv(const char* name) { return std::getenv(name); }

absl::StatusOr<JobIdentity> ResolveJobIdentity(const JobIdentityOptions& options,
                                               std::string_view field_prefix,
                                               const EnvLookup& env) {
  JobIdentity identity;
  std::string rank_source, local_source, world_source;
  const std::string prefix(field_prefix);
  if (auto s = ResolveField(options.world_size, prefix + "world_size", "WORLD_SIZE", env, 1,
                            &identity.world_size, &world_source);
      !s.ok()) {
    return s;
  }
  if (identity.world_size < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(world_source, ": the world size must be at least 1"));
  }
  if (auto s =
          ResolveField(options.rank, prefix + "rank", "RANK", env, 0, &identity.rank, &rank_source);
      !s.ok()) {
    return s;
  }
  // torchrun sets LOCAL_RANK beside RANK; a launcher that sets only RANK
  // runs one process per host, so the local rank is 0.
  if (auto s = ResolveField(options.local_rank, prefix + "local_rank", "LOCAL_RANK", env, 0,
                            &identity.local_rank, &local_source);
      !s.ok()) {
    return s;
  }
  if (identity.rank >= identity.world_size) {
    return absl::InvalidArgumentError(absl::StrCat(rank_source, ": rank ", identity.rank,
                                                   " must be below the world size ",
                                                   identity.world_size, " (", world_source, ")"));
  }
  if (identity.local_rank >= identity.world_size) {
    return absl::InvalidArgumentError(absl::StrCat(
        local_source, ": local rank ", identity.local_rank, " must be below the world size ",
        identity.world_size, " (", world_source, ")"));
  }
  identity.backend = options.backend;
  if (!identity.backend.empty()) {
    if (auto s = CheckPlainName(identity.backend, prefix + "backend"); !s.ok()) return s;
  }
  if (const char* addr = env("MASTER_ADDR"); addr != nullptr) identity.master_addr = addr;
  if (const char* port = env("MASTER_PORT"); port != nullptr && *port != '\0') {
    const std::optional<int> parsed = ParseCount(port);
    if (!parsed.has_value() || *parsed < 1 || *parsed > 65535) {
      return absl::InvalidArgumentError(
          absl::StrCat("environment variable MASTER_PORT=", QuoteForMessage(port),
                       " is not a port number 1..65535"));
    }
    identity.master_port = *parsed;
  }
  return identity;
}

void AddJobIdentity(const JobIdentity& identity, XSpace* space) {
  XPlane* environment = FindOrAddPlane(space, kTaskEnvironmentPlaneName);
  RemoveIdentityStats(environment);  // Set, not appended.
  XPlaneBuilder plane(environment);
  plane.AddPlaneStat(kRankStat, int64_t{identity.rank});
  plane.AddPlaneStat(kLocalRankStat, int64_t{identity.local_rank});
  plane.AddPlaneStat(kWorldSizeStat, int64_t{identity.world_size});
  if (!identity.backend.empty()) plane.AddPlaneStat(kBackendStat, identity.backend);
  if (!identity.master_addr.empty()) plane.AddPlaneStat(kMasterAddrStat, identity.master_addr);
  if (identity.master_port != 0) {
    plane.AddPlaneStat(kMasterPortStat, int64_t{identity.master_port});
  }
}

JobIdentity ReadJobIdentity(const XPlane& task_environment) {
  JobIdentity identity;
  const PlaneVisitor visitor(task_environment);
  auto read_int = [&](const char* name, int low, int* out) {
    const auto stat = visitor.PlaneStat(name);
    if (!stat) return;
    const std::optional<int64_t> value = stat->IntValue();
    if (value && *value >= low && *value <= std::numeric_limits<int>::max()) {
      *out = static_cast<int>(*value);
    }
  };
  read_int(kWorldSizeStat, 1, &identity.world_size);
  read_int(kRankStat, 0, &identity.rank);
  read_int(kLocalRankStat, 0, &identity.local_rank);
  read_int(kMasterPortStat, 0, &identity.master_port);
  // A file from elsewhere may be inconsistent: never a rank beyond the world.
  if (identity.rank >= identity.world_size) identity = JobIdentity();
  if (const auto stat = visitor.PlaneStat(kBackendStat)) {
    identity.backend = std::string(stat->StrValue().value_or(""));
  }
  if (const auto stat = visitor.PlaneStat(kMasterAddrStat)) {
    identity.master_addr = std::string(stat->StrValue().value_or(""));
  }
  return identity;
}

JobIdentity ReadJobIdentity(const XSpace& space) {
  const XPlane* plane = FindPlane(space, kTaskEnvironmentPlaneName);
  return plane == nullptr ? JobIdentity() : ReadJobIdentity(*plane);
}

std::string RankedHostName(std::string_view host, const JobIdentity& identity) {
  if (!identity.distributed()) return std::string(host);
  return absl::StrCat(std::string(host), "_rank", identity.rank);
}

}  // namespace xplane
}  // namespace neuronprof
