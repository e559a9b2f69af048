// The marker loops of bench/linking_bench.cc, compiled into a shared object
// of their own (the shape of a backend or a self-instrumented library): its
// position-independent code reaches the capture state in
// libneuronprof_markers through the GOT and initial-exec TLS.
#include "bench/linking_bench_plugin.h"

#include <cstdio>

#include "neuronprof/trace.h"

void PluginScopeMacroLiteral(benchmark::State& state) {
  for (auto _ : state) {
    NEURONPROF_SCOPE("literal_marker");
  }
}

void PluginCopiedShortName(benchmark::State& state) {
  char name[32];
  std::snprintf(name, sizeof(name), "layer_%d", 17);
  for (auto _ : state) {
    neuronprof::ScopedTrace trace(name);
  }
}
