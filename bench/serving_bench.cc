// Cost of the serving markers (neuronprof/trace_events.h) beside the floor
// (two raw tick reads) and a plain NEURONPROF_SCOPE, in one run: every
// variant once per round, rounds interleaved, medians of thread CPU ns.
//
//   neuronprof_serving_bench [--rounds R] [--iterations N] [--check 1]
//
// --check 1 (the ctest `serving_bench_ratios`, label perf): only the
// variants that have a goal, and exit 1 when one's median exceeds three
// times its goal (a ratio to the floor measured in the same run), so that
// only a real regression fails, not a loaded machine.
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
  int rounds = 7, iterations = 1000000, check = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--rounds") == 0)
      rounds = std::atoi(argv[i + 1]);
    else if (std::strcmp(argv[i], "--iterations") == 0)
      iterations = std::atoi(argv[i + 1]);
    else if (std::strcmp(argv[i], "--check") == 0)
      check = std::atoi(argv[i + 1]);
  }
  if (rounds <= 0 || iterations <= 0 || argc % 2 == 0) {
    std::fprintf(stderr, "usage: %s [--rounds R] [--iterations N] [--check 1]\n", argv[0]);
    return 2;
  }
  core::InitTickSource();  // The floor reads the clock the markers use.
  const int n = iterations;
  struct Variant {
    const char* name;
    std::function<double()> run;
    double goal;  // x floor; 0: none.
    std::vector<double> ns = {};
  };
  // The floor first and NEURONPROF_SCOPE second: the columns divide by them.
  std::vector<Variant> variants = {
      {"floor: 2 x NowTicks()", [=] { return FloorLoop(n); }, 0},
      {"NEURONPROF_SCOPE(\"literal\")", [=] { return Recorded(ScopeLoop, n); }, 0},
      {"ScopedTrace(\"copied\")", [=] { return Recorded(CopiedScopeLoop, n); }, 0},
      {"NEURONPROF_SCOPE_STACK(\"literal\")", [=] { return Recorded(StackScopeLoop, n); }, 0},
      {"ScopedTrace + Arg(int)", [=] { return Recorded(ArgIntLoop, n); }, 1.3},
      {"ScopedTrace + Arg(int), Arg(text)", [=] { return Recorded(ArgIntTextLoop, n); }, 2},
      {"ScopedTrace {{int}, {text}} list", [=] { return Recorded(InitListIntTextLoop, n); }, 0},
      {"StepTrace(name, step)", [=] { return Recorded(StepLoop, n); }, 1.5},
      {"TraceProducer (new id)", [=] { return Recorded(ProducerLoop, n); }, 1.5},
      {"TraceConsumer", [=] { return Recorded(ConsumerLoop, n); }, 1.5},
      {"TraceBatchConsumer (8 ids)", [=] { return Recorded(BatchConsumerLoop, n); }, 0},
      {"TraceCounter (int)", [=] { return Recorded(CounterLoop, n); }, 1},
      {"TraceCounter (double)", [=] { return Recorded(CounterDoubleLoop, n); }, 1},
      {"AsyncTrace begin + End()", [=] { return Recorded(AsyncLoop, n); }, 2},
      {"TraceInstant (no args)", [=] { return Recorded(InstantLoop, n); }, 0},
      {"TraceProducer + Arg(int)", [=] { return Recorded(ProducerArgLoop, n); }, 0},
      {"TraceProducer {{int}} list", [=] { return Recorded(ProducerListLoop, n); }, 0},
      {"TraceConsumer + Arg(int)", [=] { return Recorded(ConsumerArgLoop, n); }, 0},
      {"TraceConsumer {{int}} list", [=] { return Recorded(ConsumerListLoop, n); }, 0},
      {"TraceInstant + Arg(int)", [=] { return Recorded(InstantArgLoop, n); }, 0},
      {"AsyncTrace begin + End(Arg(int))", [=] { return Recorded(AsyncArgLoop, n); }, 0},
      {"TraceInstant {{int}} list", [=] { return Recorded(InstantListLoop, n); }, 0},
      {"disabled NEURONPROF_SCOPE", [=] { return ScopeLoop(n); }, 0},
      {"disabled ScopedTrace(\"copied\")", [=] { return CopiedScopeLoop(n); }, 0},
      {"disabled ScopedTrace + 2 Args", [=] { return ArgIntTextLoop(n); }, 0},
      {"disabled TraceProducer", [=] { return ProducerLoop(n); }, 0},
      {"disabled TraceConsumer", [=] { return ConsumerLoop(n); }, 0},
      {"disabled TraceBatchConsumer", [=] { return BatchConsumerLoop(n); }, 0},
      {"disabled TraceCounter", [=] { return CounterLoop(n); }, 0},
      {"disabled AsyncTrace", [=] { return AsyncLoop(n); }, 0},
      {"disabled TraceInstant", [=] { return InstantLoop(n); }, 0},
      {"compiled out NEURONPROF_SCOPE", [=] { return compiled_out::Scope(n); }, 0},
      {"compiled out ScopedTrace", [=] { return compiled_out::CopiedScope(n); }, 0},
      {"compiled out ScopedTrace + 2 Args", [=] { return compiled_out::ArgIntText(n); }, 0},
      {"compiled out TraceProducer", [=] { return compiled_out::Producer(n); }, 0},
      {"compiled out TraceConsumer", [=] { return compiled_out::Consumer(n); }, 0},
      {"compiled out TraceBatchConsumer", [=] { return compiled_out::BatchConsumer(n); }, 0},
      {"compiled out TraceCounter", [=] { return compiled_out::Counter(n); }, 0},
      {"compiled out AsyncTrace", [=] { return compiled_out::Async(n); }, 0},
      {"compiled out TraceInstant", [=] { return compiled_out::Instant(n); }, 0},
  };
