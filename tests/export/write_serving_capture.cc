// A serving-style capture through the public API, for
// tests/interop/test_serving_events.py:
//   write_serving_capture LOGDIR
// Three steps ("serve" StepTraces, each on the main thread): an "accept"
// producer per request (2 per step) whose id a worker thread consumes in
// "infer" (one to one) and in "reply" (one to many), two "add_to_batch"
// producers of one batch id (kSharedBatchScheduler) consumed by one
// "run_batch" (many to one), one "assemble" TraceBatchConsumer of both
// requests' ids (many to one, an arrow per id), an async span "request" on track "requests"
// per request begun on the main thread and ended on the worker, counter
// samples "queue_depth" (int) and "load" (double), and an instant
// "cache_miss" with an argument. Writes every output file under LOGDIR and
// prints each path.
#include <cstdio>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "neuronprof/neuronprof.h"

namespace {

struct Request {
  uint64_t id;
  neuronprof::AsyncTrace life;
};

void Spin(int iterations) {
  volatile int sink = 0;
  for (int i = 0; i < iterations; ++i) sink = sink + i;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: write_serving_capture LOGDIR\n");
    return 2;
  }
  neuronprof::ProfilerOptions options;
  options.logdir = argv[1];
  options.port = 0;
  options.host_name = "serving";
  neuronprof::Profiler profiler(options);
  neuronprof::SetCurrentThreadName("acceptor");
  for (int step = 0; step < 3; ++step) {
    neuronprof::StepTrace serve("serve", step);
    std::vector<Request> requests;
    for (int r = 0; r < 2; ++r) {
      neuronprof::AsyncTrace life("requests", "request");
      neuronprof::TraceProducer accept("accept");
      Spin(20000);
      requests.push_back({accept.context_id(), std::move(life)});
      neuronprof::TraceCounter("queue_depth", static_cast<int>(requests.size()));
    }
    const uint64_t batch = neuronprof::NewContextId();
    for (int r = 0; r < 2; ++r) {
      neuronprof::TraceProducer add("add_to_batch", neuronprof::ContextType::kSharedBatchScheduler,
                                    batch);
      Spin(5000);
    }
    neuronprof::TraceCounter("load", 0.25 * (step + 1));
    std::thread worker([&] {
      neuronprof::SetCurrentThreadName("worker");
      {
        neuronprof::TraceConsumer run("run_batch", neuronprof::ContextType::kSharedBatchScheduler,
                                      batch);
        Spin(20000);
        neuronprof::TraceInstant("cache_miss", {{"key", step}});
      }
      {
        // Many to one with an id per request: both arrows into one marker.
        const uint64_t ids[] = {requests[0].id, requests[1].id};
        neuronprof::TraceBatchConsumer assemble("assemble", neuronprof::ContextType::kGeneric, ids,
                                                2);
        Spin(5000);
      }
      for (Request& request : requests) {
        {
          neuronprof::TraceConsumer infer("infer", neuronprof::ContextType::kGeneric, request.id);
          Spin(20000);
        }
        {
          neuronprof::TraceConsumer reply("reply", neuronprof::ContextType::kGeneric, request.id);
          Spin(5000);
        }
        request.life.End();
      }
      neuronprof::TraceCounter("queue_depth", 0);
    });
    worker.join();
  }
  auto result = profiler.Stop();
  if (!result.ok()) {
    std::fprintf(stderr, "%s\n", std::string(result.status().message()).c_str());
    return 1;
  }
  for (const std::string& path : result->files) std::printf("%s\n", path.c_str());
  return 0;
}
