// A child forked while a Profiler, a FlightRecorder and a capture server
// live: its copies are inert (calls say why, destruction touches none of
// the threads fork() did not copy), its markers record nothing, and it
// exits cleanly, while the parent's capture goes on whole.
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <memory>
#include <string>

#include "neuronprof/flight_recorder.h"
#include "neuronprof/internal/recorder.h"
#include "neuronprof/profiler.h"
#include "neuronprof/server.h"
#include "neuronprof/trace.h"
#include "src/xplane/sanitizers.h"
#include "src/xplane/xplane_visitor.h"
#include "tests/rpc/rpc_test_util.h"
#include "tests/test_util.h"

// A forked child has none of its parent's other threads, so what only
// their stacks referred to looks leaked to LeakSanitizer at the child's
// exit: this binary is about fork(), not leaks.
extern "C" const char* __lsan_default_options() { return "detect_leaks=0"; }

namespace neuronprof {
namespace {

bool RefusedAsForked(const absl::Status& status) {
  return status.code() == absl::StatusCode::kFailedPrecondition &&
         std::string(status.message()).find("forked") != std::string::npos;
}

// Runs `child` in a forked child, which exits with its result (exit(),
// so that static destructors run too); the child's exit status.
template <typename F>
int InChild(F&& child) {
  const pid_t pid = fork();
  if (pid == 0) std::exit(child() ? 0 : 1);
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

int64_t EventsNamed(const std::string& file, std::string_view name) {
  const auto space = testing::ReadXSpace(file);
  int64_t n = 0;
  for (const auto& raw : space.planes()) {
    xplane::PlaneVisitor(raw).ForEachEvent([&](const xplane::EventVisitor& event) {
      if (event.Name() == name) ++n;
    });
  }
  return n;
}

TEST_CASE("a forked child's Profiler, and the port's server, are inert and exit cleanly") {
  if (kThreadSanitizer) {
    WARN("skipped: TSan does not support a child that runs on after a threaded fork");
    return;
  }
  testing::TempDir dir;
  ProfilerOptions options;
  options.logdir = dir.path();
  options.ms_duration = 60000;
  options.port = testing::FreeLoopbackPortRange(1);
  auto profiler = std::make_unique<Profiler>(options);
  REQUIRE(profiler->status().ok());
  { NEURONPROF_SCOPE("before_fork"); }
  const int status = InChild([&] {
    { NEURONPROF_SCOPE("in_child"); }
    const bool off = internal::g_capture_state.load() == 0;  // Markers record nothing.
    const bool refused = RefusedAsForked(profiler->Stop().status()) &&
                         RefusedAsForked(profiler->WaitForCompletion().status()) &&
                         RefusedAsForked(profiler->Step()) && !profiler->capturing();
    profiler.reset();  // Joined the parent's timer thread before: SIGSEGV.
    return off && refused;
  });
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  { NEURONPROF_SCOPE("after_fork"); }
  auto result = profiler->Stop();
  REQUIRE(result.ok());
  REQUIRE_FALSE(result->files.empty());
  CHECK(EventsNamed(result->files[0], "before_fork") == 1);
  CHECK(EventsNamed(result->files[0], "after_fork") == 1);
  CHECK(EventsNamed(result->files[0], "in_child") == 0);
}

TEST_CASE("a forked child's FlightRecorder is inert and exits cleanly") {
  if (kThreadSanitizer) {
    WARN("skipped: TSan does not support a child that runs on after a threaded fork");
    return;
  }
  testing::TempDir dir;
  FlightRecorderOptions options;
  options.logdir = dir.path();
  options.ring_bytes = int64_t{4} << 20;
  options.dump_signal = SIGUSR2;
  auto recorder = std::make_unique<FlightRecorder>(options);
  REQUIRE(recorder->status().ok());
  REQUIRE(recorder->TriggerOnSlowStep("request", 1000, 0).ok());
  { NEURONPROF_SCOPE("before_fork"); }
  const int status = InChild([&] {
    const bool refused = RefusedAsForked(recorder->Dump("in child").status()) &&
                         RefusedAsForked(recorder->TriggerOnSlowStep("other", 5, 0)) &&
                         RefusedAsForked(recorder->status());
    recorder.reset();  // Would stop the trigger and signal threads.
    return refused;
  });
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  auto dumped = recorder->Dump("parent", 0);
  REQUIRE(dumped.ok());
  CHECK(EventsNamed(dumped->files[0], "before_fork") == 1);
}

TEST_CASE("a forked child's ProfilerServer is inert and exits cleanly") {
  if (kThreadSanitizer) {
    WARN("skipped: TSan does not support a child that runs on after a threaded fork");
    return;
  }
  ProfilerServerOptions server_options;
  server_options.port = 0;
  auto server = ProfilerServer::Start(server_options);
  REQUIRE(server.ok());
  const int port = (*server)->port();
  const int status = InChild([&] {
    (*server)->Shutdown();
    server->reset();  // Would wait for gRPC's threads.
    return true;
  });
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK((*server)->port() == port);  // The parent's server is untouched.
}

}  // namespace
}  // namespace neuronprof
