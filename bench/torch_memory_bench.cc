// Cost per recorded allocation: neuronprof's libtorch memory reporter
// against libtorch's legacy profiler with profile_memory, on a loop of
// torch::empty({16}) (one operator, one allocation, one free each), in one
// run with the variants interleaved in rounds; medians reported.
//
//   neuronprof_torch_memory_bench [--rounds R] [--iterations N] [--only K]
//
// --only K runs variant K alone (0-based, as listed), e.g. under perf.
//
// Per recorded allocation event = (ns per iteration with memory - without
// memory, same profiler) / 2 (an allocation and a free per iteration).
#include <torch/csrc/autograd/profiler_legacy.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "neuronprof/torch.h"
#include "src/collectors/collector.h"
#include "src/session/capture_session.h"

namespace {

namespace legacy = torch::autograd::profiler;
using torch::profiler::impl::ProfilerConfig;
using torch::profiler::impl::ProfilerState;

double NsPerIteration(int iterations) {
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < iterations; ++i) {
    auto tensor = torch::empty({16});
  }
  const auto end = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(end - start).count() / iterations;
}

double UnderNeuronprof(bool memory, int iterations) {
  neuronprof::TorchOperatorOptions torch_options;
  torch_options.record_shapes = false;
  torch_options.profile_memory = memory;
  if (!neuronprof::EnableTorchOperators(torch_options).ok()) std::abort();
  neuronprof::collectors::CaptureOptions options;
  options.operators = true;
  options.max_buffer_bytes = uint64_t{1} << 30;
  auto session = neuronprof::session::CaptureSession::Start(options);
  if (!session.ok()) std::abort();
  const double ns = NsPerIteration(iterations);
  auto result = (*session)->Stop();
  if (!result.ok() || result->stats.dropped != 0) std::abort();
  auto after = torch::empty({16});  // Gives libtorch's profiler slot back.
  return ns;
}

double UnderLegacy(bool memory, int iterations) {
  legacy::enableProfilerLegacy(ProfilerConfig(ProfilerState::CPU, false, memory));
  const double ns = NsPerIteration(iterations);
  legacy::disableProfilerLegacy();
  return ns;
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 7, iterations = 200000, only = -1;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--rounds") == 0) rounds = std::atoi(argv[i + 1]);
    else if (std::strcmp(argv[i], "--iterations") == 0) iterations = std::atoi(argv[i + 1]);
    else if (std::strcmp(argv[i], "--only") == 0) only = std::atoi(argv[i + 1]);
  }
  if (rounds <= 0 || iterations <= 0 || argc % 2 == 0) {
    std::fprintf(stderr, "usage: %s [--rounds R] [--iterations N]\n", argv[0]);
    return 2;
  }
  torch::set_num_threads(1);
  struct Variant {
    const char* name;
    std::function<double()> run;
    std::vector<double> ns;
  };
  std::vector<Variant> variants = {
      {"no profiler", [&] { return NsPerIteration(iterations); }, {}},
      {"neuronprof kOperator, profile_memory=false", [&] { return UnderNeuronprof(false, iterations); }, {}},
      {"neuronprof kOperator, profile_memory=true", [&] { return UnderNeuronprof(true, iterations); }, {}},
      {"libtorch legacy profiler", [&] { return UnderLegacy(false, iterations); }, {}},
      {"libtorch legacy profiler, profile_memory", [&] { return UnderLegacy(true, iterations); }, {}},
  };
  NsPerIteration(iterations);  // Warm up the allocator and the dispatcher.
  if (only >= 0 && only < static_cast<int>(variants.size())) {
    for (int round = 0; round < rounds; ++round) {
      std::printf("%s: %.1f ns/iter\n", variants[only].name, variants[only].run());
    }
    return 0;
  }
  for (int round = 0; round < rounds; ++round) {
    for (Variant& variant : variants) variant.ns.push_back(variant.run());
  }
  std::printf("%-45s %12s\n", "variant (torch::empty({16}) + free)", "ns/iter");
  std::vector<double> medians;
  for (const Variant& variant : variants) {
    medians.push_back(Median(variant.ns));
    std::printf("%-45s %12.1f\n", variant.name, medians.back());
  }
  const double ours = (medians[2] - medians[1]) / 2;
  const double theirs = (medians[4] - medians[3]) / 2;
  std::printf("\nper recorded allocation event: neuronprof %.1f ns, libtorch legacy %.1f ns "
              "(%.1fx)\n", ours, theirs, ours > 0 ? theirs / ours : 0.0);
  std::printf("medians of %d interleaved rounds, %d iterations each\n", rounds, iterations);
  return 0;
}
