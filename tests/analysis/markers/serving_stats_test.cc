// Async spans, queue waits, counters and instants in the summary, on a
// constructed serving capture (request_space.h's MakeFlowSpace).
#include "src/analysis/markers/serving_stats.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "src/analysis/markers/flow_tails.h"
#include "src/analysis/report/marker_sections.h"
#include "src/analysis/report/summary.h"
#include "src/analysis/report/summary_sections.h"
#include "src/analysis/report/summary_tables.h"
#include "src/analysis/timeline/selection.h"
#include "tests/analysis/request_space.h"

namespace neuronprof {
namespace {

using testing::kUs;

const analysis::TailReport* FindTail(const std::vector<analysis::TailReport>& tails,
                                     const std::string& kind, const std::string& name) {
  for (const auto& tail : tails) {
    if (tail.kind == kind && tail.name == name) return &tail;
  }
  return nullptr;
}

double ExcessOf(const analysis::TailReport& tail, const std::string& part) {
  for (const auto& line : tail.lines) {
    if (line.part == part) return line.excess_ps;
  }
  return 0;
}

TEST_CASE("a queue wait between producer and consumer is a part of the step and the async span") {
  const auto space = testing::MakeFlowSpace(200, {7, 123}, 30000);
  const analysis::HostSpans spans = analysis::CollectHostSpans(space);
  const auto waits = analysis::CollectFlowWaits(space, spans);
  REQUIRE(waits.size() == 200);
  CHECK(waits[0].part == "wait enqueue->infer");
  CHECK(waits[0].end_ps - waits[0].start_ps == 1000 * kUs);

  const auto tails = analysis::BuildTails(space, spans);
  const analysis::TailReport* step = FindTail(tails, "step", "request");
  REQUIRE(step != nullptr);
  REQUIRE(step->has_tail);
  REQUIRE(!step->lines.empty());
  CHECK(step->lines[0].part == "wait enqueue->infer");
  CHECK(step->lines[0].excess_ps == Approx(30000.0 * kUs));
  // The wait is taken from the step's self time: typical self = infer + 250 us.
  CHECK(step->lines[0].typical_mean_ps == Approx(1000.0 * kUs));

  const analysis::TailReport* async = FindTail(tails, "async", "requests/request");
  REQUIRE(async != nullptr);
  REQUIRE(async->has_tail);
  CHECK(async->lines[0].part == "wait enqueue->infer");
  CHECK(async->lines[0].excess_ps == Approx(30000.0 * kUs));
  CHECK(analysis::TailSentence(*async).find("+30 ms in wait enqueue->infer") != std::string::npos);
}

TEST_CASE("a producer waits for its first consumer; producers of one batch each wait for it") {
  tensorflow::profiler::XSpace space;
  xplane::XPlaneBuilder host(xplane::FindOrAddPlane(&space, xplane::kHostPlaneName));
  auto* client = host.AddLine(1, "client", 0);
  auto* worker = host.AddLine(2, "worker", 0);
  auto add = [&](tensorflow::profiler::XLine* line, const char* name, int64_t us, bool producer,
                 uint64_t id) {
    auto* event = host.AddEvent(line, host.EventMetadataId(name), us * kUs, 100 * kUs);
    host.AddStat(event, producer ? xplane::kProducerTypeStat : xplane::kConsumerTypeStat,
                 int64_t{1});
    host.AddStat(event, producer ? xplane::kProducerIdStat : xplane::kConsumerIdStat, id);
  };
  add(client, "send", 0, true, 1);  // one to many: consumed at 300 and 700 us
  add(worker, "recv", 300, false, 1);
  add(worker, "recv", 700, false, 1);
  add(client, "enqueue", 1000, true, 2);  // many to one: two requests, one batch
  add(client, "enqueue", 1200, true, 2);
  add(worker, "batch", 2000, false, 2);
  const auto spans = analysis::CollectHostSpans(space);
  const auto waits = analysis::CollectFlowWaits(space, spans);
  REQUIRE(waits.size() == 3);
  std::vector<std::pair<std::string, int64_t>> got;
  for (const auto& wait : waits) got.emplace_back(wait.part, (wait.end_ps - wait.start_ps) / kUs);
  std::sort(got.begin(), got.end());
  CHECK(got == std::vector<std::pair<std::string, int64_t>>{{"wait enqueue->batch", 700},
                                                            {"wait enqueue->batch", 900},
                                                            {"wait send->recv", 200}});
}

TEST_CASE("a batch consumer's links join its marker to each request: waits, parts, no instants") {
  // TraceBatchConsumer: "assemble" with one link instant per request's id.
  tensorflow::profiler::XSpace space;
  auto* plane = xplane::FindOrAddPlane(&space, xplane::kHostPlaneName);
  xplane::XPlaneBuilder host(plane);
  auto* client = host.AddLine(1, "client", 0);
  auto* worker = host.AddLine(2, "worker", 0);
  auto* track = host.AddLine(xplane::kAsyncLineIdBase, "requests", 0);
  const int64_t link = host.EventMetadataId("assemble#link");
  (*plane->mutable_event_metadata())[link].set_name("assemble");
  auto* instant = (*plane->mutable_event_metadata())[link].add_stats();
  instant->set_metadata_id(host.StatMetadataId(xplane::kInstantStat));
  instant->set_int64_value(1);
  for (uint64_t id : {1, 2}) {
    const int64_t at = 100 * static_cast<int64_t>(id);
    auto* enqueue = host.AddEvent(client, host.EventMetadataId("enqueue"), at * kUs, 50 * kUs);
    host.AddStat(enqueue, xplane::kProducerTypeStat, int64_t{0});
    host.AddStat(enqueue, xplane::kProducerIdStat, id);
    auto* span = host.AddEvent(track, host.EventMetadataId("request"), at * kUs, (900 - at) * kUs);
    host.AddStat(span, xplane::kAsyncIdStat, id);
  }
  host.AddEvent(worker, host.EventMetadataId("assemble"), 500 * kUs, 300 * kUs);
  for (uint64_t id : {1, 2}) {
    auto* event = host.AddEvent(worker, link, 501 * kUs, 0);
    host.AddStat(event, xplane::kConsumerTypeStat, int64_t{0});
    host.AddStat(event, xplane::kConsumerIdStat, id);
  }
  const auto spans = analysis::CollectHostSpans(space);
  REQUIRE(spans.links.size() == 2);
  const auto waits = analysis::CollectFlowWaits(space, spans);
  std::vector<std::pair<std::string, int64_t>> got;
  for (const auto& wait : waits) got.emplace_back(wait.part, (wait.end_ps - wait.start_ps) / kUs);
  std::sort(got.begin(), got.end());
  CHECK(got == std::vector<std::pair<std::string, int64_t>>{{"wait enqueue->assemble", 250},
                                                            {"wait enqueue->assemble", 350}});
  // One report for the two requests.
  const auto tails = analysis::BuildAsyncTails(spans, waits);
  REQUIRE(tails.size() == 1);
  // The links are arrows, not instants of the user's.
  CHECK(analysis::BuildServingEvents(space).instants.empty());
}

TEST_CASE("device work launched in a marker counts in that marker's part of the step") {
  // 100 "batch" steps: "launch" (10 us on the host) starts device work of
  // 1 ms (31 ms for batch 7) that the step waits for in its own time.
  tensorflow::profiler::XSpace space;
  xplane::XPlaneBuilder host(xplane::FindOrAddPlane(&space, xplane::kHostPlaneName));
  auto* worker = host.AddLine(1, "worker", 0);
  for (int i = 0; i < 100; ++i) {
    const int64_t t = int64_t{i} * 50000, device_us = i == 7 ? 31000 : 1000;
    auto* step =
        host.AddEvent(worker, host.EventMetadataId("batch"), t * kUs, (20 + device_us) * kUs);
    host.AddStat(step, xplane::kRootLevelStat, int64_t{1});
    host.AddStat(step, xplane::kStepNumStat, int64_t{i});
    host.AddEvent(worker, host.EventMetadataId("launch"), (t + 5) * kUs, 10 * kUs);
  }
  const auto spans = analysis::CollectHostSpans(space);
  std::vector<analysis::FlowWait> device;
  for (int32_t i = 0; i < static_cast<int32_t>(spans.spans.size()); ++i) {
    const auto& span = spans.spans[i];
    if (span.name != "launch") continue;
    const int64_t step_end =
        spans.spans[span.parent].start_ps + spans.spans[span.parent].duration_ps;
    device.push_back({i, -1, span.start_ps + span.duration_ps, step_end, ""});
  }
  const auto without = analysis::BuildStepTails(spans);
  REQUIRE(without.size() == 1);
  CHECK(without[0].lines[0].part == "(self)");
  const auto tails = analysis::BuildStepTails(spans, {}, {}, device);
  REQUIRE(tails.size() == 1);
  REQUIRE(tails[0].has_tail);
  CHECK(tails[0].lines[0].part == "launch");
  CHECK(tails[0].lines[0].excess_ps == Approx(30000.0 * kUs));
  CHECK(ExcessOf(tails[0], "(self)") == 0);
}

TEST_CASE("device work of a linked marker counts in its part of the async span") {
  // 100 requests (async spans of 2 ms, id i + 1); a worker's "launch"
  // (10 us) consumes each id. Request 7 lasts 5 ms: its launch's device
  // work runs until 100 us before the span ends.
  tensorflow::profiler::XSpace space;
  xplane::XPlaneBuilder host(xplane::FindOrAddPlane(&space, xplane::kHostPlaneName));
  auto* worker = host.AddLine(1, "worker", 0);
  auto* track = host.AddLine(xplane::kAsyncLineIdBase, "requests", 0);
  for (int i = 0; i < 100; ++i) {
    const uint64_t id = static_cast<uint64_t>(i) + 1;
    const int64_t t = int64_t{i} * 10000, us = i == 7 ? 5000 : 2000;
    auto* span = host.AddEvent(track, host.EventMetadataId("request"), t * kUs, us * kUs);
    host.AddStat(span, xplane::kAsyncIdStat, id);
    auto* launch = host.AddEvent(worker, host.EventMetadataId("launch"), (t + 100) * kUs, 10 * kUs);
    host.AddStat(launch, xplane::kConsumerTypeStat, int64_t{0});
    host.AddStat(launch, xplane::kConsumerIdStat, id);
  }
  const auto spans = analysis::CollectHostSpans(space);
  std::vector<analysis::FlowWait> device;
  for (int32_t i = 0; i < static_cast<int32_t>(spans.spans.size()); ++i) {
    const auto& span = spans.spans[i];
    if (span.name == "launch" && span.start_ps == (70000 + 100) * kUs) {
      device.push_back({i, -1, span.start_ps + span.duration_ps, (70000 + 4900) * kUs, ""});
    }
  }
  REQUIRE(device.size() == 1);
  const auto without = analysis::BuildAsyncTails(spans, {});
  REQUIRE(without.size() == 1);
  CHECK(without[0].lines[0].part == "(self)");
  const auto tails = analysis::BuildAsyncTails(spans, {}, device);
  REQUIRE(tails.size() == 1);
  REQUIRE(tails[0].has_tail);
  CHECK(tails[0].lines[0].part == "launch");
  CHECK(tails[0].lines[0].excess_ps == Approx(4790.0 * kUs));
}

TEST_CASE("an async span's parts are the markers linked to its id on other threads") {
  // The slow requests spend the delay in infer, on a worker thread.
  const auto space = testing::MakeFlowSpace(200, {7, 123}, 30000, /*delay_in_infer=*/true);
  const auto tails = analysis::BuildTails(space, analysis::CollectHostSpans(space));
  const analysis::TailReport* async = FindTail(tails, "async", "requests/request");
  REQUIRE(async != nullptr);
  REQUIRE(async->has_tail);
  CHECK(async->lines[0].part == "infer");
  CHECK(async->lines[0].excess_ps == Approx(30000.0 * kUs).margin(50.0 * kUs));
  CHECK(ExcessOf(*async, "wait enqueue->infer") == 0);
  // Typical request: enqueue 100 + wait 1000 + infer 2000..2040 + self 250.
  CHECK(async->typical_mean_ps > 3350.0 * kUs);
  CHECK(async->typical_mean_ps < 3391.0 * kUs);
  // The step on the client thread: its enqueue's consumer on the worker is
  // a part of it (a linked marker of another thread), taken from (self).
  const analysis::TailReport* step = FindTail(tails, "step", "request");
  REQUIRE(step != nullptr);
  REQUIRE(step->has_tail);
  CHECK(step->lines[0].part == "infer");
  CHECK(step->lines[0].excess_ps == Approx(30000.0 * kUs).margin(50.0 * kUs));
  CHECK(ExcessOf(*step, "(self)") == 0);
}

TEST_CASE("without an injected delay no wait is blamed") {
  const auto space = testing::MakeFlowSpace(200, {}, 0);
  const auto tails = analysis::BuildTails(space, analysis::CollectHostSpans(space));
  REQUIRE(tails.size() == 2);
  for (const auto& tail : tails) {
    CHECK_FALSE(tail.has_tail);
    CHECK(tail.lines.empty());
    CHECK(analysis::TailSentence(tail).find("nothing to blame") != std::string::npos);
  }
}

TEST_CASE("counters: min, mean, max, last and the time-weighted mean") {
  const auto space = testing::MakeFlowSpace(200, {7, 123}, 30000);
  const analysis::ServingEvents events = analysis::BuildServingEvents(space);
  REQUIRE(events.counters.size() == 1);
  const analysis::CounterStats& depth = events.counters[0];
  CHECK(depth.name == "queue_depth");
  CHECK(depth.samples == 400);
  CHECK(depth.min == 0);
  CHECK(depth.max == 1);
  CHECK(depth.mean == Approx(0.5));
  CHECK(depth.last == 0);
  // 1 while queued (198 x 1000 us + 2 x 31000 us) from the first sample
  // (1100 us) to the capture's end (the last request's end: 9954390 us).
  CHECK(depth.time_weighted_mean == Approx(260000.0 / (9954390 - 1100)));
  CHECK(depth.first_ps == 100 * kUs);  // after the first event (1000 us)
  CHECK(depth.end_ps == (9954390 - 1000) * kUs);
  REQUIRE(events.instants.size() == 1);
  CHECK(events.instants[0].name == "cache_miss");
  CHECK(events.instants[0].count == 20);
}

TEST_CASE("a last sample holds until the capture's end") {
  tensorflow::profiler::XSpace space;
  xplane::XPlaneBuilder host(xplane::FindOrAddPlane(&space, xplane::kHostPlaneName));
  auto* counters = host.AddLine(xplane::kCounterLineId, xplane::kCounterLineName, 0);
  auto* main_line = host.AddLine(1, "main", 0);
  for (const auto& [us, value] : std::vector<std::pair<int64_t, double>>{{0, 4}, {100, 1.5}}) {
    auto* sample = host.AddEvent(counters, host.EventMetadataId("batch"), us * kUs, 0);
    host.AddStat(sample, xplane::kCounterValueStat, value);
  }
  host.AddEvent(main_line, host.EventMetadataId("work"), 0, 400 * kUs);
  const auto events = analysis::BuildServingEvents(space);
  REQUIRE(events.counters.size() == 1);
  // 4 for 100 us, then 1.5 for 300 us.
  CHECK(events.counters[0].time_weighted_mean == Approx((4 * 100 + 1.5 * 300) / 400.0));
  CHECK(events.counters[0].mean == Approx(2.75));
  // Not markers: counter samples and instants stay out of the markers table.
  const auto stats = analysis::BuildMarkerStats(analysis::CollectHostSpans(space));
  REQUIRE(stats.markers.size() == 1);
  CHECK(stats.markers[0].name == "work");
}

TEST_CASE("NaN counter samples are counted and left out of the figures") {
  tensorflow::profiler::XSpace space;
  xplane::XPlaneBuilder host(xplane::FindOrAddPlane(&space, xplane::kHostPlaneName));
  auto* counters = host.AddLine(xplane::kCounterLineId, xplane::kCounterLineName, 0);
  auto* main_line = host.AddLine(1, "main", 0);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto sample = [&](const char* name, int64_t us, double value) {
    auto* event = host.AddEvent(counters, host.EventMetadataId(name), us * kUs, 0);
    host.AddStat(event, xplane::kCounterValueStat, value);
  };
  sample("mixed", 0, 4);
  sample("mixed", 100, nan);
  sample("mixed", 200, 2);
  for (int64_t us : {0, 50}) sample("broken", us, nan);
  host.AddEvent(main_line, host.EventMetadataId("work"), 0, 400 * kUs);
  const analysis::Summary summary = analysis::Summarize(space);
  const auto& counters_out = summary.serving.counters;
  REQUIRE(counters_out.size() == 2);
  const analysis::CounterStats& broken = counters_out[0];
  const analysis::CounterStats& mixed = counters_out[1];
  CHECK(mixed.samples == 3);
  CHECK(mixed.nan_samples == 1);
  CHECK(mixed.min == 2);
  CHECK(mixed.max == 4);
  CHECK(mixed.mean == Approx(3));
  // 4 for 100 us, 2 for 200 us; the NaN's 100 us count for nothing.
  CHECK(mixed.time_weighted_mean == Approx((4 * 100 + 2 * 200) / 300.0));
  CHECK(broken.nan_samples == 2);
  CHECK(std::isnan(broken.min));
  CHECK(std::isnan(broken.mean));
  CHECK(std::isnan(broken.max));
  const std::string text = analysis::FormatSummaryText(summary, 0);
  CHECK(text.find("inf") == std::string::npos);
  CHECK(text.find("nan") == std::string::npos);
  CHECK(text.find("broken: 2 of 2 samples are NaN") != std::string::npos);
  for (const auto& table : analysis::SummaryTables(summary)) {
    if (table.name != "counters") continue;
    const std::string csv = analysis::FormatCsv(table);
    CHECK(csv.find("\nbroken,2,,,,,,0.000,50.000,400.000,2\n") != std::string::npos);
    CHECK(csv.find("\nmixed,3,2,3,4,2,") != std::string::npos);
  }
}

TEST_CASE("the summary prints and tabulates async spans, counters and instants") {
  const auto space = testing::MakeFlowSpace(200, {7, 123}, 30000);
  const analysis::Summary summary = analysis::Summarize(space);
  REQUIRE(summary.markers.async_spans.size() == 1);
  CHECK(summary.markers.async_spans[0].thread == "requests");
  CHECK(summary.markers.async_spans[0].calls() == 200);
  for (const auto& row : summary.markers.markers) CHECK(row.name != "cache_miss");
  const std::string text = analysis::FormatSummaryText(summary, 0);
  CHECK(text.find("Async spans: 1") != std::string::npos);
  CHECK(text.find("Counters: 1") != std::string::npos);
  CHECK(text.find("Instants: 1") != std::string::npos);
  CHECK(text.find("requests/request: p50") != std::string::npos);
  CHECK(text.find("+30 ms in wait enqueue->infer") != std::string::npos);

  const auto tables = analysis::SummaryTables(summary);
  auto csv_of = [&](const std::string& name) {
    for (const auto& table : tables) {
      if (table.name == name) return analysis::FormatCsv(table);
    }
    return std::string();
  };
  CHECK(csv_of("async_spans").find("\nrequest,requests,200,") != std::string::npos);
  CHECK(csv_of("counters").find("name,samples,min,mean,max,last,time_weighted_mean,") == 0);
  CHECK(csv_of("counters").find("\nqueue_depth,400,0,0.5,1,0,") != std::string::npos);
  CHECK(csv_of("instants") == "name,count\ncache_miss,20\n");
  CHECK(csv_of("tails").find("async,requests/request,200,") != std::string::npos);
}

TEST_CASE("a selection applies to async spans, counters and instants") {
  const auto space = testing::MakeFlowSpace(200, {}, 0);
  analysis::Selection steps;
  steps.steps = {{10, 19}};
  auto selected = analysis::Select(space, steps);
  REQUIRE(selected.ok());
  const analysis::Summary summary = analysis::Summarize(selected->space);
  REQUIRE(summary.markers.async_spans.size() == 1);
  CHECK(summary.markers.async_spans[0].calls() == 10);
  REQUIRE(summary.serving.counters.size() == 1);
  CHECK(summary.serving.counters[0].samples == 20);
  REQUIRE(summary.serving.instants.size() == 1);
  CHECK(summary.serving.instants[0].count == 1);  // request 10
  analysis::Selection window;
  window.window_ms = {{0, 100}};  // requests 0 and 1 (starting at 1 and 51 ms)
  selected = analysis::Select(space, window);
  REQUIRE(selected.ok());
  const analysis::Summary windowed = analysis::Summarize(selected->space);
  CHECK(windowed.markers.async_spans[0].calls() == 2);
  CHECK(windowed.serving.counters[0].samples == 4);
}

}  // namespace
}  // namespace neuronprof
