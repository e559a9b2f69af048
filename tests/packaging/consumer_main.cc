// A minimal consumer of the installed / add_subdirectory'd neuronprof:
// captures one ScopedTrace inside one StepTrace, stops, and checks the
// result. Exits 0 only if >= 2 events were recorded and the .xplane.pb
// file exists. Used by tests/packaging/check_packaging.sh.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

#include <neuronprof/neuronprof.h>

namespace {

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool IsRegularFile(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0;
}

}  // namespace

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
    std::fprintf(stderr, "profiler did not start: %s\n",
                 profiler.status().ToString().c_str());
    return 1;
  }
  for (int step = 0; step < 3; ++step) {
    neuronprof::StepTrace step_trace("train", step);
    neuronprof::ScopedTrace work("consumer_work");
    volatile double acc = 0;
    for (int i = 0; i < 1000; ++i) acc = acc + i * 0.5;
  }
  absl::StatusOr<neuronprof::ProfileResult> result = profiler.Stop();
  if (!result.ok()) {
    std::fprintf(stderr, "Stop() failed: %s\n", result.status().ToString().c_str());
    return 1;
  }
  std::printf("events=%lld files=%zu run_dir=%s\n",
              static_cast<long long>(result->events), result->files.size(),
              result->run_dir.c_str());
  if (result->events < 2) {
    std::fprintf(stderr, "expected >= 2 events, got %lld\n",
                 static_cast<long long>(result->events));
    return 1;
  }
  std::string xplane;
  for (const std::string& file : result->files) {
    std::printf("  wrote %s\n", file.c_str());
    if (EndsWith(file, ".xplane.pb")) xplane = file;
  }
  if (xplane.empty()) {
    std::fprintf(stderr, "no .xplane.pb among the written files\n");
    return 1;
  }
  if (!IsRegularFile(xplane)) {
    std::fprintf(stderr, "%s does not exist or is empty\n", xplane.c_str());
    return 1;
  }
  const std::string expected = result->run_dir + "/consumer.xplane.pb";
  if (!IsRegularFile(expected)) {
    std::fprintf(stderr, "%s does not exist\n", expected.c_str());
    return 1;
  }
  std::printf("consumer OK\n");
  return 0;
}
