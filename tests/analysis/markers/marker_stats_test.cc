// Markers and steps per name (self time, percentiles, threads), the tail
// explained, report tables and selections, on constructed XSpaces.
#include "src/analysis/markers/marker_stats.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "src/analysis/markers/tail_report.h"
#include "src/analysis/report/marker_sections.h"
#include "src/analysis/report/summary.h"
#include "src/analysis/report/summary_sections.h"
#include "src/analysis/report/summary_tables.h"
#include "src/analysis/timeline/distribution.h"
#include "src/analysis/timeline/selection.h"
#include "src/xplane/schema.h"
#include "src/xplane/xplane_builder.h"
#include "tests/analysis/request_space.h"

namespace neuronprof {
namespace {

using analysis::SpanStats;
using testing::kUs;

const SpanStats* Find(const std::vector<SpanStats>& rows, const std::string& name,
                      const std::string& thread = "") {
  for (const SpanStats& row : rows) {
    if (row.name == name && row.thread == thread) return &row;
  }
  return nullptr;
}

// Markers back to back on one line, durations in microseconds.
tensorflow::profiler::XSpace Sequential(const std::vector<int64_t>& durations_us) {
  tensorflow::profiler::XSpace space;
  xplane::XPlaneBuilder host(xplane::FindOrAddPlane(&space, xplane::kHostPlaneName));
  auto* line = host.AddLine(1, "main", 0);
  int64_t t = 0;
  for (int64_t us : durations_us) {
    host.AddEvent(line, host.EventMetadataId("m"), t * kUs, us * kUs);
    t += us + 1;
  }
  return space;
}

TEST_CASE("percentiles are numpy's default (linear interpolation between ranks)") {
  // numpy.percentile(d, [50, 90, 99]) == [7.0, 16.2, 90.04]; mean 14.3077.
  const std::vector<int64_t> d = {5, 1, 9, 3, 7, 2, 8, 100, 4, 6, 11, 13, 17};
  const auto markers =
      analysis::BuildMarkerStats(analysis::CollectHostSpans(Sequential(d))).markers;
  REQUIRE(markers.size() == 1);
  const analysis::Distribution& s = markers[0].duration;
  CHECK(s.count == 13);
  CHECK(s.total_ps == 186 * kUs);
  CHECK(s.p50_ps == Approx(7.0 * kUs));
  CHECK(s.p90_ps == Approx(16.2 * kUs));
  CHECK(s.p99_ps == Approx(90.04 * kUs));
  CHECK(s.mean_ps == Approx(14.307692307692308 * kUs));
  CHECK(s.max_ps == 100 * kUs);
  CHECK(s.min_ps == 1 * kUs);
  // One duration: every percentile is it.
  std::vector<int64_t> one = {42};
  const analysis::Distribution single = analysis::Summarize(one);
  CHECK(single.p50_ps == 42);
  CHECK(single.p99_ps == 42);
}

TEST_CASE("self time is a marker's time outside the scopes nested in it") {
  const auto space = testing::MakeRequestSpace(8, {}, 0);
  const analysis::MarkerStats stats = analysis::BuildMarkerStats(analysis::CollectHostSpans(space));
  const SpanStats* infer = Find(stats.markers, "infer");
  REQUIRE(infer != nullptr);
  // infer: 2000 us + jitter (0,10,20,30,40,0,10,20 us), matmul 1500 us nested.
  CHECK(infer->calls() == 8);
  CHECK(infer->total_ps() == (8 * 2000 + 130) * kUs);
  CHECK(infer->self_ps == (8 * 500 + 130) * kUs);
  const SpanStats* matmul = Find(stats.markers, "matmul");
  REQUIRE(matmul != nullptr);
  CHECK(matmul->self_ps == matmul->total_ps());
  // Steps: their own row per name; self is what no child covers (2 x 125 us).
  REQUIRE(stats.steps.size() == 1);
  CHECK(stats.steps[0].name == "request");
  CHECK(stats.steps[0].calls() == 8);
  CHECK(stats.steps[0].self_ps == 8 * 250 * kUs);
  CHECK(Find(stats.markers, "request") == nullptr);  // a step, not a marker
}

TEST_CASE("markers split by thread or by thread-name group on request") {
  const auto space = testing::MakeRequestSpace(200, {}, 0);
  const analysis::HostSpans spans = analysis::CollectHostSpans(space);
  const auto by_name = analysis::BuildMarkerStats(spans, analysis::GroupBy::kName);
  REQUIRE(Find(by_name.markers, "queue_wait") != nullptr);
  CHECK(Find(by_name.markers, "queue_wait")->calls() == 200);

  const auto by_thread = analysis::BuildMarkerStats(spans, analysis::GroupBy::kThread);
  for (const char* worker : {"worker-1", "worker-2", "worker-3", "worker-4"}) {
    const SpanStats* row = Find(by_thread.markers, "queue_wait", worker);
    REQUIRE(row != nullptr);
    CHECK(row->calls() == 50);
  }
  CHECK(Find(by_thread.markers, "startup", "main") != nullptr);
  CHECK(Find(by_thread.steps, "request", "worker-3")->calls() == 50);

  const auto grouped = analysis::BuildMarkerStats(spans, analysis::GroupBy::kThreadGroup);
  REQUIRE(Find(grouped.markers, "queue_wait", "worker-*") != nullptr);
  CHECK(Find(grouped.markers, "queue_wait", "worker-*")->calls() == 200);
  CHECK(analysis::ThreadGroup("pool-12-thread-3") == "pool-*-thread-*");
  CHECK(analysis::ThreadGroup("main") == "main");
}

TEST_CASE("the tail names the child that holds an injected delay, with its figure") {
  // Requests 17 and 123 of 200 wait 30 ms more: the slowest 1 % (2).
  const auto space = testing::MakeRequestSpace(200, {17, 123}, 30000);
  const auto tails = analysis::BuildStepTails(analysis::CollectHostSpans(space));
  REQUIRE(tails.size() == 1);
  const analysis::TailReport& tail = tails[0];
  CHECK(tail.name == "request");
  CHECK(tail.instances == 200);
  CHECK(tail.slowest == 2);
  CHECK(tail.typical == 42);  // ranks 79..120
  CHECK(tail.max_ps == (3500 + 30000 + 30) * kUs);
  REQUIRE(tail.has_tail);
  REQUIRE(tail.lines.size() == 1);
  CHECK(tail.lines[0].part == "queue_wait");
  CHECK(tail.lines[0].excess_ps == Approx(30000.0 * kUs));
  // infer's jitter (25 us in the slowest, 850/42 us in the band) is noise:
  // folded into the others with respond and (self).
  CHECK(tail.others == 3);
  CHECK(tail.others_excess_ps == Approx((25.0 - 850.0 / 42) * kUs));
  CHECK(tail.gap_ps() == Approx((30000.0 + 25.0 - 850.0 / 42) * kUs));
  const std::string sentence = analysis::TailSentence(tail);
  CHECK(sentence.find("request: p50 3.52 ms") == 0);
  CHECK(sentence.find("the slowest 1 % (2) take +30 ms over the median band, spending "
                      "+30 ms in queue_wait, +4.76 us in 3 other parts") != std::string::npos);
}

TEST_CASE("without a delay the tail blames nothing") {
  const auto space = testing::MakeRequestSpace(200, {}, 0);
  const auto tails = analysis::BuildStepTails(analysis::CollectHostSpans(space));
  REQUIRE(tails.size() == 1);
  CHECK_FALSE(tails[0].has_tail);
  CHECK(tails[0].lines.empty());
  CHECK(tails[0].others == 0);
  CHECK(analysis::TailSentence(tails[0]).find("nothing to blame") != std::string::npos);
}

TEST_CASE("a step's self time is a part of its tail") {
  // Time outside every child: the parts still add up to the gap.
  std::vector<analysis::TailInstance> instances;
  for (int i = 0; i < 100; ++i) {
    const int64_t self = i == 99 ? 5000 : 100;
    instances.push_back({1000 + self, {{"work", 1000}, {analysis::kSelfPart, self}}});
  }
  const analysis::TailReport tail = analysis::ExplainTail("step", "step", instances);
  REQUIRE(tail.lines.size() == 1);
  CHECK(tail.lines[0].part == "(self)");
  CHECK(tail.lines[0].excess_ps == Approx(4900));
  CHECK(tail.others == 1);  // work: no excess
}

TEST_CASE("the summary prints and tabulates markers, step statistics and tails") {
  const auto space = testing::MakeRequestSpace(200, {17, 123}, 30000);
  const analysis::Summary summary = analysis::Summarize(space);
  const std::string text = analysis::FormatSummaryText(summary, 0);
  CHECK(text.find("Step times by name") != std::string::npos);
  CHECK(text.find("+30 ms in queue_wait") != std::string::npos);
  CHECK(text.find("p99(us)") != std::string::npos);
  CHECK(text.find("Self(ms)") != std::string::npos);

  const auto tables = analysis::SummaryTables(summary);
  std::vector<std::string> names;
  for (const auto& table : tables) names.push_back(table.name);
  CHECK(names == analysis::SummaryTableNames());
  const analysis::ReportTable& markers = tables[5];
  REQUIRE(markers.name == "markers");
  const std::string csv = analysis::FormatCsv(markers);
  CHECK(csv.find("name,source,thread,calls,total_us,self_us,mean_us,p50_us,p90_us,p99_us,"
                 "max_us,device_us,device_events,device_flops\n") == 0);
  // queue_wait: 198 x 1000 us + 2 x 31000 us.
  CHECK(csv.find("\nqueue_wait,,,200,260000.000,260000.000,1300.000,1000.000,1000.000,") !=
        std::string::npos);
  const std::string tails = analysis::FormatCsv(tables[4]);
  CHECK(tails.find("step,request,200,") != std::string::npos);
  CHECK(tails.find(",1,queue_wait,30000.000,") != std::string::npos);
}

TEST_CASE("a step range or a time window restricts the summary") {
  const auto space = testing::MakeRequestSpace(200, {}, 0);
  analysis::Selection steps;
  steps.steps = {{10, 19}};
  auto selected = analysis::Select(space, steps);
  REQUIRE(selected.ok());
  const auto stats = analysis::BuildMarkerStats(analysis::CollectHostSpans(selected->space));
  REQUIRE(stats.steps.size() == 1);
  CHECK(stats.steps[0].calls() == 10);
  CHECK(Find(stats.markers, "queue_wait")->calls() == 10);
  CHECK(Find(stats.markers, "startup") == nullptr);
  CHECK(selected->description.find("steps 10-19") == 0);

  analysis::Selection window;
  window.window_ms = {{0, 100}};  // startup, requests 0 (1 ms) and 1 (51 ms)
  selected = analysis::Select(space, window);
  REQUIRE(selected.ok());
  const auto in_window = analysis::BuildMarkerStats(analysis::CollectHostSpans(selected->space));
  CHECK(in_window.steps[0].calls() == 2);
  CHECK(Find(in_window.markers, "startup") != nullptr);
  CHECK(selected->kept_events == 1 + 2 * 5);

  steps.steps = {{500, 600}};
  const auto none = analysis::Select(space, steps);
  REQUIRE_FALSE(none.ok());
  CHECK(std::string(none.status().message()) ==
        "no step numbered 500-600: the capture's steps are numbered 0-199");
  CHECK_FALSE(analysis::ParseStepRange("5-3").ok());
  CHECK(*analysis::ParseStepRange("7") == std::make_pair<int64_t, int64_t>(7, 7));
  CHECK(*analysis::ParseWindowMs("1.5-20") == std::make_pair(1.5, 20.0));
  CHECK_FALSE(analysis::ParseWindowMs("-1-2").ok());
}

TEST_CASE("a step range leaves out other steps that ran meanwhile, with their markers") {
  // worker-1: request 1 [0, 100] us holding m1; worker-2: request 2 [20, 60]
  // us holding m2, inside request 1's span.
  tensorflow::profiler::XSpace space;
  xplane::XPlaneBuilder host(xplane::FindOrAddPlane(&space, xplane::kHostPlaneName));
  auto add_request = [&](int64_t id, int64_t start, int64_t end, const char* child) {
    auto* line = host.AddLine(id, "worker-" + std::to_string(id), 0);
    auto* step =
        host.AddEvent(line, host.EventMetadataId("request"), start * kUs, (end - start) * kUs);
    host.AddStat(step, xplane::kRootLevelStat, int64_t{1});
    host.AddStat(step, xplane::kStepNumStat, id);
    host.AddEvent(line, host.EventMetadataId(child), (start + 10) * kUs, 10 * kUs);
  };
  add_request(1, 0, 100, "m1");
  add_request(2, 20, 60, "m2");
  analysis::Selection selection;
  selection.steps = {{1, 1}};
  const auto selected = analysis::Select(space, selection);
  REQUIRE(selected.ok());
  const auto stats = analysis::BuildMarkerStats(analysis::CollectHostSpans(selected->space));
  REQUIRE(stats.steps.size() == 1);
  CHECK(stats.steps[0].calls() == 1);
  CHECK(Find(stats.markers, "m1") != nullptr);
  CHECK(Find(stats.markers, "m2") == nullptr);
  CHECK(selected->left_out_events == 2);
}

}  // namespace
}  // namespace neuronprof
