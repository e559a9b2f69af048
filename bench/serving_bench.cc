// Cost of the serving markers (neuronprof/trace_events.h) beside the floor
// (two raw tick reads) and a plain NEURONPROF_SCOPE, in one run: every
// variant once per round, rounds interleaved, medians of thread CPU ns.
//
//   neuronprof_serving_bench [--rounds R] [--iterations N]
//
// Recorded: each variant's loop runs inside a capture of its own (started
// before and stopped after the loop, untimed), so every run starts from an
// empty buffer; drops are reported (there should be none). Disabled: the
// same loops with no capture running. Compiled out: the loops built with
// NEURONPROF_DISABLE (bench/serving_bench_disabled.cc). Tracy's
// equivalents, measured in the same rounds, when the build names a Tracy
// source tree (cmake -DNEURONPROF_TRACY_DIR=DIR; bench/serving_bench_tracy.h).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "bench/serving_bench_loops.h"
#ifdef NEURONPROF_BENCH_TRACY
#include "bench/serving_bench_tracy.h"
#endif
#include "neuronprof/internal/recorder.h"
#include "src/core/clock.h"
#include "src/core/recorder.h"

namespace {

using namespace serving_bench;  // NOLINT: the loops.
namespace core = neuronprof::core;

constexpr uint64_t kCaptureBytes = uint64_t{1} << 30;

double FloorLoop(int n) {
  return PerIteration(n, [](int) {
    uint64_t a = neuronprof::internal::NowTicks();
    uint64_t b = neuronprof::internal::NowTicks();
    asm volatile("" : : "r"(a), "r"(b));
  });
}

uint64_t g_dropped = 0;

// `loop` inside a capture of its own.
double Recorded(double (*loop)(int), int n) {
  if (!core::StartRecording(2, kCaptureBytes).ok()) {
    std::fprintf(stderr, "StartRecording failed\n");
    std::exit(1);
  }
  const double ns = loop(n);
  auto capture = core::StopRecording();
  if (capture.ok()) g_dropped += capture->dropped + capture->too_large;
  return ns;
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 7, iterations = 1000000;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--rounds") == 0) rounds = std::atoi(argv[i + 1]);
    else if (std::strcmp(argv[i], "--iterations") == 0) iterations = std::atoi(argv[i + 1]);
  }
  if (rounds <= 0 || iterations <= 0 || argc % 2 == 0) {
    std::fprintf(stderr, "usage: %s [--rounds R] [--iterations N]\n", argv[0]);
    return 2;
  }
  core::InitTickSource();  // The floor reads the clock the markers use.
  const int n = iterations;
  struct Variant {
    const char* name;
    std::function<double()> run;
    std::vector<double> ns;
  };
  std::vector<Variant> variants = {
      {"floor: 2 x NowTicks()", [=] { return FloorLoop(n); }, {}},
      {"NEURONPROF_SCOPE(\"literal\")", [=] { return Recorded(ScopeLoop, n); }, {}},
      {"ScopedTrace(\"copied\")", [=] { return Recorded(CopiedScopeLoop, n); }, {}},
      {"TraceProducer (new id)", [=] { return Recorded(ProducerLoop, n); }, {}},
      {"TraceConsumer", [=] { return Recorded(ConsumerLoop, n); }, {}},
      {"TraceBatchConsumer (8 ids)", [=] { return Recorded(BatchConsumerLoop, n); }, {}},
      {"TraceCounter (int)", [=] { return Recorded(CounterLoop, n); }, {}},
      {"TraceCounter (double)", [=] { return Recorded(CounterDoubleLoop, n); }, {}},
      {"AsyncTrace begin + End()", [=] { return Recorded(AsyncLoop, n); }, {}},
      {"TraceInstant (no args)", [=] { return Recorded(InstantLoop, n); }, {}},
      {"disabled NEURONPROF_SCOPE", [=] { return ScopeLoop(n); }, {}},
      {"disabled ScopedTrace(\"copied\")", [=] { return CopiedScopeLoop(n); }, {}},
      {"disabled TraceProducer", [=] { return ProducerLoop(n); }, {}},
      {"disabled TraceConsumer", [=] { return ConsumerLoop(n); }, {}},
      {"disabled TraceBatchConsumer", [=] { return BatchConsumerLoop(n); }, {}},
      {"disabled TraceCounter", [=] { return CounterLoop(n); }, {}},
      {"disabled AsyncTrace", [=] { return AsyncLoop(n); }, {}},
      {"disabled TraceInstant", [=] { return InstantLoop(n); }, {}},
      {"compiled out NEURONPROF_SCOPE", [=] { return compiled_out::Scope(n); }, {}},
      {"compiled out ScopedTrace", [=] { return compiled_out::CopiedScope(n); }, {}},
      {"compiled out TraceProducer", [=] { return compiled_out::Producer(n); }, {}},
      {"compiled out TraceConsumer", [=] { return compiled_out::Consumer(n); }, {}},
      {"compiled out TraceBatchConsumer", [=] { return compiled_out::BatchConsumer(n); }, {}},
      {"compiled out TraceCounter", [=] { return compiled_out::Counter(n); }, {}},
      {"compiled out AsyncTrace", [=] { return compiled_out::Async(n); }, {}},
      {"compiled out TraceInstant", [=] { return compiled_out::Instant(n); }, {}},
  };
#ifdef NEURONPROF_BENCH_TRACY  // -DNEURONPROF_TRACY_DIR=<tracy source tree>
  namespace tl = tracy_loops;
  variants.push_back({"Tracy ZoneScopedN", [=] { return tl::Zone(n); }, {}});
  variants.push_back({"Tracy zone + ZoneValue(id)", [=] { return tl::ZoneWithValue(n); }, {}});
  variants.push_back({"Tracy TracyPlot (int64)", [=] { return tl::Plot(n); }, {}});
  variants.push_back({"Tracy TracyPlot (double)", [=] { return tl::PlotDouble(n); }, {}});
  variants.push_back({"Tracy TracyMessageL", [=] { return tl::Message(n); }, {}});
#endif
  for (Variant& variant : variants) variant.run();  // Warm up (pages, caches).
  for (int round = 0; round < rounds; ++round) {
    for (Variant& variant : variants) variant.ns.push_back(variant.run());
  }
  const double floor = Median(variants[0].ns);
  const double scope = Median(variants[1].ns);
  std::printf("%-32s %10s %9s %9s\n", "thread CPU ns per marker", "median", "x floor",
              "x SCOPE");
  for (const Variant& variant : variants) {
    const double median = Median(variant.ns);
    std::printf("%-32s %10.2f %9.2f %9.2f\n", variant.name, median, median / floor,
                median / scope);
  }
  std::printf("medians of %d interleaved rounds of %d iterations; tick source: %s; "
              "events dropped: %llu\n",
              rounds, iterations, core::TickSourceDescription().c_str(),
              static_cast<unsigned long long>(g_dropped));
  return 0;
}
