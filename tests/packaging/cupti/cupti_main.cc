// Enables the CUPTI collector from the installed package and runs one
// capture. Without a GPU or driver the collector cannot start: the capture
// must still succeed with its host plane and say why there is no GPU plane.
// Exits 0 when EnableCuptiCollector succeeded, the capture holds the host
// marker and, with --no-gpu (a machine without an NVIDIA driver), the
// capture's warnings name the CUPTI collector.
#include <neuronprof/cupti.h>
#include <neuronprof/neuronprof.h>

#include <cstdio>
#include <string>

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3 || (argc == 3 && std::string(argv[2]) != "--no-gpu")) {
    std::fprintf(stderr, "usage: consumer_cupti LOGDIR [--no-gpu]\n");
    return 2;
  }
  const bool no_gpu = argc == 3;
  absl::Status enabled = neuronprof::EnableCuptiCollector();
  if (!enabled.ok()) {
    std::fprintf(stderr, "EnableCuptiCollector: %s\n", enabled.ToString().c_str());
    return 1;
  }
  neuronprof::ProfilerOptions options;
  options.logdir = argv[1];
  options.port = 0;
  options.host_name = "consumer";
  neuronprof::Profiler profiler(options);
  if (!profiler.status().ok()) {
    std::fprintf(stderr, "profiler did not start: %s\n", profiler.status().ToString().c_str());
    return 1;
  }
  { NEURONPROF_SCOPE("host_work"); }
  absl::StatusOr<neuronprof::ProfileResult> result = profiler.Stop();
  if (!result.ok()) {
    std::fprintf(stderr, "Stop(): %s\n", result.status().ToString().c_str());
    return 1;
  }
  bool mentions_cupti = false;
  for (const std::string& warning : result->warnings) {
    std::printf("warning: %s\n", warning.c_str());
    if (warning.find("cupti") != std::string::npos || warning.find("CUPTI") != std::string::npos) {
      mentions_cupti = true;
    }
  }
  std::printf("events=%lld\n", static_cast<long long>(result->events));
  if (result->events < 1) {
    std::fprintf(stderr, "the host marker is missing\n");
    return 1;
  }
  if (no_gpu && !mentions_cupti) {
    std::fprintf(stderr, "no GPU, yet no warning names the CUPTI collector\n");
    return 1;
  }
  return 0;
}
