// neuronprof::SummarizeMarkers (neuronprof/summary.h) on a real capture:
// a Profiler records requests on two worker threads, one of them with an
// injected 200 ms wait; the in-process summary must name that wait.
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>

#include <catch2/catch.hpp>

#include "neuronprof/profiler.h"
#include "neuronprof/summary.h"
#include "neuronprof/trace.h"
#include "tests/test_util.h"

namespace neuronprof {
namespace {

constexpr int kRequests = 100;
constexpr int kDelayed = 42;
constexpr int64_t kDelayNs = 200'000'000;

// Requests first..last-1 on a thread named `name`; request kDelayed sleeps
// kDelayNs inside its queue_wait (the injected delay, not a wait for
// another thread).
void Serve(const char* name, int first, int last) {
  SetCurrentThreadName(name);
  for (int i = first; i < last; ++i) {
    StepTrace request("request", i);
    {
      ScopedTrace wait("queue_wait");
      if (i == kDelayed) std::this_thread::sleep_for(std::chrono::nanoseconds(kDelayNs));
    }
    ScopedTrace infer("infer");
    volatile double acc = 0;
    for (int k = 0; k < 2000; ++k) acc = acc + k * 0.5;
  }
}

ProfileResult Capture(const std::string& logdir) {
  ProfilerOptions options;
  options.logdir = logdir;
  options.port = 0;
  options.write_chrome_trace = false;
  options.write_pytorch_trace = false;
  Profiler profiler(options);
  REQUIRE(profiler.status().ok());
  std::thread one(Serve, "worker-1", 0, kRequests / 2);
  std::thread two(Serve, "worker-2", kRequests / 2, kRequests);
  one.join();
  two.join();
  auto result = profiler.Stop();
  REQUIRE(result.ok());
  return *result;
}

TEST_CASE("SummarizeMarkers counts a capture's steps and markers and names its tail") {
  testing::TempDir dir;
  const ProfileResult result = Capture(dir.path());
  MarkerSummaryOptions options;
  options.group_by = MarkerSummaryOptions::GroupBy::kThreadGroup;
  const auto summary = SummarizeMarkers(result, options);
  REQUIRE(summary.ok());
  REQUIRE(summary->steps.size() == 1);
  const MarkerStatsRow& request = summary->steps[0];
  CHECK(request.name == "request");
  CHECK(request.thread == "worker-*");
  CHECK(request.stats.calls == kRequests);
  CHECK(request.stats.max_ns >= kDelayNs);
  CHECK(request.stats.p50_ns < request.stats.max_ns);
  int64_t waits = 0;
  for (const MarkerStatsRow& row : summary->markers) {
    if (row.name == "queue_wait" && row.thread == "worker-*") waits = row.stats.calls;
  }
  CHECK(waits == kRequests);

  REQUIRE(summary->tails.size() == 1);
  const TailExplanation& tail = summary->tails[0];
  CHECK(tail.instances == kRequests);
  CHECK(tail.slowest == 1);
  REQUIRE(tail.has_tail);
  REQUIRE_FALSE(tail.parts.empty());
  // The sleep guarantees at least the delay; a typical wait is far below 1 ms.
  CHECK(tail.parts[0].part == "queue_wait");
  CHECK(tail.parts[0].excess_ns >= kDelayNs - 1'000'000);
  CHECK(tail.text.find("in queue_wait") != std::string::npos);
}

TEST_CASE("SummarizeMarkers restricts to a step range and says what is wrong") {
  testing::TempDir dir;
  const ProfileResult result = Capture(dir.path());
  MarkerSummaryOptions options;
  options.steps = {{40, 49}};
  auto summary = SummarizeMarkers(result, options);
  REQUIRE(summary.ok());
  REQUIRE(summary->steps.size() == 1);
  CHECK(summary->steps[0].stats.calls == 10);

  options.steps = {{1000, 2000}};
  summary = SummarizeMarkers(result, options);
  REQUIRE_FALSE(summary.ok());
  CHECK(summary.status().code() == absl::StatusCode::kNotFound);
  CHECK(std::string(summary.status().message()).find("numbered 0-99") != std::string::npos);

  options.window_ms = {{0, 1}};
  CHECK(SummarizeMarkers(result, options).status().code() ==
        absl::StatusCode::kInvalidArgument);
  CHECK(SummarizeMarkers(ProfileResult{}).status().code() == absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace neuronprof
