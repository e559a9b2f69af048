// The Kineto trace writer alone: the CPU it spends per event formatting an
// XSpace's .pt.trace.json text (no gzip, no file), on all its threads. Feed
// it the vm.xplane.pb that neuronprof_stop_bench writes (~1.07M libtorch
// operator and memory events), so every build formats the same capture:
//
//   neuronprof_stop_bench --logdir /tmp/kin_logs
//   neuronprof_kineto_bench /tmp/kin_logs/plugins/profile/*/vm.xplane.pb [--reps N] [--out FILE]
//
// Prints one line per repetition (cpu_ms: the process's user + system CPU
// during the write; on a shared machine compare it, not wall_ms) and one
// with the medians, in ns per event of the space. --out also writes the
// text to FILE, to compare two builds' output byte for byte (cmp). The
// space is parsed onto an arena, as a capture builds it.
#include <google/protobuf/arena.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "src/export/byte_sink.h"
#include "src/export/kineto_trace.h"
#include "src/export/xspace_file.h"
#include "src/xplane/xplane_visitor.h"

namespace {

double ProcessCpuMs() {
  rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e3 +
         (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e3;
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE.xplane.pb [--reps N] [--out FILE]\n", argv[0]);
    return 2;
  }
  const std::string input = argv[1];
  int reps = 5;
  std::string out;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--reps") == 0) {
      reps = std::max(1, std::atoi(argv[i + 1]));
    } else if (std::strcmp(argv[i], "--out") == 0) {
      out = argv[i + 1];
    } else {
      std::fprintf(stderr, "unknown flag %s\n", argv[i]);
      return 2;
    }
  }
  // Parsed onto an arena, as a capture builds its XSpace (events and their
  // stats side by side in memory, not each on the heap).
  auto file = neuronprof::exporter::ReadRegularFile(
      input, neuronprof::exporter::kMaxXSpaceFileBytes, "an XSpace file");
  if (!file.ok()) {
    std::fprintf(stderr, "%s\n", file.status().ToString().c_str());
    return 1;
  }
  google::protobuf::Arena arena;
  auto* space = google::protobuf::Arena::CreateMessage<tensorflow::profiler::XSpace>(&arena);
  if (!space->ParseFromString(*file)) {
    std::fprintf(stderr, "%s: not an XSpace\n", input.c_str());
    return 1;
  }
  file->clear();
  const double events = static_cast<double>(neuronprof::xplane::NumEvents(*space));
  if (!out.empty()) {
    // Not gzipped unless FILE ends in .gz.
    if (!neuronprof::exporter::WriteKinetoTraceFile(*space, out).ok()) return 1;
  }
  std::vector<double> cpu, wall;
  size_t bytes = 0;
  for (int rep = 0; rep < reps; ++rep) {
    neuronprof::exporter::CountingSink sink;
    const double cpu_start = ProcessCpuMs();
    const auto wall_start = std::chrono::steady_clock::now();
    if (!neuronprof::exporter::WriteKinetoTrace(*space, &sink).ok()) return 1;
    wall.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - wall_start)
            .count());
    cpu.push_back(ProcessCpuMs() - cpu_start);
    bytes = sink.bytes();
    std::printf("rep=%d cpu_ms=%.0f wall_ms=%.0f cpu_ns_per_event=%.0f\n", rep, cpu.back(),
                wall.back(), cpu.back() * 1e6 / events);
  }
  std::printf(
      "events=%.0f json_bytes=%zu median_cpu_ms=%.0f median_wall_ms=%.0f "
      "cpu_ns_per_event=%.0f\n",
      events, bytes, Median(cpu), Median(wall), Median(cpu) * 1e6 / events);
  return 0;
}
