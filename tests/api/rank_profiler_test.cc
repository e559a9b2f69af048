// A Profiler in a distributed job: the rank identity from its options or
// the environment, validated, stored in the XSpace and the Kineto trace,
// one file name per host and rank, and the capture server on
// port + local_rank.
#include <stdlib.h>

#include <catch2/catch.hpp>
#include <string>

#include "neuronprof/neuronprof.h"
#include "src/api/run_writer.h"
#include "src/export/atomic_file.h"
#include "src/export/gzip.h"
#include "src/xplane/job_identity.h"
#include "src/xplane/schema.h"
#include "src/xplane/xplane_builder.h"
#include "tests/rpc/rpc_test_util.h"
#include "tests/test_util.h"

namespace neuronprof {
namespace {

using testing::TempDir;

ProfilerOptions TestOptions(const std::string& logdir) {
  ProfilerOptions options;
  options.logdir = logdir;
  options.port = 0;
  options.host_name = "testhost";
  options.ms_duration = 60000;
  return options;
}

std::string Message(const absl::Status& status) { return std::string(status.message()); }

using testing::ScopedEnv;

std::string KinetoJson(const std::string& path) {
  auto gz = exporter::ReadFile(path);
  REQUIRE(gz.ok());
  auto json = exporter::GzipDecompress(*gz);
  REQUIRE(json.ok());
  return *json;
}

TEST_CASE("rank options are validated: the field or the variable is named") {
  TempDir dir;
  {
    ProfilerOptions options = TestOptions(dir.path());
    options.rank = 4;
    options.world_size = 4;
    const absl::Status status = ValidateOptions(options);
    CHECK(absl::IsInvalidArgument(status));
    CHECK(Message(status).find("ProfilerOptions::rank") != std::string::npos);
  }
  {
    ScopedEnv world("WORLD_SIZE", "four");
    Profiler profiler(TestOptions(dir.path()));
    CHECK(absl::IsInvalidArgument(profiler.status()));
    CHECK(Message(profiler.status()).find("WORLD_SIZE='four'") != std::string::npos);
  }
  {
    ProfilerOptions options = TestOptions(dir.path());
    options.port = 65535;
    options.rank = 1;
    options.local_rank = 1;
    options.world_size = 2;
    const absl::Status status = ValidateOptions(options);
    CHECK(absl::IsInvalidArgument(status));
    CHECK(Message(status).find("port_offset_by_local_rank") != std::string::npos);
    options.port_offset_by_local_rank = false;
    CHECK(ValidateOptions(options).ok());
  }
  CHECK_FALSE(testing::Exists(dir.path() + "/plugins"));
}

TEST_CASE("a rank's files are named <host>_rank<r> and carry its identity") {
  TempDir dir;
  ProfilerOptions options = TestOptions(dir.path());
  options.run_name = "run1";
  options.rank = 1;
  options.world_size = 2;
  options.backend = "gloo";
  ScopedEnv local("LOCAL_RANK", "1");  // From the environment: not set above.
  Profiler profiler(options);
  { ScopedTrace marker("rank_marker"); }
  auto result = profiler.Stop();
  REQUIRE(result.ok());
  const std::string run_dir = dir.path() + "/plugins/profile/run1";
  CHECK(testing::ListDir(run_dir) ==
        std::vector<std::string>{"testhost_rank1.trace.json.gz", "testhost_rank1.xplane.pb"});
  CHECK(testing::ListDir(dir.path() + "/run1") ==
        std::vector<std::string>{"testhost_rank1.pt.trace.json.gz"});

  const auto space = testing::ReadXSpace(run_dir + "/testhost_rank1.xplane.pb");
  REQUIRE(space.hostnames_size() == 1);
  CHECK(space.hostnames(0) == "testhost");  // The machine, not the file name.
  const auto* environment = xplane::FindPlane(space, xplane::kTaskEnvironmentPlaneName);
  REQUIRE(environment != nullptr);
  CHECK(testing::PlaneStatText(*environment, xplane::kRankStat) == "1");
  CHECK(testing::PlaneStatText(*environment, xplane::kLocalRankStat) == "1");
  CHECK(testing::PlaneStatText(*environment, xplane::kWorldSizeStat) == "2");
  CHECK(testing::PlaneStatText(*environment, xplane::kBackendStat) == "gloo");

  // Keys as torch.profiler writes them; HTA and the plugin read them.
  const std::string json = KinetoJson(dir.path() + "/run1/testhost_rank1.pt.trace.json.gz");
  CHECK(json.find("\"distributedInfo\": {\"backend\": \"gloo\", \"rank\": 1, \"world_size\": 2}") !=
        std::string::npos);
}

// Each rank of a job runs its own Profiler with the launcher's run_name.
absl::StatusOr<ProfileResult> ProfileRank(const std::string& logdir, int rank) {
  ProfilerOptions options = TestOptions(logdir);
  options.run_name = "job1";
  options.rank = rank;
  options.world_size = 2;
  Profiler profiler(options);
  { ScopedTrace marker("rank_marker"); }
  return profiler.Stop();
}

TEST_CASE("the ranks of a job given one run_name write into one run folder") {
  TempDir dir;
  auto rank1 = ProfileRank(dir.path(), 1);
  REQUIRE(rank1.ok());
  auto rank0 = ProfileRank(dir.path(), 0);
  REQUIRE(rank0.ok());
  CHECK(rank0->run_dir == rank1->run_dir);
  const std::string run_dir = dir.path() + "/plugins/profile/job1";
  CHECK(testing::ListDir(run_dir) ==
        std::vector<std::string>{"testhost_rank0.trace.json.gz", "testhost_rank0.xplane.pb",
                                 "testhost_rank1.trace.json.gz", "testhost_rank1.xplane.pb"});
  CHECK(testing::ListDir(dir.path() + "/job1") ==
        std::vector<std::string>{"testhost_rank0.pt.trace.json.gz",
                                 "testhost_rank1.pt.trace.json.gz"});
  const auto before = exporter::ReadFile(run_dir + "/testhost_rank0.xplane.pb");
  REQUIRE(before.ok());

  // Rank 0 again under the same name: its files stay, the new capture is
  // kept elsewhere (in TMPDIR, here the test's folder), and the error says why.
  ScopedEnv tmpdir("TMPDIR", dir.path().c_str());
  auto again = ProfileRank(dir.path(), 0);
  REQUIRE_FALSE(again.ok());
  CHECK(again.status().code() == absl::StatusCode::kAlreadyExists);
  CHECK_THAT(Message(again.status()),
             Catch::Contains("already holds rank 0's testhost_rank0.xplane.pb") &&
                 Catch::Contains("was saved to"));
  CHECK(exporter::ReadFile(run_dir + "/testhost_rank0.xplane.pb").value() == *before);
  CHECK(testing::ListDir(run_dir).size() == 4);
}

TEST_CASE("a single process keeps its plain file names and rank 0 of 1") {
  TempDir dir;
  ProfilerOptions options = TestOptions(dir.path());
  options.run_name = "run1";
  Profiler profiler(options);
  { ScopedTrace marker("single_marker"); }
  auto result = profiler.Stop();
  REQUIRE(result.ok());
  const std::string json = KinetoJson(dir.path() + "/run1/testhost.pt.trace.json.gz");
  CHECK(json.find("\"distributedInfo\": {\"rank\": 0, \"world_size\": 1}") != std::string::npos);
  const auto space = testing::ReadXSpace(dir.path() + "/plugins/profile/run1/testhost.xplane.pb");
  CHECK(xplane::ReadJobIdentity(space) == xplane::JobIdentity());
}

TEST_CASE("the capture server's port is port + local_rank unless turned off") {
  ProfilerOptions options;
  options.port = 9012;
  xplane::JobIdentity identity;
  identity.rank = 3;
  identity.local_rank = 3;
  identity.world_size = 4;
  CHECK(api::ServerPort(options, identity) == 9015);
  options.port_offset_by_local_rank = false;
  CHECK(api::ServerPort(options, identity) == 9012);
  options.port = 0;
  CHECK(api::ServerPort(options, identity) == 0);  // No server at all.
  // A real server on port + local_rank: tests/rpc/profiler_server_test.cc
  // (gRPC's threads are not TSan-instrumented, so servers are tested there).
}

}  // namespace
}  // namespace neuronprof
