// Cost per recorded allocation: neuronprof's libtorch memory reporter
// against libtorch's legacy profiler with profile_memory, on a loop of
// torch::empty({16}) (one operator, one allocation, one free each), in one
// run with the variants interleaved in rounds, in a new random order each
// round; medians reported.
//
//   neuronprof_torch_memory_bench [--rounds R] [--iterations N] [--only K]
//
// --only K runs variant K alone (0-based: 0-4 the tensor table, 5-9 the
// allocator table), e.g. under perf.
//
// Per recorded allocation event = (ns per iteration with memory - without
// memory, same profiler) / 2 (an allocation and a free per iteration).
//
// A second table takes the operator out: 64-byte blocks from libtorch's CPU
// allocator itself (c10::GetCPUAllocator, as every CPU tensor's storage),
// so the difference between variants is the memory path alone, and "a
// capture without memory profiling" shows what an allocation costs when
// neuronprof records operators but not memory. An allocate(64) is a
// posix_memalign, whose cost depends on the state of the heap (70-120 ns
// here): a variant that left or found a fragmented heap measured tens of
// ns more with no code of its own on the path, hence a consolidated heap
// (malloc_trim) before each loop and the variants in a random order.
#include <c10/core/CPUAllocator.h>
#include <malloc.h>
#include <torch/csrc/autograd/profiler_legacy.h>
#include <torch/torch.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "neuronprof/torch.h"
#include "src/collectors/collector.h"
#include "src/session/capture_session.h"

namespace {

namespace legacy = torch::autograd::profiler;
using torch::profiler::impl::ProfilerConfig;
using torch::profiler::impl::ProfilerState;

enum class Loop { kTensor, kAllocator };

// Thread CPU time: on a shared 2-core VM a wall clock also counts the time
// the thread waits for a core, which swamps differences of tens of ns.
double ThreadCpuNs() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) * 1e9 + static_cast<double>(now.tv_nsec);
}

double NsPerIteration(Loop loop, int iterations) {
  c10::Allocator* allocator = c10::GetCPUAllocator();
  malloc_trim(0);  // Each variant's loop starts from a consolidated heap.
  const double start = ThreadCpuNs();
  for (int i = 0; i < iterations; ++i) {
    if (loop == Loop::kTensor) {
      auto tensor = torch::empty({16});
    } else {
      c10::DataPtr block = allocator->allocate(64);  // Freed at scope end.
    }
  }
  return (ThreadCpuNs() - start) / iterations;
}

double UnderNeuronprof(Loop loop, bool memory, int iterations) {
  neuronprof::TorchOperatorOptions torch_options;
  torch_options.record_shapes = false;
  torch_options.profile_memory = memory;
  if (!neuronprof::EnableTorchOperators(torch_options).ok()) std::abort();
  neuronprof::collectors::CollectorOptions options;
  options.operators = true;
  options.max_buffer_bytes = uint64_t{1} << 30;
  auto session = neuronprof::session::CaptureSession::Start(options);
  if (!session.ok()) std::abort();
  const double ns = NsPerIteration(loop, iterations);
  auto result = (*session)->Stop();
  if (!result.ok() || result->stats.dropped != 0) std::abort();
  auto after = torch::empty({16});  // Gives libtorch's profiler slot back.
  return ns;
}

double UnderLegacy(Loop loop, bool memory, int iterations) {
  legacy::enableProfilerLegacy(ProfilerConfig(ProfilerState::CPU, false, memory));
  const double ns = NsPerIteration(loop, iterations);
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
    if (std::strcmp(argv[i], "--rounds") == 0)
      rounds = std::atoi(argv[i + 1]);
    else if (std::strcmp(argv[i], "--iterations") == 0)
      iterations = std::atoi(argv[i + 1]);
    else if (std::strcmp(argv[i], "--only") == 0)
      only = std::atoi(argv[i + 1]);
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
  // Five variants per loop, in this order in both tables.
  auto variants_of = [&](Loop loop) {
    return std::vector<Variant>{
        {"no profiler", [=] { return NsPerIteration(loop, iterations); }, {}},
        {"neuronprof kOperator, profile_memory=false",
         [=] { return UnderNeuronprof(loop, false, iterations); },
         {}},
        {"neuronprof kOperator, profile_memory=true",
         [=] { return UnderNeuronprof(loop, true, iterations); },
         {}},
        {"libtorch legacy profiler", [=] { return UnderLegacy(loop, false, iterations); }, {}},
        {"libtorch legacy profiler, profile_memory",
         [=] { return UnderLegacy(loop, true, iterations); },
         {}},
    };
  };
  std::vector<Variant> variants = variants_of(Loop::kTensor);
  for (Variant& variant : variants_of(Loop::kAllocator)) variants.push_back(std::move(variant));
  NsPerIteration(Loop::kTensor, iterations);  // Warm up the allocator and the dispatcher.
  if (only >= 0 && only < static_cast<int>(variants.size())) {
    for (int round = 0; round < rounds; ++round) {
      std::printf("%s: %.1f ns/iter\n", variants[only].name, variants[only].run());
    }
    return 0;
  }
  std::vector<size_t> order(variants.size());
  std::iota(order.begin(), order.end(), 0);
  std::mt19937 random(1);  // Fixed: the same orders every run.
  for (int round = 0; round < rounds; ++round) {
    std::shuffle(order.begin(), order.end(), random);
    for (size_t i : order) variants[i].ns.push_back(variants[i].run());
  }
  const char* titles[] = {"torch::empty({16}) + free", "CPU allocator: allocate(64) + free"};
  for (int table = 0; table < 2; ++table) {
    std::printf("%-45s %12s\n", titles[table], "ns/iter");
    std::vector<double> medians;
    for (int i = 0; i < 5; ++i) {
      const Variant& variant = variants[table * 5 + i];
      medians.push_back(Median(variant.ns));
      std::printf("  %-43s %12.1f\n", variant.name, medians.back());
    }
    const double ours = (medians[2] - medians[1]) / 2;
    const double theirs = (medians[4] - medians[3]) / 2;
    std::printf(
        "per recorded allocation event: neuronprof %.1f ns, libtorch legacy %.1f ns "
        "(%.1fx)\n",
        ours, theirs, ours > 0 ? theirs / ours : 0.0);
    if (table == 1) {
      std::printf(
          "an allocation in a capture without memory profiling: %+.1f ns against no "
          "profiler\n",
          medians[1] - medians[0]);
    }
    std::printf("\n");
  }
  std::printf(
      "thread CPU ns, medians of %d rounds (variants in random order), %d iterations "
      "each\n",
      rounds, iterations);
  return 0;
}
