// FlightRecorder::TriggerOnSlowStep: a slow StepTrace makes the recorder
// dump on its own thread; the dump holds the slow step, the events before
// it and a slow_step_trigger event spanning it. Waits for the background
// dump are bounded waits on its on_dump callback.
#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "neuronprof/neuronprof.h"
#include "tests/api/flight_options.h"
#include "tests/test_util.h"
#include "tests/xplane_read.h"

namespace neuronprof {
namespace {

using testing::TempDir;

FlightRecorderOptions Options(const TempDir& dir) {
  FlightRecorderOptions options = testing::FlightOptions(dir.path(), "trigger_host");
  options.write_pytorch_trace = false;
  return options;
}

// Collects the results of triggered dumps, per step name.
class Dumps {
 public:
  SlowStepTrigger Trigger(const std::string& name, int64_t threshold_ms, int64_t cooldown_ms) {
    SlowStepTrigger trigger;
    trigger.step_name = name;
    trigger.threshold_ms = threshold_ms;
    trigger.cooldown_ms = cooldown_ms;
    trigger.on_dump = [this, name](const absl::StatusOr<ProfileResult>& result) {
      std::lock_guard<std::mutex> lock(mutex_);
      results_.emplace_back(name, result);
      changed_.notify_all();
    };
    return trigger;
  }
  // Bounded wait until `n` dumps came back.
  bool WaitFor(size_t n) {
    std::unique_lock<std::mutex> lock(mutex_);
    return changed_.wait_for(lock, std::chrono::seconds(30), [&] { return results_.size() >= n; });
  }
  std::vector<std::pair<std::string, absl::StatusOr<ProfileResult>>> results() {
    std::lock_guard<std::mutex> lock(mutex_);
    return results_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::pair<std::string, absl::StatusOr<ProfileResult>>> results_;
};

// A step that lasts at least `ms`.
void Step(const char* name, int64_t num, int ms) {
  StepTrace step(name, num);
  NEURONPROF_SCOPE("stage");
  if (ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

tensorflow::profiler::XSpace ReadDump(const ProfileResult& result) {
  for (const std::string& file : result.files) {
    if (file.size() > 10 && file.substr(file.size() - 10) == ".xplane.pb") {
      return testing::ReadXSpace(file);
    }
  }
  FAIL("no .xplane.pb in the dump");
  return {};
}

TEST_CASE("a slow step makes the flight recorder dump on its own thread") {
  TempDir dir;
  FlightRecorder recorder(Options(dir));
  REQUIRE(recorder.status().ok());
  Dumps dumps;
  REQUIRE(recorder.TriggerOnSlowStep(dumps.Trigger("request", 20, 60000)).ok());
  { NEURONPROF_SCOPE("before_everything"); }
  for (int i = 0; i < 5; ++i) Step("request", i, 0);
  Step("request", 5, 40);  // The slow one.
  REQUIRE(dumps.WaitFor(1));
  const auto results = dumps.results();
  REQUIRE(results.size() == 1);
  REQUIRE(results[0].second.ok());
  const ProfileResult& dump = *results[0].second;
  CHECK(dump.run_dir.find("_slow_request_") != std::string::npos);
  bool warned = false;
  for (const std::string& warning : dump.warnings) {
    warned |= warning.find("step \"request\" (step_num 5)") != std::string::npos &&
              warning.find("threshold of 20 ms") != std::string::npos;
  }
  CHECK(warned);
  const tensorflow::profiler::XSpace space = ReadDump(dump);
  CHECK(testing::HasEvent(space, "before_everything"));
  CHECK(testing::HasEvent(space, "request"));
  CHECK(testing::HasEvent(space, "slow_step_trigger"));
  // The marker spans the slow step: same length as the "request" with
  // step_num 5.
  int64_t slow_ps = -1;
  int64_t marker_ps = -2;
  for (const auto& plane : space.planes()) {
    xplane::PlaneVisitor(plane).ForEachEvent([&](const xplane::EventVisitor& event) {
      if (event.Name() == "request") {
        const auto step_num = event.StatNamed("step_num");
        if (step_num && step_num->IntValue() == 5) slow_ps = event.DurationPs();
      } else if (event.Name() == "slow_step_trigger") {
        marker_ps = event.DurationPs();
      }
    });
  }
  CHECK(slow_ps >= int64_t{40} * 1000000000);
  CHECK(marker_ps == slow_ps);
}

TEST_CASE("a slow-step trigger ignores fast steps, other names and its cool-down") {
  TempDir dir;
  FlightRecorder recorder(Options(dir));
  REQUIRE(recorder.status().ok());
  Dumps dumps;
  REQUIRE(recorder.TriggerOnSlowStep(dumps.Trigger("a", 15, 60000)).ok());
  Step("a", 0, 0);       // Fast: nothing.
  Step("other", 0, 30);  // Not watched: nothing.
  Step("a", 1, 30);      // Dumps.
  REQUIRE(dumps.WaitFor(1));
  Step("a", 2, 30);  // In a's cool-down: nothing.
  // "b" is armed after a's slow steps ended: its dump comes back after
  // anything a's second step could have queued (the trigger thread handles
  // triggers in arming order on each wake-up).
  REQUIRE(recorder.TriggerOnSlowStep(dumps.Trigger("b", 15, 0)).ok());
  Step("b", 0, 30);
  REQUIRE(dumps.WaitFor(2));
  const auto results = dumps.results();
  REQUIRE(results.size() == 2);
  CHECK(results[0].first == "a");
  CHECK(results[1].first == "b");
  REQUIRE(results[0].second.ok());
  CHECK(results[0].second->run_dir.find("_slow_a_") != std::string::npos);
}

TEST_CASE("slow steps on many threads: one dump per cool-down, nobody waits") {
  TempDir dir;
  FlightRecorder recorder(Options(dir));
  REQUIRE(recorder.status().ok());
  Dumps dumps;
  REQUIRE(recorder.TriggerOnSlowStep(dumps.Trigger("work", 5, 60000)).ok());
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t] {
      for (int i = 0; i < 20; ++i) Step("work", t * 100 + i, i % 5 == 0 ? 10 : 0);
    });
  }
  for (auto& thread : threads) thread.join();
  REQUIRE(recorder.TriggerOnSlowStep(dumps.Trigger("end", 1, 0)).ok());
  Step("end", 0, 5);
  REQUIRE(dumps.WaitFor(2));
  const auto results = dumps.results();
  CHECK(results.size() == 2);
  CHECK(results[0].first == "work");
  CHECK(results[0].second.ok());
}

TEST_CASE("slow-step trigger bad inputs") {
  TempDir dir;
  FlightRecorder recorder(Options(dir));
  REQUIRE(recorder.status().ok());
  CHECK(absl::IsInvalidArgument(recorder.TriggerOnSlowStep("", 10, 0)));
  CHECK(absl::IsInvalidArgument(recorder.TriggerOnSlowStep("x", 0, 0)));
  CHECK(absl::IsInvalidArgument(recorder.TriggerOnSlowStep("x", -3, 0)));
  CHECK(absl::IsInvalidArgument(recorder.TriggerOnSlowStep("x", 10, -1)));
  for (int i = 0; i < 16; ++i) {
    CHECK(recorder.TriggerOnSlowStep("name" + std::to_string(i), 10, 0).ok());
  }
  CHECK(recorder.TriggerOnSlowStep("name3", 20, 5).ok());  // Re-arms.
  CHECK(absl::IsResourceExhausted(recorder.TriggerOnSlowStep("one_more", 10, 0)));

  FlightRecorder second(Options(dir));  // Refused: `recorder` runs.
  CHECK(absl::IsFailedPrecondition(second.TriggerOnSlowStep("x", 10, 0)));
}

TEST_CASE("a recorder destroyed while a step is watched and running") {
  TempDir dir;
  std::mutex mutex;
  std::condition_variable changed;
  bool step_started = false;
  bool recorder_gone = false;
  std::thread worker;
  {
    FlightRecorder recorder(Options(dir));
    REQUIRE(recorder.status().ok());
    REQUIRE(recorder.TriggerOnSlowStep("long", 1, 0).ok());
    worker = std::thread([&] {
      StepTrace step("long", 0);
      std::unique_lock<std::mutex> lock(mutex);
      step_started = true;
      changed.notify_all();
      changed.wait(lock, [&] { return recorder_gone; });
    });  // The step ends after the recorder: reported to nobody.
    std::unique_lock<std::mutex> lock(mutex);
    changed.wait(lock, [&] { return step_started; });
  }
  {
    std::lock_guard<std::mutex> lock(mutex);
    recorder_gone = true;
    changed.notify_all();
  }
  worker.join();
  // A new recorder arms again.
  FlightRecorder again(Options(dir));
  REQUIRE(again.status().ok());
  CHECK(again.TriggerOnSlowStep("long", 1, 0).ok());
}

}  // namespace
}  // namespace neuronprof
