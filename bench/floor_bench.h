// The floor every marker benchmark is compared with: two raw tick reads,
// the least a marker that timestamps its start and end can do. Each bench
// program registers it beside its own variants.
#ifndef NEURONPROF_BENCH_FLOOR_BENCH_H_
#define NEURONPROF_BENCH_FLOOR_BENCH_H_

#include <benchmark/benchmark.h>

#include <cstdint>

#include "neuronprof/internal/recorder.h"

inline void BM_Floor_TwoNowTicks(benchmark::State& state) {
  for (auto _ : state) {
    uint64_t a = neuronprof::internal::NowTicks();
    uint64_t b = neuronprof::internal::NowTicks();
    benchmark::DoNotOptimize(a);
    benchmark::DoNotOptimize(b);
  }
}

#endif  // NEURONPROF_BENCH_FLOOR_BENCH_H_
