// The multi-rank summary (src/analysis/ranks/rank_report.h) of a real job: two
// processes of a Gloo all_reduce loop (gloo_rank_main), each with its own
// Profiler, read back rank by rank. Rank 1 reaches every all_reduce after
// rank 0 by construction, so it is the straggler and rank 0 the one that
// waited.
#include <spawn.h>
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "src/analysis/ranks/rank_report.h"
#include "tests/test_util.h"
#include "tests/xplane_read.h"

extern char** environ;

namespace neuronprof {
namespace {

pid_t Spawn(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = -1;
  REQUIRE(posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ) == 0);
  return pid;
}

int Wait(pid_t pid) {
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST_CASE("two Gloo processes: steps, communication and the straggler of a real job") {
  testing::TempDir dir;
  constexpr int kSteps = 4;
  const std::string store = dir.path() + "/store";
  const std::string logdir[2] = {dir.path() + "/rank0", dir.path() + "/rank1"};
  pid_t pids[2];
  for (int r = 0; r < 2; ++r) {
    pids[r] = Spawn(
        {NEURONPROF_GLOO_RANK_MAIN, store, logdir[r], std::to_string(r), std::to_string(kSteps)});
  }
  for (pid_t pid : pids) REQUIRE(Wait(pid) == 0);

  std::vector<analysis::RankData> ranks;
  for (int r = 0; r < 2; ++r) {
    const std::string file = "node_rank" + std::to_string(r) + ".xplane.pb";
    ranks.push_back(analysis::ReadRankData(
        testing::ReadXSpace(logdir[r] + "/plugins/profile/job/" + file), file));
    CHECK(ranks.back().identity.rank == r);
    CHECK(ranks.back().steps.size() == kSteps);
    REQUIRE(ranks.back().collectives.size() == kSteps);
    for (const auto& c : ranks.back().collectives) {
      CHECK(c.op == "gloo:all_reduce");
      CHECK(c.bytes == 128 * 128 * 4);
      // Linked to the dispatcher enqueue, which starts before the work.
      CHECK(c.arrival_ps < c.start_ps);
    }
  }
  auto report = analysis::BuildRankReport(std::move(ranks));
  REQUIRE(report.ok());
  CHECK(report->world_size == 2);
  CHECK(report->missing.empty());
  CHECK(report->matched == kSteps);
  CHECK(report->unmatched == 0);
  CHECK(report->straggler == 1);
  CHECK(report->ranks[1].last_arrivals == kSteps);
  CHECK(report->ranks[1].waited_ps == 0);
  CHECK(report->ranks[0].waited_ps == report->ranks[1].caused_ps);
  CHECK(report->ranks[0].waited_ps > 0);
  REQUIRE(report->steps.size() == 2 * kSteps);
  for (const auto& row : report->steps) {
    INFO("rank " << row.rank << " step " << row.step);
    CHECK(row.compute_ps > 0);  // the matmul
    CHECK(row.comm_ps > 0);     // the all_reduce
    CHECK(row.compute_ps + row.comm_ps - row.overlap_ps + row.idle_ps == row.duration_ps);
    if (row.rank == 0) CHECK(row.waited_ps > 0);
  }
  REQUIRE(report->collectives.size() == 1);
  CHECK(report->collectives[0].calls == kSteps);
  CHECK(report->collectives[0].algbw_gbps > 0);
  CHECK(report->collectives[0].busbw_gbps == Approx(report->collectives[0].algbw_gbps));
}

}  // namespace
}  // namespace neuronprof
