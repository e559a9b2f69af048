// Profiler sessions end to end: options, one capture at a time, the window,
// the files written and what happens when they cannot be written.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "neuronprof/neuronprof.h"
#include "src/analysis/report/summary.h"
#include "src/analysis/report/summary_sections.h"
#include "src/collectors/collector.h"
#include "src/core/recorder.h"
#include "src/export/atomic_file.h"
#include "src/xplane/schema.h"
#include "src/xplane/xplane_builder.h"
#include "tests/test_util.h"
#include "tests/xplane_read.h"

namespace neuronprof {
namespace {

using tensorflow::profiler::XPlane;
using testing::TempDir;

ProfilerOptions TestOptions(const std::string& logdir) {
  ProfilerOptions options;
  options.logdir = logdir;
  options.port = 0;
  options.host_name = "testhost";
  return options;
}

bool Exists(const std::string& path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0;
}

using testing::EventName;
using testing::StatName;

bool HasEventNamed(const tensorflow::profiler::XSpace& space, const std::string& prefix) {
  return testing::HasEvent(space, prefix, /*prefix=*/true);
}

// What a fake collector is told to do, and what happened to it.
struct FakeScript {
  std::string name;
  absl::Status start_status, stop_status, collect_status;
  std::function<void()> on_stop;  // Runs inside Stop(), before it returns.
  int starts = 0, stops = 0, collects = 0;
  bool recording_at_start = false;
};

// A collector driven by a FakeScript; Collect adds the plane "/fake:<name>".
class FakeCollector : public collectors::Collector {
 public:
  explicit FakeCollector(FakeScript* script) : script_(script) {}
  std::string name() const override { return script_->name; }
  absl::Status Start() override {
    ++script_->starts;
    script_->recording_at_start = core::IsRecording();
    return script_->start_status;
  }
  absl::Status Stop() override {
    ++script_->stops;
    if (script_->on_stop) script_->on_stop();
    return script_->stop_status;
  }
  absl::Status Collect(tensorflow::profiler::XSpace* space, collectors::CollectStats*) override {
    ++script_->collects;
    if (!script_->collect_status.ok()) return script_->collect_status;
    xplane::FindOrAddPlane(space, "/fake:" + script_->name);
    return absl::OkStatus();
  }

 private:
  FakeScript* script_;
};

// Fake collectors in the session's real factory list, after the host
// collector, for the lifetime of this object.
class ArmedFakes {
 public:
  explicit ArmedFakes(FakeScript* first, FakeScript* second = nullptr) {
    for (FakeScript* script : {first, second}) {
      if (script == nullptr) continue;
      registrations_.push_back(std::make_unique<collectors::ScopedCollectorFactory>(
          [script](const collectors::CollectorOptions&) -> std::unique_ptr<collectors::Collector> {
            return std::make_unique<FakeCollector>(script);
          }));
    }
  }

