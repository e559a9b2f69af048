// FlightRecorder: dumps are normal runs read back with the project's
// XSpace reader; bad inputs and other captures get clear statuses.
#include <signal.h>
#include <sys/stat.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "bench/process_memory.h"
#include "neuronprof/neuronprof.h"
#include "src/core/clock.h"
#include "src/export/logdir.h"
#include "src/xplane/sanitizers.h"
#include "tests/api/flight_options.h"
#include "tests/test_util.h"
#include "tests/xplane_read.h"

namespace neuronprof {
namespace {

using testing::TempDir;

FlightRecorderOptions Options(const TempDir& dir) {
  return testing::FlightOptions(dir.path(), "flight_host");
}

TEST_CASE("a flight recorder dump is a run the XSpace reader opens") {
  TempDir dir;
  FlightRecorder recorder(Options(dir));
  REQUIRE(recorder.status().ok());
  for (int step = 0; step < 3; ++step) {
    StepTrace step_trace("train", step);
    NEURONPROF_SCOPE("forward");
  }
  auto first = recorder.Dump("slow step!");
  REQUIRE(first.ok());
  CHECK(first->events == 6);
  CHECK(first->threads == 1);
  CHECK(first->run_dir.find("_slow_step_") != std::string::npos);
  bool have_xplane = false;
  for (const std::string& file : first->files) {
    if (file.size() > 10 && file.substr(file.size() - 10) == ".xplane.pb") {
      have_xplane = true;
      tensorflow::profiler::XSpace space = testing::ReadXSpace(file);
      CHECK(testing::HasEvent(space, "train"));
      CHECK(testing::HasEvent(space, "forward"));
    }
  }
  CHECK(have_xplane);
  CHECK(first->files.size() == 1);  // The .xplane.pb alone, by default.

  // Recording went on: a second dump with the same reason gets its own run.
  { NEURONPROF_SCOPE("after_dump"); }
  auto second = recorder.Dump("slow step!");
  REQUIRE(second.ok());
  CHECK(second->run_dir != first->run_dir);
  CHECK(second->events == 7);
}

TEST_CASE("a flight recorder dump carries flows, async spans, counters and instants") {
  TempDir dir;
  FlightRecorder recorder(Options(dir));
  REQUIRE(recorder.status().ok());
  AsyncTrace request("requests", "request");
  uint64_t id = 0;
  {
    TraceProducer producer("enqueue");
    id = producer.context_id();
  }
  std::thread([&] {
    TraceConsumer consumer("infer", ContextType::kGeneric, id);
    request.End();
  }).join();
  TraceCounter("queue_depth", 4);
  TraceInstant("cache_miss");
  auto dump = recorder.Dump("serving");
  REQUIRE(dump.ok());
  CHECK(dump->events == 5);
  std::string xplane;
  for (const std::string& file : dump->files) {
    if (file.size() > 10 && file.substr(file.size() - 10) == ".xplane.pb") xplane = file;
  }
  REQUIRE_FALSE(xplane.empty());
  const tensorflow::profiler::XSpace space = testing::ReadXSpace(xplane);
  std::map<std::string, std::string> line_of;  // event name -> line name
  for (const auto& plane : space.planes()) {
    if (plane.name() != "/host:CPU") continue;
    for (const auto& line : plane.lines()) {
      for (const auto& event : line.events()) {
        line_of[plane.event_metadata().at(event.metadata_id()).name()] = line.name();
      }
    }
  }
  CHECK(line_of["request"] == "requests");
  CHECK(line_of["queue_depth"] == "_counters_");
  CHECK(line_of.count("enqueue") == 1);
  CHECK(line_of.count("infer") == 1);
  CHECK(line_of.count("cache_miss") == 1);
}

TEST_CASE("a dump into an unwritable logdir is kept in a fallback folder") {
  TempDir dir;
  const std::string blocker = dir.path() + "/not_a_dir";
  std::ofstream(blocker) << "x";
  FlightRecorderOptions options = Options(dir);
  options.logdir = blocker + "/logs";
  FlightRecorder recorder(options);
  REQUIRE(recorder.status().ok());
  { NEURONPROF_SCOPE("precious"); }
  auto dump = recorder.Dump("oom");
  REQUIRE_FALSE(dump.ok());
  const std::string message(dump.status().message());
  CHECK(message.find(blocker) != std::string::npos);
  const size_t at = message.find("saved to '");
  REQUIRE(at != std::string::npos);
  const std::string fallback = message.substr(at + 10, message.find('\'', at + 10) - at - 10);
  CHECK(testing::HasEvent(testing::ReadXSpace(fallback + "flight_host.xplane.pb"), "precious"));
  std::filesystem::remove_all(fallback);
}

TEST_CASE("a flight recorder is the process's one capture") {
  TempDir dir;
  {
    FlightRecorder recorder(Options(dir));
    REQUIRE(recorder.status().ok());
    ProfilerOptions profiler_options;
    profiler_options.logdir = dir.path();
    profiler_options.port = 0;
    Profiler profiler(profiler_options);
    CHECK(absl::IsFailedPrecondition(profiler.status()));
    CHECK(std::string(profiler.status().message()).find("a FlightRecorder") != std::string::npos);
    FlightRecorder second(Options(dir));
    CHECK(absl::IsFailedPrecondition(second.status()));
  }
  ProfilerOptions profiler_options;
  profiler_options.logdir = dir.path();
  profiler_options.port = 0;
  Profiler profiler(profiler_options);
  REQUIRE(profiler.status().ok());
  FlightRecorder refused(Options(dir));
  CHECK(absl::IsFailedPrecondition(refused.status()));
  CHECK(std::string(refused.status().message()).find("a Profiler") != std::string::npos);
  // Dump on a recorder that never started says why.
  auto dump = refused.Dump("nothing");
  CHECK(absl::IsFailedPrecondition(dump.status()));
  REQUIRE(profiler.Stop().ok());
}

TEST_CASE("flight recorder bad inputs") {
  TempDir dir;
  FlightRecorderOptions options = Options(dir);
  options.ring_bytes = 64 * 1024;  // One block.
  FlightRecorder small(options);
  CHECK(absl::IsInvalidArgument(small.status()));
  CHECK(std::string(small.status().message()).find("at least 4 blocks") != std::string::npos);
  CHECK(absl::IsInvalidArgument(small.Dump("x").status()));

  options = Options(dir);
  options.host_tracer_level = 0;
  CHECK(absl::IsInvalidArgument(FlightRecorder(options).status()));

  FlightRecorder recorder(Options(dir));
  REQUIRE(recorder.status().ok());
  CHECK(absl::IsInvalidArgument(recorder.Dump("x", -5).status()));
}

// What a ring dropped: a dump says when older events were overwritten, and
// the option that keeps more; a ring that never wrapped says nothing.
TEST_CASE("a dump of a ring that overwrote older events says so") {
  TempDir dir;
  FlightRecorderOptions options = Options(dir);
  options.ring_bytes = 4 * 64 * 1024;  // 4 blocks: 8188 records.
  {
    FlightRecorder recorder(options);
    REQUIRE(recorder.status().ok());
    for (int i = 0; i < 100; ++i) NEURONPROF_SCOPE("few");
    auto dump = recorder.Dump("few");
    REQUIRE(dump.ok());
    CHECK(dump->warnings.empty());
  }
  FlightRecorder recorder(options);
  REQUIRE(recorder.status().ok());
  for (int i = 0; i < 40000; ++i) NEURONPROF_SCOPE("many");
  for (int64_t last_ms : {int64_t{0}, int64_t{3600} * 1000}) {
    auto dump = recorder.Dump("many", last_ms);
    REQUIRE(dump.ok());
    CHECK(dump->events < 40000);
    REQUIRE(dump->warnings.size() == 1);
    CAPTURE(dump->warnings[0]);
    CHECK(dump->warnings[0].find("the flight recorder's ring (262144 bytes) had overwritten "
                                 "older events") != std::string::npos);
    CHECK(dump->warnings[0].find("raise FlightRecorderOptions::ring_bytes") != std::string::npos);
    if (last_ms > 0)
      CHECK(dump->warnings[0].find("of the 3600000 ms asked for") != std::string::npos);
    // In the files too: the summary prints it.
    auto space = testing::ReadXSpace(dump->files[0]);
    REQUIRE(space.warnings_size() == 1);
    CHECK(space.warnings(0) == dump->warnings[0]);
  }
}

std::atomic<int> g_previous_handler_calls{0};
void PreviousHandler(int) { g_previous_handler_calls.fetch_add(1); }

TEST_CASE("the named signal makes the recorder dump; its old handler comes back after") {
  TempDir dir;
  struct sigaction previous {};
  previous.sa_handler = PreviousHandler;
  sigemptyset(&previous.sa_mask);
  REQUIRE(sigaction(SIGUSR2, &previous, nullptr) == 0);
  {
    std::promise<absl::StatusOr<ProfileResult>> dumped;
    FlightRecorderOptions options = Options(dir);
    options.dump_signal = SIGUSR2;
    options.on_signal_dump = [&dumped](const absl::StatusOr<ProfileResult>& result) {
      dumped.set_value(result);  // One signal: one dump.
    };
    FlightRecorder recorder(options);
    REQUIRE(recorder.status().ok());
    { NEURONPROF_SCOPE("before_the_signal"); }
    REQUIRE(kill(getpid(), SIGUSR2) == 0);
    auto future = dumped.get_future();
    REQUIRE(future.wait_for(std::chrono::minutes(1)) == std::future_status::ready);
    const absl::StatusOr<ProfileResult> result = future.get();
    REQUIRE(result.ok());
    CHECK(result->run_dir.find("_signal_SIGUSR2") != std::string::npos);
    CHECK(result->events == 1);
    bool noted = false;
    for (const std::string& warning : result->warnings) {
      noted = noted || warning.find("dumped on SIGUSR2") != std::string::npos;
    }
    CHECK(noted);
    CHECK(g_previous_handler_calls.load() == 0);  // The recorder's handler took it.
  }
  struct sigaction now {};
  REQUIRE(sigaction(SIGUSR2, nullptr, &now) == 0);
  CHECK(now.sa_handler == PreviousHandler);
  REQUIRE(raise(SIGUSR2) == 0);
  // Delivered before raise returns, except under TSan, which defers
  // signals to its next safe point: wait for it, within a minute.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  while (g_previous_handler_calls.load() == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::yield();
  }
  CHECK(g_previous_handler_calls.load() == 1);
  signal(SIGUSR2, SIG_DFL);
}

TEST_CASE("a dump signal that is not a user signal is refused, nothing left running") {
  TempDir dir;
  FlightRecorderOptions options = Options(dir);
  options.dump_signal = SIGSEGV;
  FlightRecorder refused(options);
  CHECK(absl::IsInvalidArgument(refused.status()));
  CHECK(std::string(refused.status().message()).find("dump_signal") != std::string::npos);
  FlightRecorder next(Options(dir));  // The refused one let the gate go.
  CHECK(next.status().ok());
}

TEST_CASE("concurrent dumps: one runs, the others are refused") {
  TempDir dir;
  FlightRecorder recorder(Options(dir));
  REQUIRE(recorder.status().ok());
  for (int i = 0; i < 1000; ++i) NEURONPROF_SCOPE("event");
  std::atomic<int> ok{0};
  std::atomic<int> refused{0};
  std::atomic<int> other_errors{0};  // Catch's CHECK is not thread-safe: count here.
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 3; ++i) {
        auto dump = recorder.Dump("concurrent");
        if (dump.ok()) {
          ok.fetch_add(1);
        } else if (absl::IsFailedPrecondition(dump.status()) &&
                   std::string(dump.status().message()).find("already running") !=
                       std::string::npos) {
          refused.fetch_add(1);
        } else {
          other_errors.fetch_add(1);
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  CHECK(other_errors.load() == 0);
  CHECK(ok.load() >= 1);
  CHECK(ok.load() + refused.load() == 12);
}

TEST_CASE("dumps never run out of names: a taken name gets a counter, never $TMPDIR") {
  TempDir dir;
  TempDir tmp;  // Where a fallback folder would go.
  testing::ScopedEnv tmpdir("TMPDIR", tmp.path().c_str());
  FlightRecorder recorder(Options(dir));
  REQUIRE(recorder.status().ok());
  // As after a storm of a hundred dumps a second: <time>_storm and
  // <time>_storm_1.._99 are taken for this second and the next five.
  const std::string root = exporter::ProfileRoot(dir.path());
  REQUIRE(exporter::MakeDirectories(root).ok());
  const int64_t now_ns = core::EpochNowNs();
  for (int64_t second = 0; second <= 5; ++second) {
    const std::string base =
        root + "/" + exporter::RunNameForTime(now_ns + second * 1000000000) + "_storm";
    REQUIRE(mkdir(base.c_str(), 0755) == 0);
    for (int n = 1; n < 100; ++n) {
      REQUIRE(mkdir((base + "_" + std::to_string(n)).c_str(), 0755) == 0);
    }
  }
  { NEURONPROF_SCOPE("stormy"); }
  constexpr int kDumps = 150;
  std::set<std::string> runs;
  for (int i = 0; i < kDumps; ++i) {
    auto dump = recorder.Dump("storm");
    REQUIRE(dump.ok());
    CHECK(dump->run_dir.rfind(root + "/", 0) == 0);
    runs.insert(dump->run_dir);
  }
  CHECK(runs.size() == kDumps);
  CHECK(testing::ListDir(tmp.path()).empty());
}

TEST_CASE("a signal storm during a dump makes one more dump, not one per signal") {
  TempDir dir;
  std::mutex mutex;
  std::condition_variable changed;
  int dumps = 0;
  int failed_dumps = 0;  // Catch's checks are not thread-safe: counted here
  bool release = false;
  FlightRecorderOptions options = Options(dir);
  options.dump_signal = SIGUSR1;
  options.on_signal_dump = [&](const absl::StatusOr<ProfileResult>& result) {
    std::unique_lock<std::mutex> lock(mutex);
    ++dumps;
    if (!result.ok()) ++failed_dumps;
    changed.notify_all();
    // The first dump holds the signal thread until the storm is over.
    changed.wait(lock, [&] { return release; });
  };
  {
    FlightRecorder recorder(options);
    REQUIRE(recorder.status().ok());
    REQUIRE(raise(SIGUSR1) == 0);
    {
      std::unique_lock<std::mutex> lock(mutex);
      REQUIRE(changed.wait_for(lock, std::chrono::minutes(1), [&] { return dumps == 1; }));
    }
    // raise() delivers to this thread before it returns: every post is in.
    for (int i = 0; i < 1000; ++i) REQUIRE(raise(SIGUSR1) == 0);
    {
      std::unique_lock<std::mutex> lock(mutex);
      release = true;
      changed.notify_all();
      REQUIRE(changed.wait_for(lock, std::chrono::minutes(1), [&] { return dumps == 2; }));
    }
  }  // The recorder ends its signal thread: no dump is left pending.
  CHECK(dumps == 2);
  CHECK(failed_dumps == 0);
  signal(SIGUSR1, SIG_DFL);
}

}  // namespace
}  // namespace neuronprof

