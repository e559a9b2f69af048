// The serving markers compiled out (NEURONPROF_DISABLE, set for this file
// only in bench/CMakeLists.txt), for bench/serving_bench.cc: the same loops
// as its enabled ones, in a translation unit where every marker is nothing.
#include "bench/serving_bench_loops.h"

#ifndef NEURONPROF_DISABLE
#error "serving_bench_disabled.cc must be built with NEURONPROF_DISABLE"
#endif

namespace serving_bench {
namespace compiled_out {

double Scope(int n) { return ScopeLoop(n); }
double CopiedScope(int n) { return CopiedScopeLoop(n); }
double Producer(int n) { return ProducerLoop(n); }
double Consumer(int n) { return ConsumerLoop(n); }
double BatchConsumer(int n) { return BatchConsumerLoop(n); }
double Counter(int n) { return CounterLoop(n); }
double Async(int n) { return AsyncLoop(n); }
double Instant(int n) { return InstantLoop(n); }
double ArgIntText(int n) { return ArgIntTextLoop(n); }

}  // namespace compiled_out
}  // namespace serving_bench
