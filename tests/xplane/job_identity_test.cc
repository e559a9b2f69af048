// The job's rank identity: options over RANK / LOCAL_RANK / WORLD_SIZE,
// bad values named, the Task Environment stats and the per-rank file name.
#include "src/xplane/job_identity.h"

#include <catch2/catch.hpp>
#include <map>
#include <string>

#include "src/xplane/schema.h"
#include "src/xplane/xplane_builder.h"
#include "tests/xplane_read.h"

namespace neuronprof {
namespace xplane {
namespace {

// A fake environment: only the variables given are set.
EnvLookup Env(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

std::string Message(const absl::Status& status) { return std::string(status.message()); }

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST_CASE("no options and no variables: a single process, rank 0 of 1") {
  auto identity = ResolveJobIdentity({}, "ProfilerOptions::", Env({}));
  REQUIRE(identity.ok());
  CHECK(identity->rank == 0);
  CHECK(identity->local_rank == 0);
  CHECK(identity->world_size == 1);
  CHECK_FALSE(identity->distributed());
  CHECK(identity->backend.empty());
  CHECK(identity->master_port == 0);
}

TEST_CASE("torch launcher variables give the rank; options override them") {
  const auto env = Env({{"RANK", "5"},
                        {"LOCAL_RANK", "1"},
                        {"WORLD_SIZE", "8"},
                        {"MASTER_ADDR", "10.0.0.1"},
                        {"MASTER_PORT", "29500"}});
  auto from_env = ResolveJobIdentity({}, "ProfilerOptions::", env);
  REQUIRE(from_env.ok());
  CHECK(from_env->rank == 5);
  CHECK(from_env->local_rank == 1);
  CHECK(from_env->world_size == 8);
  CHECK(from_env->distributed());
  CHECK(from_env->master_addr == "10.0.0.1");
  CHECK(from_env->master_port == 29500);

  JobIdentityOptions options;
  options.rank = 2;
  options.world_size = 4;
  options.backend = "gloo";
  auto overridden = ResolveJobIdentity(options, "ProfilerOptions::", env);
  REQUIRE(overridden.ok());
  CHECK(overridden->rank == 2);
  CHECK(overridden->local_rank == 1);  // Still LOCAL_RANK: not overridden.
  CHECK(overridden->world_size == 4);
  CHECK(overridden->backend == "gloo");
}

TEST_CASE("bad rank values name the variable or the field") {
  struct Case {
    std::map<std::string, std::string> env;
    JobIdentityOptions options;
    const char* named;
  };
  JobIdentityOptions negative_rank;
  negative_rank.rank = -1;
  JobIdentityOptions rank_too_big;
  rank_too_big.rank = 2;
  rank_too_big.world_size = 2;
  JobIdentityOptions zero_world;
  zero_world.world_size = 0;
  JobIdentityOptions bad_backend;
  bad_backend.backend = "nc cl";
  const Case cases[] = {
      {{{"RANK", "one"}, {"WORLD_SIZE", "2"}}, {}, "environment variable RANK='one'"},
      {{{"RANK", "-1"}, {"WORLD_SIZE", "2"}}, {}, "environment variable RANK='-1'"},
      {{{"RANK", "+1"}, {"WORLD_SIZE", "2"}}, {}, "environment variable RANK"},
      {{{"WORLD_SIZE", "2x"}}, {}, "environment variable WORLD_SIZE"},
      {{{"WORLD_SIZE", "0"}}, {}, "environment variable WORLD_SIZE"},
      {{{"LOCAL_RANK", "abc"}}, {}, "environment variable LOCAL_RANK"},
      {{{"RANK", "4"}, {"WORLD_SIZE", "4"}}, {}, "environment variable RANK='4'"},
      {{{"RANK", "1"}}, {}, "environment variable RANK='1'"},  // World size 1.
      {{{"LOCAL_RANK", "3"}, {"RANK", "0"}, {"WORLD_SIZE", "2"}}, {}, "LOCAL_RANK"},
      {{{"MASTER_PORT", "http"}}, {}, "MASTER_PORT"},
      {{}, negative_rank, "ProfilerOptions::rank"},
      {{}, rank_too_big, "ProfilerOptions::rank"},
      {{}, zero_world, "ProfilerOptions::world_size"},
      {{}, bad_backend, "ProfilerOptions::backend"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.named);
    auto identity = ResolveJobIdentity(c.options, "ProfilerOptions::", Env(c.env));
    REQUIRE_FALSE(identity.ok());
    CHECK(absl::IsInvalidArgument(identity.status()));
    CHECK(Has(Message(identity.status()), c.named));
  }
}

TEST_CASE("the identity is stored on the Task Environment plane and read back") {
  tensorflow::profiler::XSpace space;
  SetProfileTimes(&space, 1000, 2000);
  JobIdentity identity;
  identity.rank = 3;
  identity.local_rank = 1;
  identity.world_size = 4;
  identity.backend = "gloo";
  identity.master_addr = "127.0.0.1";
  identity.master_port = 29500;
  AddJobIdentity(identity, &space);
  AddJobIdentity(identity, &space);  // Set, not appended.
  const auto* plane = FindPlane(space, kTaskEnvironmentPlaneName);
  REQUIRE(plane != nullptr);
  CHECK(plane->stats_size() == 2 + 6);  // Start, stop and the six above.
  CHECK(testing::FindPlaneStat(*plane, kRankStat)->int64_value() == 3);
  CHECK(testing::FindPlaneStat(*plane, kWorldSizeStat)->int64_value() == 4);
  CHECK(testing::PlaneStatText(*plane, kBackendStat) == "gloo");
  CHECK(ReadJobIdentity(space) == identity);
  // The profile times are still there.
  CHECK(ProfileStartEpochNs(space) == 1000);
  CHECK(ProfileStopEpochNs(space) == 2000);
  // A capture without the stats (another profiler's) is rank 0 of 1.
  CHECK(ReadJobIdentity(tensorflow::profiler::XSpace()) == JobIdentity());
}

TEST_CASE("file names are one per host and rank") {
  JobIdentity single;
  CHECK(RankedHostName("node1", single) == "node1");
  JobIdentity rank2;
  rank2.rank = 2;
  rank2.world_size = 4;
  CHECK(RankedHostName("node1", rank2) == "node1_rank2");
}

}  // namespace
}  // namespace xplane
}  // namespace neuronprof