 private:
  std::vector<std::unique_ptr<collectors::ScopedCollectorFactory>> registrations_;
};

TEST_CASE("bad options are refused with a message naming the option") {
  TempDir dir;
  struct Case {
    const char* field;
    void (*apply)(ProfilerOptions*);
  } cases[] = {
      {"port", [](ProfilerOptions* o) { o->port = 70000; }},
      {"ms_duration", [](ProfilerOptions* o) { o->ms_duration = 0; }},
      {"ms_duration", [](ProfilerOptions* o) { o->ms_duration = 2 * 3600 * 1000; }},
      {"logdir", [](ProfilerOptions* o) { o->logdir = ""; }},
      {"run_name", [](ProfilerOptions* o) { o->run_name = "../escape"; }},
      {"host_name", [](ProfilerOptions* o) { o->host_name = "a/b"; }},
      {"host_tracer_level", [](ProfilerOptions* o) { o->host_tracer_level = 4; }},
      {"device_tracer_level", [](ProfilerOptions* o) { o->device_tracer_level = -1; }},
      {"device_tracer_level", [](ProfilerOptions* o) { o->device_tracer_level = 3; }},
      {"max_buffer_bytes", [](ProfilerOptions* o) { o->max_buffer_bytes = 1; }},
  };
  for (const Case& c : cases) {
    ProfilerOptions options = TestOptions(dir.path());
    c.apply(&options);
    Profiler profiler(options);
    CAPTURE(c.field);
    CHECK(absl::IsInvalidArgument(profiler.status()));
    CHECK(std::string(profiler.status().message()).find(c.field) != std::string::npos);
    CHECK_FALSE(profiler.capturing());
    auto result = profiler.Stop();
    CHECK(result.status() == profiler.status());
  }
  // Nothing was captured, so nothing was written.
  CHECK_FALSE(Exists(dir.path() + "/plugins"));
}

TEST_CASE("only one Profiler captures at a time") {
  TempDir dir;
  Profiler first(TestOptions(dir.path()));
  REQUIRE(first.status().ok());
  Profiler second(TestOptions(dir.path()));
  CHECK(absl::IsFailedPrecondition(second.status()));
  CHECK(std::string(second.status().message())
            .rfind("a capture is already running in this process: a Profiler (its 60000 ms "
                   "window ends by itself, or at Profiler::Stop()), started ",
                   0) == 0);
  REQUIRE(first.Stop().ok());
  // Once the first has ended, a new one starts.
  Profiler third(TestOptions(dir.path()));
  CHECK(third.status().ok());
}

TEST_CASE("operator profiles need an operator collector") {
  TempDir dir;
  ProfilerOptions options = TestOptions(dir.path());
  options.profile_type = ProfileType::kOperator;
  Profiler profiler(options);
  CHECK(absl::IsFailedPrecondition(profiler.status()));
  const std::string message(profiler.status().message());
  CHECK(message.find("kOperator") != std::string::npos);
  // Names what the user can do: enable the collector, or not ask for it.
  CHECK(message.find("EnableTorchOperators()") != std::string::npos);
  CHECK(message.find("kTrace") != std::string::npos);
}

TEST_CASE("a capture writes the host plane with threads, nesting and stats") {
  TempDir dir;
  ProfilerOptions options = TestOptions(dir.path());
  options.run_name = "run1";
  Profiler profiler(options);
  REQUIRE(profiler.status().ok());
  for (int step = 0; step < 3; ++step) {
    StepTrace trace("train", step);
    ScopedTrace inner("model_build", {{"layer", "fc1"}});
  }
  std::thread worker([] {
    SetCurrentThreadName("worker");
    ScopedTrace trace("background");
  });
  worker.join();
  auto result = profiler.Stop();
  REQUIRE(result.ok());
  CHECK(result->events == 7);
  CHECK(result->threads == 2);
  CHECK(result->dropped_events == 0);
  CHECK(result->run_dir == dir.path() + "/plugins/profile/run1");
  REQUIRE(result->files.size() == 3);
  CHECK(result->files[0] == result->run_dir + "/testhost.xplane.pb");
  CHECK(result->files[1] == result->run_dir + "/testhost.trace.json.gz");
  // The PyTorch plugin's run folder has the xprof run's name.
  CHECK(result->files[2] == dir.path() + "/run1/testhost.pt.trace.json.gz");
  CHECK(Exists(result->files[2]));
  // The working copy is gone by default.
  CHECK_FALSE(Exists(dir.path() + "/.neuronprof_working"));
  // Stop() again returns the same result.
  CHECK(profiler.Stop()->files == result->files);

  auto space = testing::ReadXSpace(result->files[0]);
  CHECK(space.hostnames_size() == 1);
  const int64_t start = xplane::ProfileStartEpochNs(space);
  CHECK(start > 0);
  const XPlane* host = xplane::FindPlane(space, xplane::kHostPlaneName);
  REQUIRE(host != nullptr);
  REQUIRE(host->lines_size() == 2);
  const auto& main_line = host->lines(0).name() == "worker" ? host->lines(1) : host->lines(0);
  const auto& worker_line = host->lines(0).name() == "worker" ? host->lines(0) : host->lines(1);
  CHECK(worker_line.events_size() == 1);
  REQUIRE(main_line.events_size() == 6);
  // Sorted by start: step, its child, next step, ...
  for (int i = 0; i < 6; i += 2) {
    const auto& step = main_line.events(i);
    const auto& child = main_line.events(i + 1);
    CHECK(EventName(*host, step) == "train");
    CHECK(EventName(*host, child) == "model_build");
    CHECK(child.offset_ps() >= step.offset_ps());
    CHECK(child.offset_ps() + child.duration_ps() <= step.offset_ps() + step.duration_ps());
    REQUIRE(step.stats_size() == 2);
    CHECK(StatName(*host, step.stats(0)) == "step_num");
    CHECK(step.stats(0).int64_value() == i / 2);
    CHECK(StatName(*host, step.stats(1)) == "_r");
    // String arguments are interned (ref_value names a stat metadata entry).
    REQUIRE(child.stats(0).value_case() == tensorflow::profiler::XStat::kRefValue);
    CHECK(xplane::PlaneVisitor(*host).StatName(static_cast<int64_t>(child.stats(0).ref_value())) ==
          "fc1");
  }
  // Line times are relative to the profile start and fall in the window.
  CHECK(main_line.timestamp_ns() >= 0);
  CHECK(main_line.timestamp_ns() < result->duration_ns);
}

// A Profiler whose window of `ms_duration` ends by itself, with the
// collecting thread held inside a fake collector's Stop() (which the
// session calls after the host recorder's) until the test releases `gate`
// (at the latest when the window goes out of scope).
struct GatedWindow {
  explicit GatedWindow(int64_t ms_duration) : profiler(Options(dir.path(), ms_duration)) {}
  static ProfilerOptions Options(const std::string& logdir, int64_t ms_duration) {
    ProfilerOptions options = TestOptions(logdir);
    options.ms_duration = ms_duration;
    return options;
  }

