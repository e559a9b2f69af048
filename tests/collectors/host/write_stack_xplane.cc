// Records markers with call stacks in known functions of this binary
// (built with -g) and writes the capture as <dir>/<host>.xplane.pb: the
// folded stacks' CLI test (tests/cli/cli_stack_summary_test.sh).
//   write_stack_xplane DIR HOST
// Each of 3 calls of StackHot() holds a "hot" marker with its stack, with
// a plain "inner" marker and a "deep" one with its own stack nested in it.
#include <chrono>
#include <cstdio>
#include <string>

#include "neuronprof/trace.h"
#include "proto/xplane.pb.h"
#include "src/collectors/host/host_collector.h"
#include "src/core/recorder.h"
#include "src/export/logdir.h"

namespace {

void Spin(int us) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
  while (std::chrono::steady_clock::now() < end) {
  }
}

[[gnu::noinline]] void StackDeep() {
  NEURONPROF_SCOPE_STACK("deep");
  Spin(200);
}

[[gnu::noinline]] void StackHot() {
  NEURONPROF_SCOPE_STACK("hot");
  Spin(100);
  {
    NEURONPROF_SCOPE("inner");
    Spin(100);
  }
  StackDeep();
  asm volatile("");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s DIR HOST\n", argv[0]);
    return 2;
  }
  if (!neuronprof::core::StartRecording(2, uint64_t{4} << 20).ok()) return 1;
  for (int i = 0; i < 3; ++i) StackHot();
  auto capture = neuronprof::core::StopRecording();
  if (!capture.ok()) return 1;
  tensorflow::profiler::XSpace space;
  neuronprof::collectors::CollectStats stats;
  neuronprof::collectors::AddHostPlane(*capture, &space, &stats);
  auto files = neuronprof::exporter::WriteProfileFiles(space, argv[1], argv[2], {});
  if (!files.ok()) {
    std::fprintf(stderr, "%s\n", std::string(files.status().message()).c_str());
    return 1;
  }
  for (const std::string& file : *files) std::printf("%s\n", file.c_str());
  return 0;
}
