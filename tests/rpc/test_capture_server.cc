// A profiler server in its own process, for capture client tests that need
// several servers at once (one capture runs per process) or a server that
// dies mid-capture.
//
//   test_capture_server ALLOWED_ROOT [idle]
//
// Prints "port N" once listening, then "capturing" each time a capture
// window opens. A thread records "helper_marker" events in a loop unless
// "idle" is given. Exits when stdin closes.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

#include "neuronprof/server.h"
#include "neuronprof/trace.h"
#include "src/rpc/profiler_service_impl.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: test_capture_server ALLOWED_ROOT [idle]\n");
    return 2;
  }
  const bool idle = argc > 2 && std::strcmp(argv[2], "idle") == 0;
  neuronprof::ProfilerServerOptions options;
  options.port = 0;
  options.allowed_root = argv[1];
  auto server = neuronprof::ProfilerServer::Start(options);
  if (!server.ok()) {
    std::fprintf(stderr, "test_capture_server: %s\n",
                 std::string(server.status().message()).c_str());
    return 1;
  }
  std::printf("port %d\n", (*server)->port());
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
  (*server)->Shutdown();
  return 0;
}
