// Enabled-marker cost by how neuronprof is linked. The same source builds
// two programs:
//   neuronprof_linking_bench_shared  markers from libneuronprof_markers.so:
//       loops in the executable, and loops in a shared object of their own
//       (neuronprof_bench_plugin, as a dlopen'ed backend would hold them);
//   neuronprof_linking_bench_static  everything in one static binary (the
//       "plugin" loops are then ordinary code of the executable).
// bench/compare_linking.sh runs both in alternating rounds and reports
// medians beside the floor, two raw tick reads.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <string>

#include "bench/floor_bench.h"
#include "bench/linking_bench_plugin.h"
#include "neuronprof/trace.h"
#include "src/core/recorder.h"

namespace {

using neuronprof::core::StartRecording;
using neuronprof::core::StopRecording;

constexpr uint64_t kCaptureBytes = uint64_t{2} << 30;  // 20M events fit.

// Runs `loop` inside a capture and reports its events and drops.
template <typename Loop>
void InCapture(benchmark::State& state, Loop loop) {
  auto started = StartRecording(neuronprof::kTraceCritical, kCaptureBytes);
  if (!started.ok()) {
    state.SkipWithError(std::string(started.message()).c_str());
    return;
  }
  loop(state);
  auto capture = StopRecording();
  if (!capture.ok()) {
    state.SkipWithError(std::string(capture.status().message()).c_str());
    return;
  }
  uint64_t events = 0;
  for (const auto& thread : capture->threads) events += thread.events.size();
  state.counters["events"] = static_cast<double>(events);
  state.counters["drops"] = static_cast<double>(capture->dropped);
}

BENCHMARK(BM_Floor_TwoNowTicks);

void BM_Exe_ScopeMacroLiteral(benchmark::State& state) {
  InCapture(state, [](benchmark::State& s) {
    for (auto _ : s) {
      NEURONPROF_SCOPE("literal_marker");
    }
  });
}
BENCHMARK(BM_Exe_ScopeMacroLiteral)->Iterations(20'000'000);

void BM_Exe_CopiedShortName(benchmark::State& state) {
  char name[32];
  std::snprintf(name, sizeof(name), "layer_%d", 17);
  InCapture(state, [&name](benchmark::State& s) {
    for (auto _ : s) {
      neuronprof::ScopedTrace trace(name);
    }
  });
}
BENCHMARK(BM_Exe_CopiedShortName)->Iterations(20'000'000);

void BM_Plugin_ScopeMacroLiteral(benchmark::State& state) {
  InCapture(state, PluginScopeMacroLiteral);
}
BENCHMARK(BM_Plugin_ScopeMacroLiteral)->Iterations(20'000'000);

void BM_Plugin_CopiedShortName(benchmark::State& state) { InCapture(state, PluginCopiedShortName); }
BENCHMARK(BM_Plugin_CopiedShortName)->Iterations(20'000'000);

}  // namespace

BENCHMARK_MAIN();
