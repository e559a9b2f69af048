// A minimal consumer of the installed / add_subdirectory'd neuronprof:
// captures one ScopedTrace inside each of three StepTraces, stops, and
// checks the result. With a plugin, it also loads it inside the window as
// an inference server loads a backend (dlopen, RTLD_LOCAL) and calls its
// backend_run(10), whose 40 markers must land in this capture.
//   consumer [LOGDIR [PLUGIN.so]]
// Exits 0 only if exactly the expected events were recorded, Stop() wrote
// the files the options' defaults promise (.xplane.pb, the Chrome trace
// and the Kineto trace) and the in-process summary (neuronprof/summary.h)
// counts the steps and markers. A "typed_work" marker carries typed
// arguments (neuronprof::Arg): batch 32, dtype "bf16", scale 0.5, which
// tests/packaging/check_packaging.sh reads back with the installed CLI, as
// it reads the call stack of the "stacked_work" marker (NEURONPROF_SCOPE_STACK)
// recorded in ConsumerStackedWork.
#include <dlfcn.h>
#include <neuronprof/neuronprof.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

bool IsRegularFile(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0;
}

}  // namespace

// Not inlined: its name must be a frame of the marker's stack.
__attribute__((noinline)) void ConsumerStackedWork() {
  NEURONPROF_SCOPE_STACK("stacked_work");
  volatile int sink = 0;
  sink = sink + 1;
}

int main(int argc, char** argv) {
  std::string logdir;
  if (argc > 1) {
    logdir = argv[1];
  } else {
    char tmpl[] = "/tmp/neuronprof_consumer_XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) {
      std::perror("mkdtemp");
      return 1;
    }
    logdir = tmpl;
  }

  neuronprof::ProfilerOptions options;
  options.logdir = logdir;
  options.port = 0;  // No capture server.
  options.host_name = "consumer";
  neuronprof::Profiler profiler(options);
  if (!profiler.status().ok()) {
    std::fprintf(stderr, "profiler did not start: %s\n", profiler.status().ToString().c_str());
    return 1;
  }
  for (int step = 0; step < 3; ++step) {
    neuronprof::StepTrace step_trace("train", step);
    neuronprof::ScopedTrace work("consumer_work");
    volatile double acc = 0;
    for (int i = 0; i < 1000; ++i) acc = acc + i * 0.5;
  }
  int64_t expected_events = 6;
  {
    // Typed arguments: fixed types at compile time, copied raw.
    neuronprof::ScopedTrace typed("typed_work", neuronprof::Arg("batch", 32),
                                  neuronprof::Arg("dtype", "bf16"), neuronprof::Arg("scale", 0.5));
    expected_events += 1;
  }
  ConsumerStackedWork();
  expected_events += 1;
  {
    // Flows, an async span, a counter and an instant (trace_events.h).
    neuronprof::AsyncTrace request("requests", "request");
    uint64_t id = 0;
    {
      neuronprof::TraceProducer producer("enqueue");
      id = producer.context_id();
    }
    neuronprof::TraceConsumer consumer("dequeue", neuronprof::ContextType::kGeneric, id);
    {
      const uint64_t ids[] = {id};  // A batch of one: its marker and one link.
      neuronprof::TraceBatchConsumer batch("assemble", neuronprof::ContextType::kGeneric, ids, 1);
    }
    neuronprof::TraceCounter("queue_depth", 1);
    neuronprof::TraceInstant("cache_miss", {{"key", 7}});
    request.End();
    expected_events += 7;
  }
  if (argc > 2) {
    // Never dlclose'd: NEURONPROF_SCOPE names point into the plugin.
    void* plugin = ::dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
    if (plugin == nullptr) {
      std::fprintf(stderr, "dlopen: %s\n", ::dlerror());
      return 1;
    }
    auto backend_run = reinterpret_cast<void (*)(int)>(::dlsym(plugin, "backend_run"));
    if (backend_run == nullptr) {
      std::fprintf(stderr, "dlsym(backend_run): %s\n", ::dlerror());
      return 1;
    }
    backend_run(10);
    expected_events += 40;
  }
  absl::StatusOr<neuronprof::ProfileResult> result = profiler.Stop();
  if (!result.ok()) {
    std::fprintf(stderr, "Stop() failed: %s\n", result.status().ToString().c_str());
    return 1;
  }
  std::printf("events=%lld files=%zu run_dir=%s\n", static_cast<long long>(result->events),
              result->files.size(), result->run_dir.c_str());
  if (result->events != expected_events) {
    std::fprintf(stderr, "expected %lld events, got %lld\n",
                 static_cast<long long>(expected_events), static_cast<long long>(result->events));
    return 1;
  }
  for (const std::string& file : result->files) std::printf("  wrote %s\n", file.c_str());
  // The defaults of a kTrace capture: the xplane.pb always, the Chrome trace
  // (write_chrome_trace unset, no kOperator Kineto trace to stand in for
  // it) and the Kineto trace (write_pytorch_trace), at their documented paths.
  const std::string run = result->run_dir.substr(result->run_dir.rfind('/') + 1);
  for (const std::string& expected :
       {result->run_dir + "/consumer.xplane.pb", result->run_dir + "/consumer.trace.json.gz",
        logdir + "/" + run + "/consumer.pt.trace.json.gz"}) {
    bool listed = false;
    for (const std::string& file : result->files) listed = listed || file == expected;
    if (!listed || !IsRegularFile(expected)) {
      std::fprintf(stderr, "%s is %s\n", expected.c_str(),
                   listed ? "listed but missing or empty" : "not among the written files");
      return 1;
    }
  }
  // The server's own breakdown, without reading files itself.
  neuronprof::MarkerSummaryOptions summary_options;
  summary_options.group_by = neuronprof::MarkerSummaryOptions::GroupBy::kThreadGroup;
  const absl::StatusOr<neuronprof::MarkerSummary> summary =
      neuronprof::SummarizeMarkers(*result, summary_options);
  if (!summary.ok()) {
    std::fprintf(stderr, "SummarizeMarkers: %s\n", summary.status().ToString().c_str());
    return 1;
  }
  int64_t work_calls = 0;
  for (const neuronprof::MarkerStatsRow& row : summary->markers) {
    if (row.name == "consumer_work") work_calls += row.stats.calls;
  }
  // Tails: the step name, then the async span.
  if (summary->steps.empty() || summary->steps[0].name != "train" ||
      summary->steps[0].stats.calls != 3 || work_calls != 3 || summary->tails.size() != 2 ||
      summary->tails[0].kind != "step" || summary->tails[0].instances != 3 ||
      summary->steps[0].stats.p99_ns <= 0) {
    std::fprintf(stderr, "the summary does not count 3 train steps and 3 consumer_work\n");
    return 1;
  }
  if (summary->async_spans.size() != 1 || summary->async_spans[0].thread != "requests" ||
      summary->tails[1].kind != "async" || summary->counters.size() != 1 ||
      summary->counters[0].name != "queue_depth" || summary->counters[0].last != 1 ||
      summary->instants.size() != 1 || summary->instants[0].count != 1) {
    std::fprintf(stderr, "the summary misses the async span, the counter or the instant\n");
    return 1;
  }
  std::printf("%s\n", summary->tails[0].text.c_str());
  std::printf("consumer OK\n");
  return 0;
}
