// The Kineto and Chrome traces of captures whose events are written in
// chunks (jobs) on threads of their own, checked on its text (one event per line), so that
// it also runs under TSan (kineto_trace_test parses with protobuf's Struct,
// which the TSan build cannot run).
#include <catch2/catch.hpp>
#include <climits>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "src/xplane/json_reader.h"
#include "src/xplane/schema.h"
#include "src/xplane/xplane_builder.h"
#include "tests/export/kineto_sample_space.h"
#include "tests/export/trace_text.h"

namespace neuronprof {
namespace {

std::vector<std::string_view> Lines(std::string_view text) {
  std::vector<std::string_view> lines;
  for (size_t at = 0; at < text.size();) {
    size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    lines.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  return lines;
}

bool Has(std::string_view line, std::string_view part) {
  return line.find(part) != std::string_view::npos;
}

TEST_CASE("kineto chunks: ids in order, flows and step numbers as if written in one pass") {
  constexpr int kSteps = 2000;  // 12,001 spans on the main thread: 2 chunks + 1.
  const std::string text = testing::KinetoTraceText(testing::ManyStepsSpace(kSteps));
  CHECK(json_reader::IsStrictJson(text));
  std::vector<int64_t> ids;
  int fwdbwd_starts = 0, eval_steps = 0;
  for (std::string_view line : Lines(text)) {
    if (Has(line, "\"cat\":\"cpu_op\"") || Has(line, "\"cat\":\"user_annotation\"")) {
      constexpr std::string_view kKey = "\"External id\":";
      const size_t at = line.find(kKey);
      REQUIRE(at != std::string_view::npos);
      ids.push_back(std::stoll(std::string(line.substr(at + kKey.size(), 20))));
    }
    fwdbwd_starts += Has(line, "\"ph\":\"s\",\"cat\":\"fwdbwd\"");
    eval_steps +=
        Has(line, "\"name\":\"ProfilerStep#2000\"") && Has(line, "\"Step name\":\"eval\"");
  }
  REQUIRE(ids.size() == 7 * kSteps + 1);
  for (size_t i = 0; i < ids.size(); ++i) REQUIRE(ids[i] == static_cast<int64_t>(i + 1));
  CHECK(fwdbwd_starts == kSteps);
  CHECK(eval_steps == 1);  // Numbered by the 2000 steps before it.
}

// The forward -> backward flows are formatted in jobs too (2048 pairs
// each): ids in order across jobs, each pair's two flows in turn.
TEST_CASE("kineto chunks: forward -> backward flows in jobs keep their ids and order") {
  constexpr int kSteps = 5000;  // One pair per step: 3 jobs.
  const std::string text = testing::KinetoTraceText(testing::ManyStepsSpace(kSteps));
  CHECK(json_reader::IsStrictJson(text));
  std::vector<std::string> flows;  // "<ph> <cat> <id>", in order.
  for (std::string_view line : Lines(text)) {
    for (std::string_view cat : {"fwdbwd", "forward_backward"}) {
      for (std::string_view ph : {"s", "f"}) {
        const std::string head = "{\"ph\":\"" + std::string(ph) + "\",\"cat\":\"" +
                                 std::string(cat) + "\",\"name\":\"" + std::string(cat) +
                                 "\",\"id\":";
        if (line.rfind(head, 0) != 0) continue;
        const std::string_view rest = line.substr(head.size());
        flows.push_back(std::string(ph) + " " + std::string(cat) + " " +
                        std::string(rest.substr(0, rest.find(','))));
      }
    }
  }
  REQUIRE(flows.size() == 4 * kSteps);
  for (size_t pair = 0; pair < kSteps; ++pair) {
    const std::string fwdbwd = std::to_string(2 * pair + 1);
    const std::string both = std::to_string(2 * pair + 2);
    INFO("pair " << pair);
    REQUIRE(flows[4 * pair] == "s fwdbwd " + fwdbwd);
    REQUIRE(flows[4 * pair + 1] == "f fwdbwd " + fwdbwd);
    REQUIRE(flows[4 * pair + 2] == "s forward_backward " + both);
    REQUIRE(flows[4 * pair + 3] == "f forward_backward " + both);
  }
}

// Memory events, counter samples and thread names are formatted in jobs on
// threads too: their order and what they count (events left out) must be
// those of one pass.
TEST_CASE("kineto chunks: memory events and counters in order, left-out events counted") {
  constexpr int kMemoryEvents = 20000;  // 3 jobs of items.
  tensorflow::profiler::XSpace space;
  xplane::XPlaneBuilder host(xplane::FindOrAddPlane(&space, xplane::kHostPlaneName));
  xplane::XLine* main = host.AddLine(testing::kMainTid, "MainThread", 0);
  for (int i = 0; i < kMemoryEvents; ++i) {
    xplane::XEvent* alloc = host.AddEvent(
        main, host.EventMetadataId(xplane::kMemoryAllocationEvent), int64_t{1000} * i, 0);
    host.AddStat(alloc, xplane::kAllocationBytesStat, int64_t{i});
    host.AddStat(alloc, xplane::kAllocatorNameStat, std::string_view("cpu"));
  }
  // A counter line after them whose second sample ends past int64 ns.
  xplane::XLine* counters =
      host.AddLine(xplane::kCounterLineId, xplane::kCounterLineName, INT64_MAX - 10);
  for (int64_t offset_ps : {int64_t{0}, int64_t{1'000'000}}) {
    xplane::XEvent* sample = host.AddEvent(counters, host.EventMetadataId("queue"), offset_ps, 0);
    host.AddStat(sample, xplane::kCounterValueStat, int64_t{3});
  }
  xplane::SetProfileTimes(&space, testing::kStartEpochNs, testing::kStartEpochNs + 1000);
  const std::string text = testing::KinetoTraceText(space);
  CHECK(json_reader::IsStrictJson(text));
  int64_t next_bytes = 0, counter_samples = 0;
  bool named_first = false;
  for (std::string_view line : Lines(text)) {
    if (Has(line, "\"name\":\"thread_name\"")) named_first = next_bytes == 0;
    counter_samples += Has(line, "\"ph\":\"C\"");
    if (!Has(line, "\"[memory]\"")) continue;
    REQUIRE(counter_samples == 0);
    REQUIRE(Has(line, "\"Bytes\":" + std::to_string(next_bytes) + ","));
    ++next_bytes;
  }
  CHECK(named_first);
  CHECK(next_bytes == kMemoryEvents);
  CHECK(counter_samples == 1);
  CHECK(Has(text, "\"neuronprof_warnings\":[\"neuronprof: left out 1 events"));
}

// The Chrome writer cuts a plane's lines into jobs the same way: events in
// line order, each thread named once before its events, events left out
// counted over every job.
TEST_CASE("chrome chunks: events in line order, threads named once, left-out events counted") {
  constexpr int kEvents = 20000;  // 3 jobs on the first line.
  tensorflow::profiler::XSpace space;
  xplane::XPlaneBuilder host(xplane::FindOrAddPlane(&space, xplane::kHostPlaneName));
  for (int64_t tid : {testing::kMainTid, testing::kBackwardTid}) {
    xplane::XLine* line = host.AddLine(tid, tid == testing::kMainTid ? "main" : "second", 0);
    for (int i = 0; i < kEvents; ++i) {
      // One event in a later job with a negative duration: left out.
      const int64_t duration_ps = tid == testing::kMainTid && i == 17000 ? -1000 : 1000;
      xplane::XEvent* event =
          host.AddEvent(line, host.EventMetadataId("op"), int64_t{1'000'000} * i, duration_ps);
      host.AddStat(event, "i", int64_t{i});
    }
  }
  xplane::SetProfileTimes(&space, testing::kStartEpochNs, testing::kStartEpochNs + 1000);
  const std::string text = testing::ChromeTraceText(space);
  CHECK(json_reader::IsStrictJson(text));
  std::vector<std::string> names;
  std::vector<int> next(2, 0);
  int line = -1;
  for (std::string_view event : Lines(text)) {
    if (Has(event, "\"name\":\"thread_name\"")) {
      ++line;
      REQUIRE(line < 2);
      continue;
    }
    if (!Has(event, "\"ph\":\"X\"")) continue;
    REQUIRE(line >= 0);
    if (line == 0 && next[0] == 17000) ++next[0];
    REQUIRE(Has(event, "\"args\":{\"i\":" + std::to_string(next[line]) + "}"));
    ++next[line];
  }
  CHECK(next[0] == kEvents);
  CHECK(next[1] == kEvents);
  CHECK(Has(text, "\"warnings\":[\"neuronprof: left out 1 events"));
}

}  // namespace
}  // namespace neuronprof
