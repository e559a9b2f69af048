// Step schedules (ProfilerOptions::schedule, Profiler::Step()): torch's
// phases, one run per cycle holding only its active steps, the writer
// thread and its callback, Stop() inside a phase, and bad schedules.
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "neuronprof/neuronprof.h"
#include "src/api/step_schedule.h"
#include "src/session/capture_session.h"
#include "src/xplane/schema.h"
#include "src/xplane/xplane_builder.h"
#include "tests/test_util.h"
#include "tests/xplane_read.h"

namespace neuronprof {
namespace {

using api::StepAction;
using testing::TempDir;

ProfilerOptions ScheduledOptions(const std::string& logdir, ProfilerSchedule schedule) {
  ProfilerOptions options;
  options.logdir = logdir;
  options.port = 0;
  options.host_name = "testhost";
  options.run_name = "sched";
  options.schedule = schedule;
  return options;
}

// The step_num of every "train" step in a run's xplane.pb, in order.
std::vector<int64_t> RecordedSteps(const ProfileResult& result) {
  REQUIRE_FALSE(result.files.empty());
  const auto space = testing::ReadXSpace(result.files[0]);
  std::vector<int64_t> steps;
  const auto* host = xplane::FindPlane(space, xplane::kHostPlaneName);
  if (host == nullptr) return steps;
  xplane::PlaneVisitor(*host).ForEachEvent([&](const xplane::EventVisitor& event) {
    if (event.Name() == "train") {
      steps.push_back(event.IntStatNamed(xplane::kStepNumStat).value_or(-1));
    }
  });
  std::sort(steps.begin(), steps.end());
  return steps;
}

// Runs `steps` training steps, each one StepTrace, then Step().
void Train(Profiler* profiler, int64_t first, int64_t steps) {
  for (int64_t step = first; step < first + steps; ++step) {
    { StepTrace trace("train", step); }
    REQUIRE(profiler->Step().ok());
  }
}

std::vector<ProfileResult> OkResults(const Profiler& profiler) {
  std::vector<ProfileResult> results;
  for (const auto& result : profiler.cycle_results()) {
    REQUIRE(result.ok());
    results.push_back(*result);
  }
  return results;
}

TEST_CASE("the step function is torch.profiler.schedule's") {
  const StepAction N = StepAction::kNone, W = StepAction::kWarmup, R = StepAction::kRecord,
                   S = StepAction::kRecordAndSave;
  auto actions = [](ProfilerSchedule schedule, int64_t steps) {
    std::vector<StepAction> out;
    for (int64_t step = 0; step < steps; ++step) {
      out.push_back(api::ActionForStep(schedule, step));
    }
    return out;
  };
  // torch.profiler.schedule(wait=1, warmup=1, active=3, repeat=2).
  CHECK(actions({1, 1, 3, 2, 0}, 12) ==
        std::vector<StepAction>{N, W, R, R, S, N, W, R, R, S, N, N});
  // skip_first=2, no warmup, repeat=0: forever.
  CHECK(actions({1, 0, 2, 0, 2}, 11) == std::vector<StepAction>{N, N, N, R, S, N, R, S, N, R, S});
  // active=1: every active step is its cycle's last.
  CHECK(actions({0, 0, 1, 3, 0}, 4) == std::vector<StepAction>{S, S, S, N});
  CHECK(api::CycleOfStep({1, 1, 3, 2, 0}, 7) == 2);
  CHECK(api::CycleOfStep({1, 1, 3, 2, 4}, 3) == 0);
  CHECK(api::CycleRunName("r", 12) == "r_cycle_0012");
}

TEST_CASE("wait=1 warmup=1 active=3 repeat=2 writes two runs of three active steps") {
  TempDir dir;
  Profiler profiler(ScheduledOptions(dir.path(), {1, 1, 3, 2, 0}));
  REQUIRE(profiler.status().ok());
  CHECK_FALSE(profiler.capturing());  // Step 0 waits.
  Train(&profiler, 0, 12);
  CHECK_FALSE(profiler.capturing());  // Both cycles are done.
  auto last = profiler.Stop();
  REQUIRE(last.ok());

  const auto results = OkResults(profiler);
  REQUIRE(results.size() == 2);
  CHECK(last->run_dir == results[1].run_dir);
  CHECK(results[0].run_dir == dir.path() + "/plugins/profile/sched_cycle_0001");
  CHECK(results[1].run_dir == dir.path() + "/plugins/profile/sched_cycle_0002");
  CHECK(testing::ListDir(dir.path() + "/plugins/profile") ==
        std::vector<std::string>{"sched_cycle_0001", "sched_cycle_0002"});
  // Steps 1 and 6 warm up: recorded, then discarded.
  CHECK(RecordedSteps(results[0]) == std::vector<int64_t>{2, 3, 4});
  CHECK(RecordedSteps(results[1]) == std::vector<int64_t>{7, 8, 9});
  for (const ProfileResult& result : results) {
    CHECK(result.steps == 3);
    CHECK(result.events == 3);  // Counts what the run holds, not the warmup.
    CHECK(result.threads == 1);
    // Each run is written like any Profiler run.
    REQUIRE(result.files.size() == 3);
    CHECK(result.files[1] == result.run_dir + "/testhost.trace.json.gz");
    const std::string run = result.run_dir.substr(result.run_dir.rfind('/') + 1);
    CHECK(result.files[2] == dir.path() + "/" + run + "/testhost.pt.trace.json.gz");
    // The run starts where its active phase did: every event lies after it.
    const auto space = testing::ReadXSpace(result.files[0]);
    const auto* host = xplane::FindPlane(space, xplane::kHostPlaneName);
    REQUIRE(host != nullptr);
    for (const auto& line : host->lines()) {
      CHECK(line.timestamp_ns() >= 0);
      for (const auto& event : line.events()) CHECK(event.offset_ps() >= 0);
    }
    CHECK(xplane::ProfileStopEpochNs(space) - xplane::ProfileStartEpochNs(space) ==
          result.duration_ns);
  }
  CHECK(results[0].cycle == 1);
  CHECK(results[1].cycle == 2);
  // Stop() again: the same last cycle.
  CHECK(profiler.Stop()->run_dir == last->run_dir);
}

TEST_CASE("warmup markers of every thread are discarded, events after it kept") {
  TempDir dir;
  ProfilerOptions options = ScheduledOptions(dir.path(), {0, 1, 1, 1, 0});
  Profiler profiler(options);
  REQUIRE(profiler.capturing());  // Step 0 warms up from construction.
  std::thread warm([] { ScopedTrace t("warmup_worker"); });
  warm.join();
  { ScopedTrace t("warmup_main"); }
  REQUIRE(profiler.Step().ok());
  { ScopedTrace t("active_main"); }
  REQUIRE(profiler.Step().ok());
  auto result = profiler.Stop();
  REQUIRE(result.ok());
  const auto space = testing::ReadXSpace(result->files[0]);
  CHECK(testing::HasEvent(space, "active_main"));
  CHECK_FALSE(testing::HasEvent(space, "warmup_main"));
  CHECK_FALSE(testing::HasEvent(space, "warmup_worker"));
  // The worker's line had only warmup events: it is gone.
  const auto* host = xplane::FindPlane(space, xplane::kHostPlaneName);
  REQUIRE(host != nullptr);
  CHECK(host->lines_size() == 1);
  CHECK(result->threads == 1);
  CHECK(result->events == 1);
}

TEST_CASE("skip_first steps record nothing before the first cycle") {
  TempDir dir;
  // skip_first=3, wait=0, warmup=1, active=2, repeat=1.
  Profiler profiler(ScheduledOptions(dir.path(), {0, 1, 2, 1, 3}));
  Train(&profiler, 0, 3);
  CHECK(profiler.capturing());  // Step 3 warms up.
  Train(&profiler, 3, 5);
  auto result = profiler.Stop();
  REQUIRE(result.ok());
  REQUIRE(profiler.cycle_results().size() == 1);
  CHECK(RecordedSteps(*result) == std::vector<int64_t>{4, 5});
  CHECK(result->cycle == 1);
}

TEST_CASE("repeat=0 cycles until Stop(), which writes the cycle it interrupts") {
  TempDir dir;
  // wait=1, no warmup, active=2: steps 1-2, 4-5, 7-8, 10-11, ...
  Profiler profiler(ScheduledOptions(dir.path(), {1, 0, 2, 0, 0}));
  Train(&profiler, 0, 11);  // Steps 0..10; step 11 is active and running.
  CHECK(profiler.capturing());
  { StepTrace trace("train", 11); }  // Step 11 runs; no Step() after it.
  auto last = profiler.Stop();
  REQUIRE(last.ok());
  const auto results = OkResults(profiler);
  REQUIRE(results.size() == 4);
  CHECK(RecordedSteps(results[0]) == std::vector<int64_t>{1, 2});
  CHECK(RecordedSteps(results[1]) == std::vector<int64_t>{4, 5});
  CHECK(RecordedSteps(results[2]) == std::vector<int64_t>{7, 8});
  // The interrupted cycle keeps what it recorded; `steps` counts the
  // active steps that ended with Step().
  CHECK(RecordedSteps(results[3]) == std::vector<int64_t>{10, 11});
  CHECK(results[3].steps == 1);
  CHECK(results[3].cycle == 4);
  CHECK(last->run_dir == results[3].run_dir);
  CHECK_FALSE(profiler.capturing());
  CHECK(absl::IsFailedPrecondition(profiler.Step()));
}

TEST_CASE("Stop() inside a warmup discards it; no cycle is an error saying why") {
  TempDir dir;
  Profiler profiler(ScheduledOptions(dir.path(), {1, 2, 2, 0, 0}));
  Train(&profiler, 0, 2);  // Step 2 is the second warmup step.
  CHECK(profiler.capturing());
  auto result = profiler.Stop();
  CHECK(absl::IsFailedPrecondition(result.status()));
  const std::string message(result.status().message());
  CHECK(message.find("called 2 times") != std::string::npos);
  CHECK(message.find("first active step is step 3") != std::string::npos);
  CHECK_FALSE(profiler.capturing());
  CHECK(profiler.cycle_results().empty());
  CHECK(profiler.status().ok());  // Nothing failed; nothing was due yet.
  CHECK(testing::ListDir(dir.path() + "/plugins/profile").empty());
  // The capture was released: another one starts.
  Profiler next(ScheduledOptions(dir.path(), {0, 0, 1, 1, 0}));
  CHECK(next.capturing());
}

TEST_CASE("on_trace_ready runs once per cycle, in order, off the caller's thread") {
  TempDir dir;
  struct Call {
    int64_t cycle;
    std::thread::id thread;
    bool files_exist;
  };
  std::mutex mutex;
  std::vector<Call> calls;
  ProfilerOptions options = ScheduledOptions(dir.path(), {1, 1, 3, 2, 0});
  options.on_trace_ready = [&](const ProfileResult& result) {
    bool exist = true;
    for (const std::string& file : result.files) exist &= access(file.c_str(), R_OK) == 0;
    std::lock_guard<std::mutex> lock(mutex);
    calls.push_back({result.cycle, std::this_thread::get_id(), exist});
  };
  Profiler profiler(options);
  Train(&profiler, 0, 12);
  REQUIRE(profiler.Stop().ok());
  // Stop() returned: every callback has run.
  std::lock_guard<std::mutex> lock(mutex);
  REQUIRE(calls.size() == 2);
  CHECK(calls[0].cycle == 1);
  CHECK(calls[1].cycle == 2);
  for (const Call& call : calls) {
    CHECK(call.thread != std::this_thread::get_id());
    CHECK(call.files_exist);
  }
}

TEST_CASE("Step() never waits for the writer: the next cycle records while one is written") {
  TempDir dir;
  testing::ThreadGate gate;  // Holds the writer inside on_trace_ready.
  testing::ReleaseAtExit release{gate};
  ProfilerOptions options = ScheduledOptions(dir.path(), {0, 0, 2, 3, 0});
  options.on_trace_ready = [&](const ProfileResult&) { gate.Enter(); };
  Profiler profiler(options);
  Train(&profiler, 0, 2);  // Cycle 1 ends; its callback holds the writer.
  REQUIRE(gate.WaitEntered(1));
  // The writer is still busy with cycle 1, yet cycles 2 and 3 record and
  // end: Step() only hands them over.
  Train(&profiler, 2, 4);
  CHECK(profiler.cycle_results().empty());  // None is listed before its callback returns.
  gate.Release();
  REQUIRE(profiler.Stop().ok());
  const auto results = OkResults(profiler);
  REQUIRE(results.size() == 3);
  CHECK(RecordedSteps(results[0]) == std::vector<int64_t>{0, 1});
  CHECK(RecordedSteps(results[1]) == std::vector<int64_t>{2, 3});
  CHECK(RecordedSteps(results[2]) == std::vector<int64_t>{4, 5});
}

TEST_CASE("a cycle that cannot take the process's capture is skipped and reported") {
  TempDir dir;
  Profiler profiler(ScheduledOptions(dir.path(), {1, 0, 1, 0, 0}));
  REQUIRE(profiler.status().ok());
  absl::Status refused;
  {
    // Another capture (a remote one, say) holds the gate when cycle 1 begins.
    auto other = session::CaptureSession::Start({}, "the test's other capture");
    REQUIRE(other.ok());
    refused = profiler.Step();  // Step 1 would start cycle 1.
    CHECK(absl::IsFailedPrecondition(refused));
    CHECK(std::string(refused.message()).find("cycle 1 of the schedule was skipped") !=
          std::string::npos);
    CHECK(std::string(refused.message()).find("the test's other capture") != std::string::npos);
    REQUIRE((*other)->Stop().ok());
  }
  REQUIRE(profiler.Step().ok());  // Step 2 waits (cycle 1 had no capture).
  Train(&profiler, 2, 2);         // Step 3 records cycle 2.
  auto last = profiler.Stop();
  REQUIRE(last.ok());
  CHECK(last->cycle == 2);
  CHECK(RecordedSteps(*last) == std::vector<int64_t>{3});
  CHECK(profiler.cycle_results().size() == 1);
  CHECK(profiler.status() == refused);  // The first error stays visible.
}

TEST_CASE("bad schedules are refused with a message naming the field") {
  TempDir dir;
  struct Case {
    const char* field;
    ProfilerSchedule schedule;
  } cases[] = {
      {"schedule.wait", {-1, 0, 1, 0, 0}},
      {"schedule.warmup", {0, -1, 1, 0, 0}},
      {"schedule.active", {0, 0, -3, 0, 0}},
      {"schedule.active", {1, 1, 0, 1, 0}},
      {"schedule.repeat", {0, 0, 1, -1, 0}},
      {"schedule.skip_first", {0, 0, 1, 0, -5}},
      {"schedule.wait", {int64_t{1} << 62, 0, 1, 0, 0}},
  };
  for (const Case& c : cases) {
    CAPTURE(c.field);
    ProfilerOptions options = ScheduledOptions(dir.path(), c.schedule);
    CHECK(absl::IsInvalidArgument(ValidateOptions(options)));
    Profiler profiler(options);
    CHECK(absl::IsInvalidArgument(profiler.status()));
    CHECK(std::string(profiler.status().message()).find(c.field) != std::string::npos);
    CHECK(profiler.Step() == profiler.status());
    CHECK(profiler.Stop().status() == profiler.status());
  }
  // The run name must stay a plain file name with its cycle suffix.
  ProfilerOptions options = ScheduledOptions(dir.path(), {0, 0, 1, 0, 0});
  options.run_name = std::string(250, 'r');
  CHECK(ValidateOptions(ScheduledOptions(dir.path(), {0, 0, 1, 0, 0})).ok());
  const absl::Status long_name = ValidateOptions(options);
  CHECK(absl::IsInvalidArgument(long_name));
  CHECK(std::string(long_name.message()).find("run_name") != std::string::npos);
  CHECK_FALSE(testing::ListDir(dir.path()).size() > 0);
}

TEST_CASE("without a schedule Step() is a no-op and on_trace_ready runs once") {
  TempDir dir;
  ProfilerOptions options;
  options.logdir = dir.path();
  options.port = 0;
  options.host_name = "testhost";
  std::thread::id callback_thread;
  int calls = 0;
  options.on_trace_ready = [&](const ProfileResult&) {
    ++calls;
    callback_thread = std::this_thread::get_id();
  };
  Profiler profiler(options);
  for (int step = 0; step < 3; ++step) {
    { StepTrace trace("train", step); }
    CHECK(profiler.Step().ok());
  }
  CHECK(profiler.capturing());  // Step() changed nothing.
  auto result = profiler.Stop();
  REQUIRE(result.ok());
  CHECK(RecordedSteps(*result) == std::vector<int64_t>{0, 1, 2});
  CHECK(result->cycle == 0);
  CHECK(calls == 1);
  CHECK(callback_thread != std::this_thread::get_id());
  REQUIRE(profiler.cycle_results().size() == 1);
  CHECK(profiler.cycle_results()[0]->run_dir == result->run_dir);
}

TEST_CASE("kOperator without an operator collector is refused at construction") {
  TempDir dir;
  // Step 0 waits: the first capture would start only at step 1.
  ProfilerOptions options = ScheduledOptions(dir.path(), {5, 1, 1, 0, 0});
  options.profile_type = ProfileType::kOperator;
  Profiler profiler(options);
  CHECK(absl::IsFailedPrecondition(profiler.status()));
  CHECK(std::string(profiler.status().message()).find("EnableTorchOperators()") !=
        std::string::npos);
  CHECK(profiler.Step() == profiler.status());
}

TEST_CASE("an exception from on_trace_ready becomes a warning of its run") {
  TempDir dir;
  ProfilerOptions options = ScheduledOptions(dir.path(), {0, 0, 1, 1, 0});
  options.on_trace_ready = [](const ProfileResult&) { throw std::runtime_error("boom"); };
  Profiler profiler(options);
  Train(&profiler, 0, 1);
  auto result = profiler.Stop();
  REQUIRE(result.ok());
  REQUIRE_FALSE(result->warnings.empty());
  CHECK(result->warnings.back() == "on_trace_ready threw: boom");
}

}  // namespace
}  // namespace neuronprof
