// What a user waits for at Profiler::Stop(): the libtorch MLP training loop
// of examples/libtorch_mlp recorded with profile_type = kOperator (memory
// on, the default outputs: xplane.pb + Chrome trace + Kineto trace), then
// Stop() timed on the wall clock, with the process's peak RSS during it.
// Public API only, as an application links it. One capture per process (so
// the peak is not an earlier capture's); run it several times, interleaved
// with another build, and take medians:
//
//   neuronprof_stop_bench [--steps N] [--hidden H] [--logdir DIR] [--chrome 0|1] [--kineto 0|1]
//   neuronprof_stop_bench --markers N [--logdir DIR] [--chrome 0|1] [--kineto 0|1]
//
// --markers N records N literal NEURONPROF_SCOPE markers instead (kTrace,
// no libtorch) and also prints records_mb, the bytes of their records (32
// per event: PERFORMANCE.md's "memory per event"), and peak_over_records:
// the peak RSS during Stop() over the RSS before Stop() less the records
// plus the records, i.e. how many times the records' bytes Stop() needs at
// its peak. (Not the RSS that recording added: the pool commits 32 MiB
// ahead of its blocks on a thread of its own, so that difference raced it.)
//
// Prints one line: events, steps, stop_ms (wall), stop_cpu_ms (all threads'
// CPU during Stop(): on a shared machine the wall time is the load's),
// peak_rss_mb (VmHWM since just before Stop()), rss_before_mb, and the size
// of each file written. --hidden sets the layers' width: the operators per
// step do not depend on it, only the training's own time does.
#include <sys/resource.h>
#include <sys/stat.h>
#include <torch/torch.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "bench/process_memory.h"
#include "examples/libtorch_mlp/mlp_model.h"
#include "neuronprof/neuronprof.h"
#include "neuronprof/torch.h"

namespace {

using neuronprof::bench::ProcStatusMb;
using neuronprof::bench::ResetPeakRss;

double ProcessCpuMs() {
  rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e3 +
         (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e3;
}

long FileBytes(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 ? static_cast<long>(st.st_size) : -1;
}

}  // namespace

int main(int argc, char** argv) {
  int steps = 4800;  // ~1M operator + memory events (~224 per step).
  int hidden = 32;
  std::string logdir = "/tmp/neuronprof_stop_bench";
  int64_t markers = 0;  // > 0: host markers instead of the MLP.
  int chrome = -1;      // -1: the option's default.
  bool kineto = true;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--steps") == 0) {
      steps = std::atoi(argv[i + 1]);
    } else if (std::strcmp(argv[i], "--hidden") == 0) {
      hidden = std::atoi(argv[i + 1]);
    } else if (std::strcmp(argv[i], "--markers") == 0) {
      markers = std::atoll(argv[i + 1]);
    } else if (std::strcmp(argv[i], "--logdir") == 0) {
      logdir = argv[i + 1];
    } else if (std::strcmp(argv[i], "--chrome") == 0) {
      chrome = std::atoi(argv[i + 1]) != 0 ? 1 : 0;
    } else if (std::strcmp(argv[i], "--kineto") == 0) {
      kineto = std::atoi(argv[i + 1]) != 0;
    } else {
      std::fprintf(stderr, "unknown flag %s\n", argv[i]);
      return 2;
    }
  }
  const double rss_start = ProcStatusMb("VmRSS:");
  torch::manual_seed(0);
  torch::set_num_threads(1);
  if (markers > 0) {
    // No operator collector: kTrace, host markers only.
  } else if (absl::Status s = neuronprof::EnableTorchOperators(); !s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    return 1;
  }
  neuronprof_examples::MLP model(10, hidden, 2);
  neuronprof::NameModules(*model);
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.01));
  torch::nn::NLLLoss loss_fn;

  neuronprof::ProfilerOptions options;
  options.logdir = logdir;
  options.profile_type =
      markers > 0 ? neuronprof::ProfileType::kTrace : neuronprof::ProfileType::kOperator;
  options.ms_duration = 600000;
  options.max_buffer_bytes =
      markers > 0 ? int64_t{40} * markers + (int64_t{64} << 20) : int64_t{1} << 30;
  options.port = 0;
  if (chrome >= 0) options.write_chrome_trace = chrome == 1;
  options.write_pytorch_trace = kineto;
  neuronprof::Profiler profiler(options);
  if (!profiler.status().ok()) {
    std::fprintf(stderr, "%s\n", profiler.status().ToString().c_str());
    return 1;
  }
  for (int64_t i = 0; i < markers; ++i) {
    NEURONPROF_SCOPE("marker");
  }
  if (markers > 0) steps = 0;
  for (int step = 0; step < steps; ++step) {
    neuronprof::StepTrace trace("train_step", step);
    optimizer.zero_grad();
    torch::Tensor loss =
        loss_fn(model->forward(torch::randn({64, 10})), torch::randint(0, 2, {64}, torch::kLong));
    loss.backward();
    optimizer.step();
  }
  const double rss_before = ProcStatusMb("VmRSS:");
  ResetPeakRss();  // The peak from here on.
  const double cpu0 = ProcessCpuMs();
  const auto t0 = std::chrono::steady_clock::now();
  auto result = profiler.Stop();
  const auto t1 = std::chrono::steady_clock::now();
  const double cpu = ProcessCpuMs() - cpu0;
  const double peak = ProcStatusMb("VmHWM:");
  if (!result.ok()) {
    std::fprintf(stderr, "%s\n", result.status().ToString().c_str());
    return 1;
  }
  std::printf(
      "events=%lld dropped=%lld steps=%d stop_ms=%.0f stop_cpu_ms=%.0f peak_rss_mb=%.0f "
      "rss_before_mb=%.0f",
      static_cast<long long>(result->events), static_cast<long long>(result->dropped_events), steps,
      std::chrono::duration<double, std::milli>(t1 - t0).count(), cpu, peak, rss_before);
  if (markers > 0) {
    constexpr double kRecordBytes = 32;  // One record per literal marker.
    const double records = static_cast<double>(result->events) * kRecordBytes / (1 << 20);
    std::printf(" markers=%lld records_mb=%.0f peak_over_records=%.2f rss_start_mb=%.0f",
                static_cast<long long>(markers), records, (peak - rss_before + records) / records,
                rss_start);
  }
  for (const std::string& file : result->files) {
    const size_t slash = file.rfind('/');
    std::printf(" %s=%ld", file.substr(slash + 1).c_str(), FileBytes(file));
  }
  std::printf("\n");
  return 0;
}