#ifdef NEURONPROF_BENCH_TRACY  // -DNEURONPROF_TRACY_DIR=<tracy source tree>
  namespace tl = tracy_loops;
  variants.push_back({"Tracy ZoneScopedN", [=] { return tl::Zone(n); }, 0});
  variants.push_back(
      {"Tracy ZoneScopedNS (call stack, depth 32)", [=] { return tl::ZoneWithStack(n); }, 0});
  variants.push_back({"Tracy zone + ZoneValue(id)", [=] { return tl::ZoneWithValue(n); }, 0});
  variants.push_back({"Tracy zone + ZoneValue + ZoneText", [=] { return tl::ZoneWithText(n); }, 0});
  variants.push_back({"Tracy TracyPlot (int64)", [=] { return tl::Plot(n); }, 0});
  variants.push_back({"Tracy TracyPlot (double)", [=] { return tl::PlotDouble(n); }, 0});
  variants.push_back({"Tracy TracyMessageL", [=] { return tl::Message(n); }, 0});
#endif
  if (check != 0) {
    std::vector<Variant> kept(variants.begin(), variants.begin() + 2);
    for (size_t i = 2; i < variants.size(); ++i) {
      if (variants[i].goal > 0) kept.push_back(variants[i]);
    }
    variants.swap(kept);
  }
  for (Variant& variant : variants) variant.run();  // Warm up (pages, caches).
  for (int round = 0; round < rounds; ++round) {
    for (Variant& variant : variants) variant.ns.push_back(variant.run());
  }
  const double floor = Median(variants[0].ns);
  const double scope = Median(variants[1].ns);
  std::printf("%-36s %10s %9s %9s %6s\n", "thread CPU ns per marker", "median", "x floor",
              "x SCOPE", "goal");
  int failed = 0;
  for (const Variant& variant : variants) {
    const double median = Median(variant.ns);
    const double ratio = median / floor;
    std::printf("%-36s %10.2f %9.2f %9.2f", variant.name, median, ratio, median / scope);
    if (variant.goal > 0) std::printf(" %6.1f", variant.goal);
    // Three times the goal: far above noise, well below a lost fast path.
    if (check != 0 && variant.goal > 0 && ratio > 3 * variant.goal) {
      std::printf("  REGRESSION: above %.1fx the floor", 3 * variant.goal);
      ++failed;
    }
    std::printf("\n");
  }
  std::printf(
      "medians of %d interleaved rounds of %d iterations; tick source: %s; "
      "events dropped: %llu\n",
      rounds, iterations, core::TickSourceDescription().c_str(),
      static_cast<unsigned long long>(g_dropped));
  return failed == 0 ? 0 : 1;
}
