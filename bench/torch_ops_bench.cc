// Per-operator cost of recording libtorch ops: neuronprof's operator
// collector against libtorch's own legacy profiler, on the same MLP
// training step, in one run. Built only with libtorch (neuronprof::torch).
//
// Each benchmark runs training steps of a small MLP (ops are cheap, so the
// profilers' cost shows) and reports the step time and the number of
// operators one step runs. Per-op overhead = (step time with a profiler -
// step time without) / ops per step; docs/PERFORMANCE.md has the numbers.
//
// The 1M-operator benchmark records about a million ops in one capture and
// times turning it into planes (with scope, tf_op, FLOPs and bytes) and
// writing xplane.pb + trace.json.gz.
#include <benchmark/benchmark.h>
#include <malloc.h>
#include <torch/csrc/autograd/profiler_legacy.h>
#include <torch/torch.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "bench/process_memory.h"
#include "neuronprof/torch.h"
#include "neuronprof/trace.h"
#include "src/analysis/ops/operator_annotator.h"
#include "src/collectors/collector.h"
#include "src/collectors/torch/op_callbacks.h"
#include "src/core/recorder.h"
#include "src/export/logdir.h"
#include "src/session/capture_session.h"

namespace {

namespace legacy = torch::autograd::profiler;
using torch::profiler::impl::ProfilerConfig;
using torch::profiler::impl::ProfilerState;

struct Step {
  Step()
      : mlp(torch::nn::Linear(10, 32), torch::nn::ReLU(), torch::nn::Linear(32, 32),
            torch::nn::ReLU(), torch::nn::Linear(32, 2)),
        optimizer(mlp->parameters(), torch::optim::SGDOptions(0.01)) {
    torch::manual_seed(0);
    x = torch::randn({8, 10});
    label = torch::randint(0, 2, {8}, torch::kLong);
  }
  void Run() {
    optimizer.zero_grad();
    torch::Tensor loss = torch::nll_loss(torch::log_softmax(mlp->forward(x), 1), label);
    loss.backward();
    optimizer.step();
  }
  torch::nn::Sequential mlp;
  torch::optim::SGD optimizer;
  torch::Tensor x, label;
};

// Ops one step runs, counted with the legacy profiler (push/pop pairs).
double OpsPerStep(Step& step) {
  legacy::enableProfilerLegacy(ProfilerConfig(ProfilerState::CPU));
  step.Run();
  auto lists = legacy::disableProfilerLegacy();
  size_t events = 0;
  for (const auto& list : lists) {
    for (const auto& event : list) events += event.kind() == legacy::EventKind::PushRange;
  }
  return static_cast<double>(events);
}

void Report(benchmark::State& state, double ops_per_step) {
  state.counters["ops_per_step"] = ops_per_step;
  state.counters["ns_per_op"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * ops_per_step,
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_MlpStep_NoProfiler(benchmark::State& state) {
  Step step;
  const double ops = OpsPerStep(step);
  for (auto _ : state) step.Run();
  Report(state, ops);
}
BENCHMARK(BM_MlpStep_NoProfiler)->Unit(benchmark::kMicrosecond);

// libtorch's own cost of calling a profiler's RecordFunction callbacks:
// no-op callbacks registered as neuronprof registers its own
// (op_callbacks.cc: the operator scopes, and a USER_SCOPE callback with
// inputs for c10d Work), the floor under any callback-based op profiler.
// The MLP step's time above this floor is neuronprof's own.
std::unique_ptr<at::ObserverContext> EmptyStart(const at::RecordFunction&) { return nullptr; }
void EmptyEnd(const at::RecordFunction&, at::ObserverContext*) {}

class EmptyCallbacks {
 public:
  explicit EmptyCallbacks(bool inputs) {
    at::RecordFunctionCallback ops(&EmptyStart, &EmptyEnd);
    ops.needsInputs(inputs).scopes({at::RecordScope::FUNCTION, at::RecordScope::BACKWARD_FUNCTION,
                                    at::RecordScope::TORCHSCRIPT_FUNCTION});
    ops_ = at::addGlobalCallback(ops);
    at::RecordFunctionCallback work(&EmptyStart, &EmptyEnd);
    work.needsInputs(true).scopes({at::RecordScope::USER_SCOPE});
    work_ = at::addGlobalCallback(work);
  }
  ~EmptyCallbacks() {
    at::removeCallback(ops_);
    at::removeCallback(work_);
  }

 private:
  at::CallbackHandle ops_ = 0;
  at::CallbackHandle work_ = 0;
};

void RunEmptyCallback(benchmark::State& state, bool inputs) {
  Step step;
  const double ops = OpsPerStep(step);
  {
    EmptyCallbacks callbacks(inputs);
    for (auto _ : state) step.Run();
  }
  Report(state, ops);
}

void BM_MlpStep_EmptyCallback(benchmark::State& state) { RunEmptyCallback(state, false); }
BENCHMARK(BM_MlpStep_EmptyCallback)->Unit(benchmark::kMicrosecond);

// With needsInputs libtorch boxes every op's arguments for the callback.
void BM_MlpStep_EmptyCallbackInputs(benchmark::State& state) { RunEmptyCallback(state, true); }
BENCHMARK(BM_MlpStep_EmptyCallbackInputs)->Unit(benchmark::kMicrosecond);

void RunNeuronprof(benchmark::State& state, bool shapes, bool stacks = false) {
  Step step;
  const double ops = OpsPerStep(step);
  if (!neuronprof::core::StartRecording(2, uint64_t{1} << 30).ok() ||
      !neuronprof::collectors::libtorch::AddOperatorCallbacks(shapes, 1, stacks).ok()) {
    state.SkipWithError("cannot start recording");
    return;
  }
  for (auto _ : state) step.Run();
  neuronprof::collectors::libtorch::RemoveOperatorCallbacks();
  auto capture = neuronprof::core::StopRecording();
  if (capture.ok()) state.counters["drops"] = static_cast<double>(capture->dropped);
  Report(state, ops);
}

void BM_MlpStep_Neuronprof(benchmark::State& state) { RunNeuronprof(state, false); }
BENCHMARK(BM_MlpStep_Neuronprof)->Unit(benchmark::kMicrosecond);

void BM_MlpStep_NeuronprofShapes(benchmark::State& state) { RunNeuronprof(state, true); }
BENCHMARK(BM_MlpStep_NeuronprofShapes)->Unit(benchmark::kMicrosecond);

// record_stacks: each op unwinds its caller's frames (up to 32).
void BM_MlpStep_NeuronprofStacks(benchmark::State& state) { RunNeuronprof(state, false, true); }
BENCHMARK(BM_MlpStep_NeuronprofStacks)->Unit(benchmark::kMicrosecond);

// One RECORD_FUNCTION scope in a loop (cache-warm): what each op pays for
// the callbacks alone, libtorch's no-op floor against neuronprof's.
void RecordFunctionLoop(benchmark::State& state) {
  for (auto _ : state) {
    RECORD_FUNCTION("aten::addmm", std::vector<c10::IValue>());
  }
}

void BM_RecordFunction_EmptyCallback(benchmark::State& state) {
  EmptyCallbacks callbacks(false);
  RecordFunctionLoop(state);
}
BENCHMARK(BM_RecordFunction_EmptyCallback);

void BM_RecordFunction_Neuronprof(benchmark::State& state) {
  if (!neuronprof::core::StartRecording(2, uint64_t{1} << 30).ok() ||
      !neuronprof::collectors::libtorch::AddOperatorCallbacks(false, 1, false).ok()) {
    state.SkipWithError("cannot start recording");
    return;
  }
  RecordFunctionLoop(state);
  neuronprof::collectors::libtorch::RemoveOperatorCallbacks();
  auto capture = neuronprof::core::StopRecording();
  if (capture.ok()) state.counters["drops"] = static_cast<double>(capture->dropped);
}
// 1 GiB of buffer holds ~10M ops: bound the iterations.
BENCHMARK(BM_RecordFunction_Neuronprof)->Iterations(3'000'000);

void RunLegacy(benchmark::State& state, bool shapes) {
  Step step;
  const double ops = OpsPerStep(step);
  legacy::enableProfilerLegacy(ProfilerConfig(ProfilerState::CPU, shapes));
  for (auto _ : state) step.Run();
  legacy::disableProfilerLegacy();
  Report(state, ops);
}

void BM_MlpStep_TorchLegacyProfiler(benchmark::State& state) { RunLegacy(state, false); }
// Legacy events stay in RAM until disable: bound the iterations.
BENCHMARK(BM_MlpStep_TorchLegacyProfiler)->Unit(benchmark::kMicrosecond)->Iterations(3000);

void BM_MlpStep_TorchLegacyProfilerShapes(benchmark::State& state) { RunLegacy(state, true); }
BENCHMARK(BM_MlpStep_TorchLegacyProfilerShapes)->Unit(benchmark::kMicrosecond)->Iterations(3000);

double ThreadCpuMs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

using neuronprof::bench::ProcStatusMb;
using neuronprof::bench::ResetPeakRss;

// About 1M ops in one capture, then collect (host plane + operator
// annotation: scope, tf_op, FLOPs, bytes) and write xplane.pb +
// trace.json.gz. Only the collect + write part is timed.
void BM_Export1MOps_CollectAndWrite(benchmark::State& state) {
  Step step;
  const double ops = OpsPerStep(step);
  const int steps = static_cast<int>(1'000'000 / ops) + 1;
  if (!neuronprof::EnableTorchOperators().ok()) {
    state.SkipWithError("EnableTorchOperators failed");
    return;
  }
  const char* tmp = std::getenv("TMPDIR");
  const std::string dir = std::string(tmp && *tmp ? tmp : "/tmp") + "/neuronprof_bench_ops";
  std::filesystem::create_directories(dir);
  for (auto _ : state) {
    state.PauseTiming();
    // Before the capture: libtorch, the model and what the allocator kept.
    const double rss_at_start = ProcStatusMb("VmRSS:");
    neuronprof::collectors::CollectorOptions options;
    options.operators = true;
    options.max_buffer_bytes = uint64_t{1} << 30;
    auto session = neuronprof::session::CaptureSession::Start(options);
    if (!session.ok()) {
      state.SkipWithError(std::string(session.status().message()).c_str());
      return;
    }
    for (int i = 0; i < steps; ++i) step.Run();
    const double rss_before = ProcStatusMb("VmRSS:");
    ResetPeakRss();
    state.ResumeTiming();
    const auto t0 = std::chrono::steady_clock::now();
    const double cpu0 = ThreadCpuMs();
    // In an optional, to be freed off the clock below (a CaptureResult is
    // moved, never assigned: its XSpace stays on its arena).
    std::optional<absl::StatusOr<neuronprof::session::CaptureResult>> stopped;
    stopped.emplace((*session)->Stop());
    absl::StatusOr<neuronprof::session::CaptureResult>& result = *stopped;
    if (!result.ok()) {
      state.SkipWithError("Stop failed");
      return;
    }
    const auto t1 = std::chrono::steady_clock::now();
    const double cpu1 = ThreadCpuMs();
    neuronprof::exporter::ExportOptions export_options;
    export_options.chrome_trace = state.range(0) != 0;
    auto files =
        neuronprof::exporter::WriteProfileFiles(result->space, dir, "bench", export_options);
    if (!files.ok()) {
      state.SkipWithError(std::string(files.status().message()).c_str());
      return;
    }
    const auto t2 = std::chrono::steady_clock::now();
    state.counters["peak_rss_mb"] = ProcStatusMb("VmHWM:");
    state.counters["rss_before_mb"] = rss_before;
    state.counters["rss_at_start_mb"] = rss_at_start;
    state.counters["collect_ms"] = std::chrono::duration<double, std::milli>(t1 - t0).count();
    state.counters["write_ms"] = std::chrono::duration<double, std::milli>(t2 - t1).count();
    state.counters["collect_cpu_ms"] = cpu1 - cpu0;
    {
      // Annotation alone (idempotent: it replaces its own stats).
      state.PauseTiming();
      const double a0 = ThreadCpuMs();
      neuronprof::analysis::AnnotateOperatorEvents(&result->space);
      state.counters["annotate_cpu_ms"] = ThreadCpuMs() - a0;
      state.ResumeTiming();
    }
    state.counters["events"] = static_cast<double>(result->stats.events);
    state.counters["drops"] = static_cast<double>(result->stats.dropped);
    state.PauseTiming();
    stopped.reset();  // Free off the clock.
    // Hand the freed heap back, so the next iteration's RSS figures start
    // from libtorch and the model, not from this capture's leftovers.
    malloc_trim(0);
    state.ResumeTiming();
  }
}
// Arg: 1 writes trace.json.gz beside xplane.pb, 0 only xplane.pb.
BENCHMARK(BM_Export1MOps_CollectAndWrite)
    ->ArgName("chrome_trace")
    ->Arg(1)
    ->Arg(0)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(2);

}  // namespace

BENCHMARK_MAIN();
