// An inference server's loop under a flight recorder: worker threads take
// requests from a queue, each request a StepTrace "request" with nested
// stages (parse, batch_wait, inference with its layers, serialize). One
// request is deliberately slow; the slow-request trigger dumps the ring on
// the recorder's own thread (the worker never waits) and the program prints
// the dump's run folder.
//
//   flight_recorder_server [--logdir DIR] [--requests N] [--workers N]
//                          [--slow_request ID] [--threshold_ms MS] [--port P]
//
// Exit status: 0 when the slow request was dumped, 1 otherwise.
//
// With --port P the recorder also serves remote captures on P and, after the
// slow request's dump, the program goes on serving a request every few ms
// until it is killed: `neuronprof capture --service_addr localhost:P
// --logdir logs --duration_ms 5000 --flight_recorder` pulls the last 5 s at
// once, and `kill -USR2 <pid>` makes it dump (SIGUSR2 is its dump signal).
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "neuronprof/neuronprof.h"

namespace {

struct Flags {
  std::string logdir = "logs";
  int requests = 200;
  int workers = 4;
  int slow_request = 150;
  int threshold_ms = 50;
  int port = 0;
};

// Some arithmetic the optimiser cannot drop, standing in for real work.
float Work(int iterations, float seed) {
  volatile float x = seed;
  for (int i = 0; i < iterations; ++i) x = x * 0.999f + 0.001f;
  return x;
}

void HandleRequest(int id, bool slow) {
  neuronprof::StepTrace request("request", id);
  {
    NEURONPROF_SCOPE("parse");
    Work(2000, static_cast<float>(id));
  }
  {
    NEURONPROF_SCOPE("batch_wait");
    Work(1000, 1.0f);
  }
  {
    NEURONPROF_SCOPE("inference", {{"layers", 4}});
    for (int layer = 0; layer < 4; ++layer) {
      neuronprof::ScopedTrace trace("layer_" + std::to_string(layer));
      Work(5000, static_cast<float>(layer));
      // The slow request: its third layer stalls, as on a cold cache or a
      // lock held elsewhere.
      if (slow && layer == 2) std::this_thread::sleep_for(std::chrono::milliseconds(150));
    }
  }
  {
    NEURONPROF_SCOPE("serialize");
    Work(1500, 2.0f);
  }
}

bool ParseFlags(int argc, char** argv, Flags* flags) {
  for (int i = 1; i < argc; i += 2) {
    if (i + 1 >= argc) return false;
    const std::string name = argv[i];
    const char* value = argv[i + 1];
    if (name == "--logdir") {
      flags->logdir = value;
    } else if (name == "--requests") {
      flags->requests = std::atoi(value);
    } else if (name == "--workers") {
      flags->workers = std::atoi(value);
    } else if (name == "--slow_request") {
      flags->slow_request = std::atoi(value);
    } else if (name == "--threshold_ms") {
      flags->threshold_ms = std::atoi(value);
    } else if (name == "--port") {
      flags->port = std::atoi(value);
    } else {
      return false;
    }
  }
  return flags->requests > 0 && flags->workers > 0 && flags->threshold_ms > 0;
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  if (!ParseFlags(argc, argv, &flags)) {
    std::fprintf(stderr,
                 "usage: %s [--logdir DIR] [--requests N] [--workers N] "
                 "[--slow_request ID] [--threshold_ms MS] [--port P]\n",
                 argv[0]);
    return 2;
  }

  neuronprof::FlightRecorderOptions options;
  options.logdir = flags.logdir;
  options.ring_bytes = int64_t{16} << 20;
  options.port = flags.port;
  options.dump_signal = SIGUSR2;
  options.on_signal_dump = [](const absl::StatusOr<neuronprof::ProfileResult>& result) {
    if (result.ok()) {
      std::printf("signal dump: %s\n", result->run_dir.c_str());
    } else {
      std::printf("signal dump failed: %s\n", result.status().ToString().c_str());
    }
    std::fflush(stdout);
  };
  neuronprof::FlightRecorder recorder(options);
  if (!recorder.status().ok()) {
    std::fprintf(stderr, "flight recorder: %s\n", recorder.status().ToString().c_str());
    return 1;
  }

  // The trigger reports its dump here, from the recorder's thread.
  std::mutex mutex;
  std::condition_variable dumped;
  std::optional<absl::StatusOr<neuronprof::ProfileResult>> dump;
  neuronprof::SlowStepTrigger trigger;
  trigger.step_name = "request";
  trigger.threshold_ms = flags.threshold_ms;
  trigger.cooldown_ms = 60000;
  trigger.on_dump = [&](const absl::StatusOr<neuronprof::ProfileResult>& result) {
    std::lock_guard<std::mutex> lock(mutex);
    if (!dump) dump = result;
    dumped.notify_all();
  };
  if (absl::Status s = recorder.TriggerOnSlowStep(trigger); !s.ok()) {
    std::fprintf(stderr, "trigger: %s\n", s.ToString().c_str());
    return 1;
  }

  std::atomic<int> next{0};
  std::vector<std::thread> workers;
  for (int w = 0; w < flags.workers; ++w) {
    workers.emplace_back([&, w] {
      neuronprof::SetCurrentThreadName("worker_" + std::to_string(w));
      for (int id = next++; id < flags.requests; id = next++) {
        HandleRequest(id, id == flags.slow_request);
      }
    });
  }
  for (std::thread& worker : workers) worker.join();

  std::unique_lock<std::mutex> lock(mutex);
  if (!dumped.wait_for(lock, std::chrono::seconds(30), [&] { return dump.has_value(); })) {
    std::fprintf(stderr, "no slow request was dumped\n");
    return 1;
  }
  if (!dump->ok()) {
    std::fprintf(stderr, "dump failed: %s\n", dump->status().ToString().c_str());
    return 1;
  }
  std::printf("served %d requests on %d workers\n", flags.requests, flags.workers);
  std::printf("dump: %s\n", (*dump)->run_dir.c_str());
  for (const std::string& warning : (*dump)->warnings) {
    std::printf("warning: %s\n", warning.c_str());
  }
  if (flags.port == 0) return 0;
  std::printf("serving remote pulls on port %d; kill -USR2 %d dumps\n", flags.port,
              static_cast<int>(getpid()));
  std::fflush(stdout);
  lock.unlock();
  for (int id = flags.requests;; ++id) {
    HandleRequest(id, /*slow=*/false);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}
