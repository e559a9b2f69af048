// Markers without a session: the program links neuronprof::markers only,
// and an "Abseil" of its own (own_abseil.h). With no capture running, every
// marker is admitted by nothing and records nothing; the program still runs
// every kind of marker.
#include <neuronprof/trace.h>

#include <cstdio>
#include <string>

#include "own_abseil.h"

int main() {
  neuronprof::SetCurrentThreadName("markers_only");
  if (neuronprof::TracingEnabled()) {
    std::fprintf(stderr, "TracingEnabled() is true with no capture running\n");
    return 1;
  }
  for (int step = 0; step < 3; ++step) {
    neuronprof::StepTrace step_trace("train", step);
    NEURONPROF_SCOPE("forward", {{"layer", step}});
    std::string name = absl::StrCat("copied_", std::to_string(step));
    neuronprof::ScopedTrace copied(name);
    neuronprof::TraceProducer producer("enqueue");
    neuronprof::TraceConsumer consumer("dequeue", producer.context_id());
    neuronprof::AsyncTrace request("requests", "request");
    neuronprof::TraceCounter("queue_depth", step);
    neuronprof::TraceInstant("cache_miss");
  }
  const absl::Status own = absl::FailedPreconditionError("own Abseil");
  if (own.ok() || own.code() != 9 || own.message() != "own Abseil") {
    std::fprintf(stderr, "the consumer's own absl::Status does not work\n");
    return 1;
  }
  std::printf("markers-only consumer ran\n");
  return 0;
}
