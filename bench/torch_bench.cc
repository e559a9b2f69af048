// libtorch's RECORD_FUNCTION next to neuronprof's markers, in one run: the
// zero-copy literal (NEURONPROF_SCOPE) and a copied name (ScopedTrace).
// Built only when find_package(Torch) succeeds (Debian: libtorch-dev 1.13).
//
// "Enabled" for libtorch means the legacy autograd profiler (the CPU-only
// profiler behind torch.autograd.profiler.profile(use_kineto=False)) is on
// for this thread; "Disabled" means no RecordFunction callback is installed.
// For neuronprof, enabled means a capture is running (level 2, big buffer).
#include <ATen/record_function.h>
#include <benchmark/benchmark.h>
#include <torch/csrc/autograd/profiler_legacy.h>

#include <string>
#include <vector>

#include "neuronprof/trace.h"
#include "src/core/recorder.h"

namespace {

namespace legacy = torch::autograd::profiler;
using torch::profiler::impl::ProfilerConfig;
using torch::profiler::impl::ProfilerState;

void BM_Torch_RecordFunction_Disabled(benchmark::State& state) {
  for (auto _ : state) {
    RECORD_FUNCTION("torch_marker", std::vector<c10::IValue>());
  }
}
BENCHMARK(BM_Torch_RecordFunction_Disabled);

void BM_Torch_RecordFunction_LegacyProfiler(benchmark::State& state) {
  legacy::enableProfilerLegacy(ProfilerConfig(ProfilerState::CPU));
  for (auto _ : state) {
    RECORD_FUNCTION("torch_marker", std::vector<c10::IValue>());
  }
  auto lists = legacy::disableProfilerLegacy();
  size_t events = 0;
  for (const auto& list : lists) events += list.size();
  // Legacy events are push/pop pairs ("__start_profile" marks included).
  state.counters["legacy_events"] = static_cast<double>(events);
}
// Legacy events live in RAM until disable; 2M markers keep that bounded.
BENCHMARK(BM_Torch_RecordFunction_LegacyProfiler)->Iterations(2'000'000);

void BM_Neuronprof_ScopedTrace_Disabled(benchmark::State& state) {
  for (auto _ : state) {
    NEURONPROF_SCOPE("neuronprof_marker");
  }
}
BENCHMARK(BM_Neuronprof_ScopedTrace_Disabled);

void BM_Neuronprof_ScopedTrace_Enabled(benchmark::State& state) {
  if (!neuronprof::core::StartRecording(2, uint64_t{512} << 20).ok()) {
    state.SkipWithError("StartRecording failed");
    return;
  }
  for (auto _ : state) {
    NEURONPROF_SCOPE("neuronprof_marker");
  }
  auto capture = neuronprof::core::StopRecording();
  if (capture.ok()) state.counters["drops"] = static_cast<double>(capture->dropped);
}
BENCHMARK(BM_Neuronprof_ScopedTrace_Enabled)->Iterations(2'000'000);

// Dynamic name: the closest match to RECORD_FUNCTION with a runtime name.
void BM_Neuronprof_ScopedTrace_EnabledDynamicName(benchmark::State& state) {
  const std::string name = "aten::linear_backward";
  if (!neuronprof::core::StartRecording(2, uint64_t{512} << 20).ok()) {
    state.SkipWithError("StartRecording failed");
    return;
  }
  for (auto _ : state) {
    neuronprof::ScopedTrace trace{std::string_view(name)};
  }
  auto capture = neuronprof::core::StopRecording();
  if (capture.ok()) state.counters["drops"] = static_cast<double>(capture->dropped);
}
BENCHMARK(BM_Neuronprof_ScopedTrace_EnabledDynamicName)->Iterations(2'000'000);

}  // namespace

BENCHMARK_MAIN();
