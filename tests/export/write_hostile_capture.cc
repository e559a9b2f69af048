// A real capture whose marker names, thread name, argument keys and string
// values are whatever bytes the caller passes (invalid UTF-8, control
// characters, quotes), with NaN, inf and -inf double arguments, for
// tests/interop/test_hostile_strings.py:
//   write_hostile_capture LOGDIR NAME TEXT THREAD_NAME KEY [list|typed]
// Records, on a thread named THREAD_NAME, one marker NAME with arguments
// text=TEXT, nan=NaN, inf=inf, minus_inf=-inf, KEY=7, and inside it a
// marker "inner"; writes every output file (xplane, Chrome trace, Kineto
// trace) under LOGDIR and prints each path. The arguments are given as an
// initializer list (`list`, the default) or as typed neuronprof::Arg()s
// (after a marker "first").
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <thread>

#include "neuronprof/neuronprof.h"

int main(int argc, char** argv) {
  if (argc != 6 && argc != 7) {
    std::fprintf(stderr,
                 "usage: write_hostile_capture LOGDIR NAME TEXT THREAD_NAME KEY [list|typed]\n");
    return 2;
  }
  const std::string name = argv[2], text = argv[3], thread_name = argv[4], key = argv[5];
  const bool typed = argc == 7 && std::string(argv[6]) == "typed";
  neuronprof::ProfilerOptions options;
  options.logdir = argv[1];
  options.port = 0;
  options.host_name = "hostile";
  neuronprof::Profiler profiler(options);
  std::thread worker([&] {
    neuronprof::SetCurrentThreadName(thread_name);
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    std::optional<neuronprof::ScopedTrace> marker;
    if (typed) {
      // A marker first, so that the typed one takes the inline path (a
      // thread's first marker claims its buffer out of line).
      { neuronprof::ScopedTrace first("first"); }
      marker.emplace(name, neuronprof::Arg("text", text), neuronprof::Arg("nan", nan),
                     neuronprof::Arg("inf", inf), neuronprof::Arg("minus_inf", -inf),
                     neuronprof::Arg(key, 7));
    } else {
      marker.emplace(
          name, std::initializer_list<neuronprof::TraceArg>{
                    {"text", text}, {"nan", nan}, {"inf", inf}, {"minus_inf", -inf}, {key, 7}});
    }
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