namespace neuronprof {
namespace {

FlightRecorderOptions XPlaneOnly(const std::string& logdir, int64_t ring_bytes) {
  FlightRecorderOptions options = testing::FlightOptions(logdir, "flight_host");
  options.ring_bytes = ring_bytes;
  options.write_chrome_trace = false;
  options.write_pytorch_trace = false;
  return options;
}

int64_t EventsIn(const tensorflow::profiler::XSpace& space) {
  int64_t events = 0;
  for (const auto& plane : space.planes()) {
    for (const auto& line : plane.lines()) events += line.events_size();
  }
  return events;
}

TEST_CASE("a dump of the xplane.pb alone (streamed) holds its events, counts and warnings") {
  TempDir dir;
  FlightRecorder recorder(XPlaneOnly(dir.path(), 4 * 64 * 1024));
  REQUIRE(recorder.status().ok());
  for (int i = 0; i < 40000; ++i) ScopedTrace many("many", {{"i", i}});
  auto dump = recorder.Dump("streamed");
  REQUIRE(dump.ok());
  REQUIRE(dump->files.size() == 1);
  const auto space = testing::ReadXSpace(dump->files[0]);
  CHECK(dump->events > 1000);
  CHECK(EventsIn(space) == dump->events);
  CHECK(dump->threads == 1);
  // Names clipped at the cut; the ring overwrote older events.
  REQUIRE(dump->warnings.size() == 2);
  REQUIRE(space.warnings_size() == 2);
  CHECK(space.warnings(0) == dump->warnings[0]);
  CHECK(space.warnings(1) == dump->warnings[1]);
  CHECK(dump->warnings[1].find("had overwritten older events") != std::string::npos);
  REQUIRE(space.hostnames_size() == 1);
  CHECK(space.hostnames(0) == "flight_host");
}

TEST_CASE("a streamed dump into an unwritable logdir is kept whole in a fallback folder") {
  TempDir dir;
  const std::string blocker = dir.path() + "/not_a_dir";
  std::ofstream(blocker) << "x";
  FlightRecorder recorder(XPlaneOnly(blocker + "/logs", 1 << 20));
  REQUIRE(recorder.status().ok());
  for (int i = 0; i < 3000; ++i) NEURONPROF_SCOPE("precious");
  auto dump = recorder.Dump("oom");
  REQUIRE_FALSE(dump.ok());
  const std::string message(dump.status().message());
  CHECK(message.find("(3000 events)") != std::string::npos);
  const size_t at = message.find("saved to '");
  REQUIRE(at != std::string::npos);
  const std::string fallback = message.substr(at + 10, message.find('\'', at + 10) - at - 10);
  CHECK(EventsIn(testing::ReadXSpace(fallback + "flight_host.xplane.pb")) == 3000);
  std::filesystem::remove_all(fallback);
}

// RSS measures the sanitizer, not the dump: ThreadSanitizer's shadow grows
// with every page a dump touches, AddressSanitizer's quarantine keeps freed
// blocks resident.
constexpr bool kSanitizerInRss = kThreadSanitizer || kAddressSanitizer;

// Resident bytes now (VmRSS) and at the peak since ResetPeakRss (VmHWM).
int64_t ProcBytes(const char* key) {
  return static_cast<int64_t>(bench::ProcStatusMb(key) * 1024 * 1024);
}

constexpr int64_t kRing = int64_t{16} << 20;

// Dumps a full kRing ring of `options` (nested scopes with arguments,
// copied names: the ring overwrites itself) and checks the peak above the
// RSS before it (at most `peak`) and the RSS after it (at most `after`
// above the RSS before).
void CheckFullRingDump(FlightRecorderOptions options, int64_t peak_bound, int64_t after_bound) {
  if (kSanitizerInRss) {
    WARN("a sanitizer's shadow or quarantine is in the RSS: no page count to check");
    return;
  }
  options.ring_bytes = kRing;
  FlightRecorder recorder(options);
  REQUIRE(recorder.status().ok());
  for (int step = 0; step < 40000; ++step) {
    StepTrace step_trace("train", step);
    for (int layer = 0; layer < 8; ++layer) {
      const std::string name = "layer_" + std::to_string(layer);
      ScopedTrace scope(name, {{"i", layer}, {"dtype", "bf16"}});
    }
  }
  REQUIRE(recorder.Dump("warm").ok());  // The heap a dump reuses.
  const int64_t before = ProcBytes("VmRSS:");
  bench::ResetPeakRss();
  if (ProcBytes("VmHWM:") > before + (int64_t{1} << 20)) {
    WARN("cannot reset VmHWM (/proc/self/clear_refs): no peak to check");
    return;
  }
  auto dump = recorder.Dump("whole", 0);
  const int64_t peak = ProcBytes("VmHWM:");
  const int64_t after = ProcBytes("VmRSS:");
  REQUIRE(dump.ok());
  CHECK(dump->events > 200000);
  CAPTURE(before, peak, after);
  CHECK(peak - before <= peak_bound);
  CHECK(after - before <= after_bound);
}

TEST_CASE("a streamed dump of a full ring takes less than the ring's pages and gives them back") {
  TempDir dir;
  // The copy and one chunk of events; built whole, the XSpace alone took
  // ~2.6x the ring. The copy holds the records and each repeated name (its
  // arguments included) once, and never touches the mapping's middle:
  // well under the ring, which is a third names.
  CheckFullRingDump(XPlaneOnly(dir.path(), 0), kRing * 3 / 4, int64_t{1} << 20);
}

TEST_CASE("a dump with the Chrome and Kineto traces builds no XSpace: they come from fragments") {
  TempDir dir;
  FlightRecorderOptions options = XPlaneOnly(dir.path(), 0);
  options.write_chrome_trace = true;
  options.write_pytorch_trace = true;
  // The copy, one fragment of events and the writers' buffers (gzip
  // blocks, each handed over whole by its writer's 1 MiB text buffer,
  // formatting jobs and their threads' malloc arenas: 21-23 MiB on an idle
  // 2-core VM, 25 MiB once under ctest -j2 at load 3); from a whole XSpace
  // it was ~4x the ring, and RSS stayed tens of MiB above its level after.
  CheckFullRingDump(options, kRing * 7 / 4, int64_t{8} << 20);
}

}  // namespace
}  // namespace neuronprof
