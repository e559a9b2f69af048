// Marker loops built into their own shared object (see linking_bench.cc).
#ifndef NEURONPROF_BENCH_LINKING_BENCH_PLUGIN_H_
#define NEURONPROF_BENCH_LINKING_BENCH_PLUGIN_H_

#include <benchmark/benchmark.h>

__attribute__((visibility("default"))) void PluginScopeMacroLiteral(benchmark::State& state);
__attribute__((visibility("default"))) void PluginCopiedShortName(benchmark::State& state);

#endif  // NEURONPROF_BENCH_LINKING_BENCH_PLUGIN_H_
