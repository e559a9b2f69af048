// Markers without a session: the program links neuronprof::markers only.
// With no capture running, every marker is admitted by nothing and records
// nothing; the program still runs every kind of marker.
#include <cstdio>
#include <string>

#include <neuronprof/trace.h>

int main() {
  neuronprof::SetCurrentThreadName("markers_only");
  if (neuronprof::TracingEnabled()) {
    std::fprintf(stderr, "TracingEnabled() is true with no capture running\n");
    return 1;
  }
  for (int step = 0; step < 3; ++step) {
    neuronprof::StepTrace step_trace("train", step);
    NEURONPROF_SCOPE("forward", {{"layer", step}});
    std::string name = "copied_" + std::to_string(step);
    neuronprof::ScopedTrace copied(name);
    neuronprof::TraceProducer producer("enqueue");
    neuronprof::TraceConsumer consumer("dequeue", producer.context_id());
    neuronprof::AsyncTrace request("requests", "request");
    neuronprof::TraceCounter("queue_depth", step);
    neuronprof::TraceInstant("cache_miss");
  }
  std::printf("markers-only consumer ran\n");
  return 0;
}
