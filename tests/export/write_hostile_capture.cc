// A real capture whose marker names, thread name, argument keys and string
// values are whatever bytes the caller passes (invalid UTF-8, control
// characters, quotes), with NaN, inf and -inf double arguments, for
// tests/interop/test_hostile_strings.py:
//   write_hostile_capture LOGDIR NAME TEXT THREAD_NAME KEY
// Records, on a thread named THREAD_NAME, one marker NAME with arguments
// text=TEXT, nan=NaN, inf=inf, minus_inf=-inf, KEY=7, and inside it a
// marker "inner"; writes every output file (xplane, Chrome trace, Kineto
// trace) under LOGDIR and prints each path.
#include <cstdio>
#include <limits>
#include <string>
#include <thread>

#include "neuronprof/neuronprof.h"

int main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr, "usage: write_hostile_capture LOGDIR NAME TEXT THREAD_NAME KEY\n");
    return 2;
  }
  const std::string name = argv[2], text = argv[3], thread_name = argv[4], key = argv[5];
  neuronprof::ProfilerOptions options;
  options.logdir = argv[1];
  options.port = 0;
  options.host_name = "hostile";
  neuronprof::Profiler profiler(options);
  std::thread worker([&] {
    neuronprof::SetCurrentThreadName(thread_name);
    neuronprof::ScopedTrace marker(
        name, {{"text", text},
               {"nan", std::numeric_limits<double>::quiet_NaN()},
               {"inf", std::numeric_limits<double>::infinity()},
               {"minus_inf", -std::numeric_limits<double>::infinity()},
               {key, 7}});
    neuronprof::ScopedTrace inner("inner");
  });
  worker.join();
  auto result = profiler.Stop();
  if (!result.ok()) {
    std::fprintf(stderr, "%s\n", std::string(result.status().message()).c_str());
    return 1;
  }
  for (const std::string& path : result->files) std::printf("%s\n", path.c_str());
  return 0;
}
