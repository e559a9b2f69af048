// A profiler server in its own process, for capture client tests that need
// several servers at once (one capture runs per process) or a server that
// dies mid-capture.
//
//   test_capture_server ALLOWED_ROOT [idle]
//   test_capture_server ALLOWED_ROOT profiler BASE_PORT
//
// Prints "port N" once listening, then "capturing" each time a capture
// window opens. A thread records "helper_marker" events in a loop unless
// "idle" is given. Exits when stdin closes. With "profiler", the server is
// the one a Profiler starts (ProfilerOptions::port = BASE_PORT, so it
// listens on BASE_PORT + LOCAL_RANK and reports RANK / WORLD_SIZE of the
// environment, as one rank of a distributed job does).
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>

#include "neuronprof/profiler.h"
#include "neuronprof/server.h"
#include "neuronprof/trace.h"
#include "src/rpc/profiler_service_impl.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: test_capture_server ALLOWED_ROOT [idle]\n");
    return 2;
  }
  const bool idle = argc > 2 && std::strcmp(argv[2], "idle") == 0;
  const bool profiler = argc > 3 && std::strcmp(argv[2], "profiler") == 0;
  absl::StatusOr<std::unique_ptr<neuronprof::ProfilerServer>> server;
  if (profiler) {
    // The Profiler's own window is ended at once: what stays is the
    // process-wide server of its port, as in a training job.
    neuronprof::ProfilerOptions options;
    options.logdir = argv[1];
    options.port = std::atoi(argv[3]);
    options.write_chrome_trace = false;
    options.write_pytorch_trace = false;
    neuronprof::Profiler started(options);
    auto result = started.Stop();
    if (!result.ok() || result->server_port == 0 || !result->warnings.empty()) {
      std::fprintf(stderr, "test_capture_server: %s\n",
                   result.ok()
                       ? (result->warnings.empty() ? "no server" : result->warnings[0].c_str())
                       : std::string(result.status().message()).c_str());
      return 1;
    }
    std::printf("port %d\n", result->server_port);
  } else {
    neuronprof::ProfilerServerOptions options;
    options.port = 0;
    options.allowed_root = argv[1];
    server = neuronprof::ProfilerServer::Start(options);
    if (!server.ok()) {
      std::fprintf(stderr, "test_capture_server: %s\n",
                   std::string(server.status().message()).c_str());
      return 1;
    }
    std::printf("port %d\n", (*server)->port());
  }
  std::fflush(stdout);

  std::atomic<bool> stop{false};
  std::thread markers([&] {
    if (idle) return;
    neuronprof::SetCurrentThreadName("helper_markers");
    for (int step = 0; !stop.load(); ++step) {
      neuronprof::StepTrace step_trace("helper_step", step);
      { neuronprof::ScopedTrace marker("helper_marker"); }
      // Paced so that long windows do not fill the event buffer.
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  // Tells the test when a window is open, so that it can act during one.
  std::thread watcher([&] {
    bool was_running = false;
    while (!stop.load()) {
      const bool running = neuronprof::rpc::RunningCapturesForTesting() > 0;
      if (running && !was_running) {
        std::printf("capturing\n");
        std::fflush(stdout);
      }
      was_running = running;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });

  while (std::fgetc(stdin) != EOF) {
  }
  stop.store(true);
  markers.join();
  watcher.join();
  if (server.ok()) (*server)->Shutdown();
  return 0;
}
