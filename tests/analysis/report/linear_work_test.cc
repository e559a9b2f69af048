// Readers that stay linear: crafted captures in the worst shapes
// (worst_shapes.h: deep nesting, one thread with every event, every
// runtime call unmatched, an allocation in each of many steps, many
// distinct stat keys) go through the summary
// analysis and both trace writers, and the work they cause is counted
// (xplane::WorkCount: events visited, stats compared, intervals merged,
// stack entries walked) against a bound of O(n log n). A quadratic path
// counts ~n^2/2 here on any machine, however fast; no timing.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <set>
#include <string>

#include "fmt/format.h"
#include "src/analysis/ops/operator_events.h"
#include "src/analysis/ranks/rank_data.h"
#include "src/analysis/ranks/rank_report.h"
#include "src/analysis/report/summary.h"
#include "src/export/byte_sink.h"
#include "src/export/chrome_trace.h"
#include "src/export/kineto_trace.h"
#include "src/xplane/sanitizers.h"
#include "src/xplane/work_count.h"
#include "tests/analysis/rank_space.h"
#include "tests/analysis/worst_shapes.h"

namespace neuronprof {
namespace {

// Sanitizer builds run 10-20x slower: smaller captures still tell n log n
// from n^2 by orders of magnitude.
constexpr int kScale = kAddressSanitizer || kThreadSanitizer ? 20 : 1;

// The work allowed for `n` events: a few steps per event and level of a
// balanced search (the readers take about 10 per event today).
uint64_t Bound(int64_t events) {
  return static_cast<uint64_t>(16 * events * std::ceil(std::log2(static_cast<double>(events))));
}

// The work of `f`, counted on this thread.
template <typename F>
uint64_t Work(F&& f) {
  xplane::ResetWorkCount();
  f();
  return xplane::WorkCount();
}

uint64_t SummaryWork(const tensorflow::profiler::XSpace& space, analysis::Summary* summary) {
  return Work([&] { *summary = analysis::Summarize(space, {}); });
}

uint64_t KinetoWork(const tensorflow::profiler::XSpace& space) {
  exporter::StringSink sink;
  return Work([&] { REQUIRE(exporter::WriteKinetoTrace(space, &sink).ok()); });
}

uint64_t ChromeWork(const tensorflow::profiler::XSpace& space) {
  exporter::StringSink sink;
  return Work([&] { REQUIRE(exporter::WriteChromeTrace(space, &sink).ok()); });
}

TEST_CASE("steps nested in each other: the step breakdown stays O(n log n)") {
  const int n = 200000 / kScale;
  const auto space = testing::NestedSteps(n);
  analysis::Summary summary;
  const uint64_t work = SummaryWork(space, &summary);
  INFO("work " << work << " for " << n << " nested steps");
  CHECK(work <= Bound(n));
  REQUIRE(summary.steps.size() == static_cast<size_t>(n));
  // The outermost step: the steps inside it are marker time, but for the
  // operator's 1 ns and its first and last 1 ns; the innermost: the op and idle.
  CHECK(summary.steps.front().other_ops_ps == 1000);
  CHECK(summary.steps.front().markers_ps == summary.steps.front().duration_ps - 3000);
  CHECK(summary.steps.front().idle_ps == 2000);
  CHECK(summary.steps.back().idle_ps == summary.steps.back().duration_ps - 1000);
}

TEST_CASE("markers nested deep: the operator walk is linear in depth, and so are its paths") {
  const int n = 100000 / kScale;
  const auto space = testing::NestedMarkers(n);
  analysis::Summary summary;
  const uint64_t work = SummaryWork(space, &summary);
  INFO("work " << work << " for " << n << " nested markers");
  CHECK(work <= Bound(n));
  // The scope paths of the ops (one distinct path per level) take memory
  // within a small multiple of the capture's size, not depth^2.
  const analysis::OperatorEvents ops = analysis::CollectOperatorEvents(space);
  REQUIRE(ops.ops.size() == static_cast<size_t>(n));
  std::set<const char*> distinct;
  uint64_t path_bytes = 0;
  size_t longest = 0;
  for (const analysis::OperatorEvent& op : ops.ops) {
    longest = std::max(longest, op.scope.size());
    if (distinct.insert(op.scope.data()).second) path_bytes += op.scope.size();
  }
  CHECK(longest <= analysis::kMaxScopeBytes + 4);
  INFO("path bytes " << path_bytes << ", capture " << space.ByteSizeLong() << " bytes");
  CHECK(path_bytes <= 4 * space.ByteSizeLong());
  CHECK(ops.ops[5].scope == "marker_0/marker_1/marker_2/marker_3/marker_4/marker_5");
  CHECK(ops.ops.back().scope.substr(ops.ops.back().scope.size() - 4) == "/...");
}

TEST_CASE("many producers in one step: placing their waits stays O(n log n)") {
  const int n = 100000 / kScale;
  const auto space = testing::ProducersInOneStep(n);
  analysis::Summary summary;
  const uint64_t work = SummaryWork(space, &summary);
  INFO("work " << work << " for " << n << " producers in one step");
  CHECK(work <= Bound(3 * n));
  REQUIRE(summary.steps.size() == 1);
}

TEST_CASE("producers nested deep: linking flows to their markers stays linear in depth") {
  const int n = 100000 / kScale;
  const auto space = testing::NestedProducers(n);
  analysis::Summary summary;
  const uint64_t work = SummaryWork(space, &summary);
  INFO("work " << work << " for " << n << " nested producers");
  CHECK(work <= Bound(3 * n));
  REQUIRE(summary.markers.markers.size() >= 1);
}

TEST_CASE("runtime calls, none matched, under deep markers and ended ops: linear matching") {
  const int n = 200000 / kScale;
  const auto space = testing::UnmatchedRuntimeCalls(n);
  const uint64_t kineto = KinetoWork(space);
  INFO("Kineto work " << kineto << " for " << n << " calls");
  CHECK(kineto <= Bound(n));
  analysis::Summary summary;
  const uint64_t work = SummaryWork(space, &summary);
  INFO("summary work " << work);
  CHECK(work <= Bound(n));
  CHECK(summary.device.unattributed == static_cast<int64_t>(n));
}

TEST_CASE("an allocation in each of many steps: the memory report stays O(n log n)") {
  const int n = 100000 / kScale;
  const auto space = testing::MemoryPerStep(n);
  analysis::Summary summary;
  const uint64_t work = SummaryWork(space, &summary);
  INFO("work " << work << " for " << n << " steps and allocations");
  CHECK(work <= Bound(n));
  REQUIRE(summary.memory.allocators.size() == 1);
  const analysis::AllocatorMemory& memory = summary.memory.allocators.front();
  REQUIRE(memory.steps.size() == static_cast<size_t>(n));
  // Each step grows by its block, ending at its peak; the block's op
  // holds blocks from every step.
  CHECK(memory.steps.back().growth_bytes == 64);
  CHECK(memory.steps.back().peak_bytes == 64 * int64_t{n});
  REQUIRE(memory.by_op.size() == 1);
  CHECK(memory.by_op.front().steps_holding == n);
}

TEST_CASE("steps nested on every rank: the multi-rank report stays O(n log n)") {
  const int n = 20000 / kScale;  // steps per rank, each with 5 ops and a collective
  std::vector<analysis::RankData> ranks;
  int64_t events = 0;
  for (int r = 0; r < 2; ++r) {
    testing::RankSpaceOptions options;
    options.rank = r;
    options.world_size = 2;
    options.steps = n;
    options.straggler = 1;
    auto space = testing::MakeRankSpace(options);
    testing::AddNestedSteps(&space, n, n * testing::kRankStepUs * 1000000);
    events += xplane::NumEvents(space);
    ranks.push_back(analysis::ReadRankData(space, "rank" + std::to_string(r)));
  }
  absl::StatusOr<analysis::RankReport> report;
  const uint64_t work = Work([&] { report = analysis::BuildRankReport(std::move(ranks)); });
  INFO("work " << work << " for " << events << " events");
  CHECK(work <= Bound(events));
  REQUIRE(report.ok());
  CHECK(report->steps.size() == static_cast<size_t>(4 * n));
}

TEST_CASE("an event with many distinct stat keys: the writers stay linear in them") {
  const int n = 200000 / kScale;
  const auto space = testing::ManyStatKeys(n);
  const uint64_t kineto = KinetoWork(space);
  INFO("Kineto work " << kineto << " for " << n << " stats");
  CHECK(kineto <= Bound(n));
  const uint64_t chrome = ChromeWork(space);
  INFO("Chrome work " << chrome);
  CHECK(chrome <= Bound(n));
  // Every key once: n of the event's own, n/2 more from its metadata.
  exporter::StringSink sink;
  REQUIRE(exporter::WriteChromeTrace(space, &sink).ok());
  CHECK(sink.text().find("\"key_0\":0") != std::string::npos);
  CHECK(sink.text().find(fmt::format("\"key_{}\":", n + n / 2 - 1)) != std::string::npos);
}

}  // namespace
}  // namespace neuronprof
