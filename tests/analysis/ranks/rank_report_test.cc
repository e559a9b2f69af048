// The multi-rank summary (src/analysis/ranks/rank_report.h) over synthetic ranks
// of a DDP job (tests/analysis/rank_space.h): per-step compute,
// communication, overlap and idle time, the straggler and the waiting it
// caused, the collectives table, and the refusals of runs that are not
// one job's ranks.
#include "src/analysis/ranks/rank_report.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "src/analysis/report/rank_sections.h"
#include "tests/analysis/rank_space.h"

namespace neuronprof {
namespace {

using analysis::RankData;
using analysis::RankReport;
using testing::RankSpaceOptions;

constexpr int64_t kUs = 1000000;  // ps

RankData Rank(RankSpaceOptions options) {
  return analysis::ReadRankData(testing::MakeRankSpace(options),
                                "host_rank" + std::to_string(options.rank) + ".xplane.pb");
}

std::vector<RankData> Ranks(const std::vector<int>& ranks, RankSpaceOptions options = {}) {
  std::vector<RankData> out;
  for (int r : ranks) {
    options.rank = r;
    out.push_back(Rank(options));
  }
  return out;
}

const analysis::RankStepRow& Row(const RankReport& report, int rank, int64_t step) {
  for (const auto& row : report.steps) {
    if (row.rank == rank && row.step == step) return row;
  }
  FAIL("no row for rank " << rank << " step " << step);
  return report.steps.front();
}

TEST_CASE("per rank and step: compute, communication, overlap, idle and waiting") {
  auto report = analysis::BuildRankReport(Ranks({0, 1, 2, 3}));
  REQUIRE(report.ok());
  CHECK(report->world_size == 4);
  CHECK(report->backend == "gloo");
  CHECK(report->missing.empty());
  REQUIRE(report->steps.size() == 12);  // 3 steps x 4 ranks
  for (int64_t step = 0; step < 3; ++step) {
    INFO("step " << step);
    const auto& other = Row(*report, 0, step);
    CHECK(other.duration_ps == 1000 * kUs);
    CHECK(other.start_ps == step * 1000 * kUs);
    CHECK(other.compute_ps == 540 * kUs);  // aten::cat in the Gloo work is not compute
    CHECK(other.comm_ps == 300 * kUs);     // enqueue 400..410 and work 405..700
    CHECK(other.overlap_ps == 150 * kUs);  // the backward op during the all_reduce
    CHECK(other.idle_ps == 310 * kUs);
    CHECK(other.waited_ps == 100 * kUs);  // for rank 3's enqueue at 500
    const auto& straggler = Row(*report, 3, step);
    CHECK(straggler.compute_ps == 640 * kUs);
    CHECK(straggler.comm_ps == 200 * kUs);
    CHECK(straggler.overlap_ps == 150 * kUs);
    CHECK(straggler.idle_ps == 310 * kUs);
    CHECK(straggler.waited_ps == 0);
  }
  REQUIRE(report->ranks.size() == 4);
  CHECK(report->ranks[1].steps == 3);
  CHECK(report->ranks[1].compute_ps == 3 * 540 * kUs);
  CHECK(report->ranks[1].waited_ps == 300 * kUs);
}

TEST_CASE("the straggler is the rank the others waited for, with the time they lost") {
  auto report = analysis::BuildRankReport(Ranks({0, 1, 2, 3}));
  REQUIRE(report.ok());
  CHECK(report->matched == 3);
  CHECK(report->unmatched == 0);
  CHECK(report->straggler == 3);
  CHECK(report->ranks[3].last_arrivals == 3);
  CHECK(report->ranks[3].caused_ps == 900 * kUs);  // 3 ranks x 100 us x 3 steps
  CHECK(report->total_wait_ps == 900 * kUs);
  for (int r = 0; r < 3; ++r) CHECK(report->ranks[r].last_arrivals == 0);

  const std::string text = analysis::FormatRankReportText(*report, 20);
  CHECK_THAT(text, Catch::Contains("Distributed job: 4 ranks of world size 4, backend gloo"));
  CHECK_THAT(text, Catch::Contains(
                       "Straggler: rank 3, last to arrive in 3 of 3 collectives; the other ranks "
                       "lost 0.900 ms waiting for it (100.0% of all waiting"));
  CHECK_THAT(text, Catch::Contains("Every rank captured for 3.000 ms together"));

  SECTION("another straggler") {
    RankSpaceOptions options;
    options.straggler = 1;
    options.late_us = 50;
    auto other = analysis::BuildRankReport(Ranks({0, 1, 2, 3}, options));
    REQUIRE(other.ok());
    CHECK(other->straggler == 1);
    CHECK(other->ranks[1].caused_ps == 450 * kUs);
    CHECK(Row(*other, 2, 1).waited_ps == 50 * kUs);
  }
  SECTION("no late rank: no straggler") {
    RankSpaceOptions options;
    options.late_us = 0;
    auto even = analysis::BuildRankReport(Ranks({0, 1, 2, 3}, options));
    REQUIRE(even.ok());
    CHECK(even->straggler == -1);
    CHECK(even->total_wait_ps == 0);
    CHECK_THAT(analysis::FormatRankReportText(*even, 20),
               Catch::Contains("No straggler: no rank waited for another in the 3 collectives"));
  }
}

TEST_CASE("the collectives table: bytes, calls, time, waiting, algbw and busbw") {
  auto report = analysis::BuildRankReport(Ranks({0, 1, 2, 3}));
  REQUIRE(report.ok());
  REQUIRE(report->collectives.size() == 1);
  const auto& row = report->collectives[0];
  CHECK(row.op == "gloo:all_reduce");
  CHECK(row.collective == "all_reduce");
  CHECK(row.calls == 3);
  CHECK(row.bytes_per_call == testing::kAllReduceBytes);
  // A call's span: 295 us on three ranks, 195 us on the straggler; mean 270.
  CHECK(row.total_ps == 3 * 270 * kUs);
  CHECK(row.wait_ps == 900 * kUs);
  const double algbw = testing::kAllReduceBytes / 270e-6 / 1e9;
  CHECK(row.algbw_gbps == Approx(algbw));
  CHECK(row.busbw_gbps == Approx(algbw * 1.5));  // 2(n-1)/n, n = 4
  const std::string csv = analysis::FormatCollectivesCsv(*report);
  CHECK_THAT(csv, Catch::StartsWith("op,collective,calls,bytes_per_call,total_us,mean_us,"
                                    "waiting_us,algbw_gbps,busbw_gbps\n"));
  CHECK_THAT(csv, Catch::Contains("gloo:all_reduce,all_reduce,3,4194304,810.000,270.000,"
                                  "900.000,15.534,23.302\n"));
}

TEST_CASE("a rank whose comm_seq count began elsewhere is matched by time") {
  std::vector<RankData> ranks = Ranks({0, 2, 3});
  RankSpaceOptions late_start;
  late_start.rank = 1;
  late_start.first_seq = 7;  // its capture began after 7 more collectives
  ranks.push_back(Rank(late_start));
  auto report = analysis::BuildRankReport(std::move(ranks));
  REQUIRE(report.ok());
  CHECK(report->matched == 3);
  CHECK(report->unmatched == 0);
  CHECK(report->ranks[3].caused_ps == 900 * kUs);
}

TEST_CASE("a collective only some ranks recorded is counted, not in the waiting") {
  // Rank 1's capture began after step 0's all_reduce (and counted from 7).
  std::vector<RankData> ranks = Ranks({0, 2, 3});
  RankSpaceOptions late_start;
  late_start.rank = 1;
  late_start.first_seq = 7;
  ranks.push_back(Rank(late_start));
  ranks.back().collectives.erase(ranks.back().collectives.begin());
  auto report = analysis::BuildRankReport(std::move(ranks));
  REQUIRE(report.ok());
  CHECK(report->matched == 2);
  CHECK(report->unmatched == 1);
  CHECK(report->ranks[3].caused_ps == 600 * kUs);  // 3 ranks x 100 us x 2 steps
  CHECK(Row(*report, 0, 0).waited_ps == 0);        // step 0: not every rank recorded it
  CHECK(Row(*report, 0, 1).waited_ps == 100 * kUs);
  REQUIRE(report->collectives.size() == 1);
  CHECK(report->collectives[0].calls == 3);
  CHECK_THAT(analysis::FormatRankReportText(*report, 20),
             Catch::Contains("1 collective recorded by some ranks only (capture edges, a rank "
                             "gone) is in the collectives table, not in the waiting figures"));
}

TEST_CASE("missing ranks are ranges: memory follows the files, not a claimed world size") {
  using analysis::RankRange;
  CHECK(analysis::MissingRanks(4, {0, 1, 2, 3}).empty());
  CHECK(analysis::MissingRanks(8, {2, 3, 7}) == std::vector<RankRange>{{0, 1}, {4, 6}});
  CHECK(analysis::FormatRanks(analysis::MissingRanks(8, {2, 3, 7})) == "0, 1, 4-6");
  CHECK(analysis::RankCount(analysis::MissingRanks(8, {2, 3, 7})) == 5);
  // issue 27: files claiming world size 2^31-1 made the report list (and
  // allocate) every missing rank: 8 GiB of ints before any output.
  RankSpaceOptions options;
  options.world_size = 2147483647;
  auto report = analysis::BuildRankReport(Ranks({0, 5}, options));
  REQUIRE(report.ok());
  CHECK(report->missing == std::vector<RankRange>{{1, 4}, {6, 2147483646}});
  CHECK(analysis::RankCount(report->missing) == 2147483645);
  CHECK_THAT(analysis::FormatRankReportText(*report, 20),
             Catch::Contains("MISSING: ranks 1-4, 6-2147483646 of world size 2147483647 have no "
                             "file in this run"));
}

TEST_CASE("a missing rank is named and the others are still reported") {
  auto report = analysis::BuildRankReport(Ranks({0, 1, 3}));
  REQUIRE(report.ok());
  CHECK(report->missing == std::vector<analysis::RankRange>{{2, 2}});
  CHECK(report->ranks.size() == 3);
  CHECK(report->straggler == 3);
  CHECK(report->ranks[2].caused_ps == 600 * kUs);  // ranks 0 and 1 waited
  CHECK(Row(*report, 1, 2).compute_ps == 540 * kUs);
  CHECK_THAT(analysis::FormatRankReportText(*report, 20),
             Catch::Contains("MISSING: rank 2 of world size 4 has no file in this run"));
  CHECK_THAT(analysis::FormatRankReportText(*report, 20),
             Catch::Contains("over ranks 0, 1, 3 only"));
}

TEST_CASE("runs that are not one job's ranks are refused with what is wrong") {
  SECTION("different world sizes") {
    std::vector<RankData> ranks = Ranks({0, 1});
    RankSpaceOptions eight;
    eight.rank = 2;
    eight.world_size = 8;
    ranks.push_back(Rank(eight));
    auto report = analysis::BuildRankReport(std::move(ranks));
    REQUIRE_FALSE(report.ok());
    const std::string message(report.status().message());
    CHECK_THAT(message, Catch::Contains("world sizes differ"));
    CHECK_THAT(message, Catch::Contains("host_rank0.xplane.pb: rank 0 of world size 4"));
    CHECK_THAT(message, Catch::Contains("host_rank2.xplane.pb: rank 2 of world size 8"));
  }
  SECTION("one rank twice") {
    std::vector<RankData> ranks = Ranks({0, 1, 2, 3});
    ranks.push_back(Rank({}));
    ranks.back().file = "other_rank0.xplane.pb";
    auto report = analysis::BuildRankReport(std::move(ranks));
    REQUIRE_FALSE(report.ok());
    CHECK_THAT(std::string(report.status().message()),
               Catch::Contains("rank 0 is in two files: host_rank0.xplane.pb and "
                               "other_rank0.xplane.pb"));
  }
  SECTION("captures that do not overlap in time") {
    std::vector<RankData> ranks = Ranks({0, 1, 2});
    RankSpaceOptions later;
    later.rank = 3;
    later.start_epoch_ns = testing::kRankEpochNs + 60'000'000'000;  // a minute later
    ranks.push_back(Rank(later));
    auto report = analysis::BuildRankReport(std::move(ranks));
    REQUIRE_FALSE(report.ok());
    const std::string message(report.status().message());
    CHECK_THAT(message, Catch::Contains("the ranks' captures do not overlap in time: rank 3 "
                                        "started after rank 0 had stopped"));
    CHECK_THAT(message, Catch::Contains("rank 0: 2025-11-25 14:00:00.000000 UTC .. "
                                        "2025-11-25 14:00:00.003000 UTC (host_rank0.xplane.pb)"));
    CHECK_THAT(message, Catch::Contains("rank 3: 2025-11-25 14:01:00.000000 UTC"));
  }
  SECTION("a capture without a window") {
    std::vector<RankData> ranks = Ranks({0, 1});
    ranks[1].start_ns = ranks[1].stop_ns = 0;
    auto report = analysis::BuildRankReport(std::move(ranks));
    REQUIRE_FALSE(report.ok());
    CHECK_THAT(std::string(report.status().message()),
               Catch::Contains("rank 1 (host_rank1.xplane.pb) has no capture window"));
  }
}

TEST_CASE("the per-step CSV has every rank's every step") {
  auto report = analysis::BuildRankReport(Ranks({0, 3}));
  REQUIRE(report.ok());
  const std::string csv = analysis::FormatRankStepsCsv(*report);
  CHECK_THAT(csv, Catch::StartsWith("rank,step,name,start_us,step_us,compute_us,comm_us,"
                                    "overlap_us,idle_us,waited_us\n"));
  CHECK_THAT(csv, Catch::Contains("\n0,1,train,1000.000,1000.000,540.000,300.000,150.000,"
                                  "310.000,100.000\n"));
  CHECK_THAT(csv, Catch::Contains("\n3,1,train,1000.000,1000.000,640.000,200.000,150.000,"
                                  "310.000,0.000\n"));
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 1 + 2 * 3);
}

}  // namespace
}  // namespace neuronprof