  TempDir dir;
  testing::ThreadGate gate;
  FakeScript gate_collector{"gate", {}, {}, {}, [this] { gate.Enter(); }};
  ArmedFakes fakes{&gate_collector};
  Profiler profiler;
  testing::ReleaseAtExit release{gate};
};

TEST_CASE("the window ends by itself after ms_duration; later markers are left out") {
  GatedWindow window(20);
  Profiler& profiler = window.profiler;
  testing::ThreadGate& gate = window.gate;
  REQUIRE(profiler.status().ok());
  { ScopedTrace inside("inside"); }
  // Nobody calls Stop(): the window has to end by itself.
  REQUIRE(gate.WaitEntered());
  // The window has ended but the capture is not yet collected or written:
  // markers now, literal or copied, must not get into it.
  { ScopedTrace after("after_literal"); }
  { ScopedTrace after(std::string("after_") + "copied"); }
  gate.Release();
  auto result = profiler.WaitForCompletion();
  REQUIRE(result.ok());
  CHECK_FALSE(profiler.capturing());
  CHECK(result->events == 1);
  CHECK(result->duration_ns >= 20000000);
  auto space = testing::ReadXSpace(result->files[0]);
  CHECK_FALSE(HasEventNamed(space, "after_"));
  const XPlane* host = xplane::FindPlane(space, xplane::kHostPlaneName);
  REQUIRE(host != nullptr);
  REQUIRE(host->lines_size() == 1);
  REQUIRE(host->lines(0).events_size() == 1);
  CHECK(EventName(*host, host->lines(0).events(0)) == "inside");
}

// The case: ms_duration 50, 20 steps of 10 ms. Whatever the timing,
// the steps begun after the window ended are counted and named with the
// option that would have kept them (no sleeps decide the count: the steps
// after WaitEntered() run once the window has closed).
TEST_CASE("a window that ends before the program says so, with the steps after it") {
  GatedWindow window(50);
  Profiler& profiler = window.profiler;
  testing::ThreadGate& gate = window.gate;
  REQUIRE(profiler.status().ok());
  for (int step = 0; step < 4; ++step) StepTrace recorded("train", step);
  REQUIRE(gate.WaitEntered());  // The window has ended by itself.
  gate.Release();
  // Its files are written while the program runs on: they carry the warning.
  while (profiler.capturing()) std::this_thread::yield();
  for (int step = 4; step < 20; ++step) {
    StepTrace late("train", step);
    REQUIRE(profiler.Step().ok());
  }
  auto result = profiler.Stop();
  REQUIRE(result.ok());
  REQUIRE(result->warnings.size() == 1);
  CHECK(result->warnings[0] ==
        "ms_duration=50 ended the window at 50 ms; 16 more steps ran after it: raise "
        "ProfilerOptions::ms_duration");
  auto space = testing::ReadXSpace(result->files[0]);
  REQUIRE(space.warnings_size() == 1);
  CHECK(space.warnings(0).find("ms_duration=50 ended the window") != std::string::npos);
  CHECK(space.warnings(0).find("raise ProfilerOptions::ms_duration") != std::string::npos);
  // The summary prints it.
  const std::string text = analysis::FormatSummaryText(analysis::Summarize(space), 20);
  CHECK(text.find("warning: ms_duration=50 ended the window") != std::string::npos);
  // Stop() again: the same result.
  auto again = profiler.Stop();
  REQUIRE(again.ok());
  CHECK(again->warnings == result->warnings);
}

TEST_CASE("a window awaited or stopped in time has no window warning") {
  TempDir dir;
  ProfilerOptions options = TestOptions(dir.path());
  options.ms_duration = 1000;  // Awaited long before it ends.
  Profiler profiler(options);
  { StepTrace step("train", 0); }
  auto result = profiler.WaitForCompletion();
  REQUIRE(result.ok());
  { StepTrace step("train", 1); }
  result = profiler.Stop();
  REQUIRE(result.ok());
  CHECK(result->warnings.empty());
}

TEST_CASE("an ms_duration past what the clock counts lasts until Stop()") {
  TempDir dir;
  ProfilerOptions options = TestOptions(dir.path());
  options.max_ms_duration = std::numeric_limits<int64_t>::max();
  options.ms_duration = options.max_ms_duration - 1;
  Profiler profiler(options);
  REQUIRE(profiler.status().ok());
  { ScopedTrace inside("inside"); }
  CHECK(profiler.capturing());
  auto result = profiler.Stop();
  REQUIRE(result.ok());
  CHECK(result->events == 1);
}

TEST_CASE("a collector that fails to start rolls back the ones started before it") {
  TempDir dir;
  FakeScript started{"fake_started"};
  FakeScript refusing{"fake_refusing"};
  refusing.start_status = absl::UnavailableError("fake device is busy");
  {
    ArmedFakes fakes(&started, &refusing);
    Profiler failed(TestOptions(dir.path()));
    // The error is the collector's, and names it.
    CHECK(absl::IsUnavailable(failed.status()));
    const std::string message(failed.status().message());
    CHECK(message.find("fake_refusing") != std::string::npos);
    CHECK(message.find("fake device is busy") != std::string::npos);
    CHECK_FALSE(failed.capturing());
    CHECK(failed.Stop().status() == failed.status());
    // The host recorder and the fake started before it were stopped again;
    // the refusing one is never stopped.
    CHECK(started.recording_at_start);
    CHECK(started.starts == 1);
    CHECK(started.stops == 1);
    CHECK(started.collects == 0);
    CHECK(refusing.starts == 1);
    CHECK(refusing.stops == 0);
    CHECK_FALSE(core::IsRecording());
    { ScopedTrace lost("while_nothing_records"); }
  }
  CHECK_FALSE(Exists(dir.path() + "/plugins"));

  // Nothing is left half-open: the next capture starts and records.
  refusing.start_status = absl::OkStatus();
  ArmedFakes fakes(&started, &refusing);
  Profiler next(TestOptions(dir.path()));
  REQUIRE(next.status().ok());
  { ScopedTrace marker("next_capture"); }
  auto result = next.Stop();
  REQUIRE(result.ok());
  CHECK(result->events == 1);
  CHECK(result->warnings.empty());
  auto space = testing::ReadXSpace(result->files[0]);
  CHECK(HasEventNamed(space, "next_capture"));
  CHECK_FALSE(HasEventNamed(space, "while_nothing_records"));
  CHECK(xplane::FindPlane(space, "/fake:fake_started") != nullptr);
  CHECK(xplane::FindPlane(space, "/fake:fake_refusing") != nullptr);
}

TEST_CASE("a collector failing in Stop or Collect keeps the rest of the capture") {
  TempDir dir;
  FakeScript bad_stop{"fake_bad_stop"};
  bad_stop.stop_status = absl::DataLossError("fake lost its records");
  FakeScript bad_collect{"fake_bad_collect"};
  bad_collect.collect_status = absl::InternalError("fake cannot translate");
  ArmedFakes fakes(&bad_stop, &bad_collect);
  Profiler profiler(TestOptions(dir.path()));
  REQUIRE(profiler.status().ok());
  { ScopedTrace kept("kept_marker"); }
  auto result = profiler.Stop();
  REQUIRE(result.ok());
  CHECK(result->events == 1);
  // Each failure is an error naming its collector, in the result and file.
  auto space = testing::ReadXSpace(result->files[0]);
  REQUIRE(space.errors_size() == 2);
  CHECK(space.errors(0).find("fake_bad_stop collector failed to stop") != std::string::npos);
  CHECK(space.errors(0).find("fake lost its records") != std::string::npos);
  CHECK(space.errors(1).find("fake_bad_collect collector failed") != std::string::npos);
  CHECK(space.errors(1).find("fake cannot translate") != std::string::npos);
  REQUIRE(result->warnings.size() == 2);
  CHECK(result->warnings[0] == "error: " + space.errors(0));
  CHECK(result->warnings[1] == "error: " + space.errors(1));
  // A collector that did not stop is not collected; the other one is.
  CHECK(bad_stop.collects == 0);
  CHECK(bad_collect.stops == 1);
  CHECK(bad_collect.collects == 1);
  // The host plane is all there.
  CHECK(HasEventNamed(space, "kept_marker"));
  CHECK(xplane::FindPlane(space, xplane::kHostPlaneName) != nullptr);
  CHECK_FALSE(core::IsRecording());
}

TEST_CASE("delete_working=false keeps the raw capture") {
  TempDir dir;
  ProfilerOptions options = TestOptions(dir.path());
  options.delete_working = false;
  options.run_name = "kept";
  Profiler profiler(options);
  { ScopedTrace t("x"); }
  auto result = profiler.Stop();
  REQUIRE(result.ok());
  const std::string raw = dir.path() + "/.neuronprof_working/kept/testhost.xplane.pb";
  CHECK(Exists(raw));
  CHECK(std::find(result->files.begin(), result->files.end(), raw) != result->files.end());
  // Serialized once: the run folder's xplane.pb is the same file, linked.
  struct stat raw_stat {
  }, run_stat{};
  REQUIRE(stat(raw.c_str(), &raw_stat) == 0);
  REQUIRE(stat((dir.path() + "/plugins/profile/kept/testhost.xplane.pb").c_str(), &run_stat) == 0);
  CHECK(raw_stat.st_ino == run_stat.st_ino);
  CHECK(run_stat.st_nlink == 2);
}

TEST_CASE("write_pytorch_trace=false writes no .pt.trace.json.gz") {
  TempDir dir;
  ProfilerOptions options = TestOptions(dir.path());
  options.write_pytorch_trace = false;
  options.run_name = "no_torch_trace";
  Profiler profiler(options);
  { ScopedTrace t("x"); }
  auto result = profiler.Stop();
  REQUIRE(result.ok());
  CHECK(result->files.size() == 2);
  CHECK_FALSE(Exists(dir.path() + "/no_torch_trace"));
}

TEST_CASE("an unwritable logdir keeps the capture in a fallback folder") {
  TempDir dir;
  const std::string blocker = dir.path() + "/not_a_dir";
  REQUIRE(exporter::WriteFileAtomically(blocker, "x").ok());
  ProfilerOptions options = TestOptions(blocker + "/logs");
  options.run_name = "fallback_run";
  Profiler profiler(options);
  REQUIRE(profiler.status().ok());
  { ScopedTrace t("precious"); }
  auto result = profiler.Stop();
  REQUIRE_FALSE(result.ok());
  const std::string message(result.status().message());
  CHECK(message.find(blocker) != std::string::npos);
  const size_t at = message.find("saved to '");
  REQUIRE(at != std::string::npos);
  const std::string fallback = message.substr(at + 10, message.find('\'', at + 10) - at - 10);
  auto space = testing::ReadXSpace(fallback + "testhost.xplane.pb");
  const XPlane* host = xplane::FindPlane(space, xplane::kHostPlaneName);
  REQUIRE(host != nullptr);
  CHECK(EventName(*host, host->lines(0).events(0)) == "precious");
  CHECK(Exists(fallback + "testhost.pt.trace.json.gz"));
  exporter::RemoveTree(fallback);
}

TEST_CASE("drops are reported in the result and as an XSpace warning") {
  TempDir dir;
  ProfilerOptions options = TestOptions(dir.path());
  options.max_buffer_bytes = 64 * 1024;  // One block: 2047 records.
  Profiler profiler(options);
  // Zero-copy names, so the one block holds records, not name copies.
  for (int i = 0; i < 5000; ++i) NEURONPROF_SCOPE("many");
  auto result = profiler.Stop();
  REQUIRE(result.ok());
  CHECK(result->events + result->dropped_events == 5000);
  CHECK(result->events > 0);
  CHECK(result->dropped_events > 0);
  REQUIRE(result->warnings.size() == 1);
  CHECK(result->warnings[0].find("dropped") != std::string::npos);
  auto space = testing::ReadXSpace(result->files[0]);
  REQUIRE(space.warnings_size() == 1);
  CHECK(space.warnings(0) == result->warnings[0]);
}

}  // namespace
}  // namespace neuronprof
