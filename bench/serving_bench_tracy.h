// Tracy's zones as the peer of bench/serving_bench.cc (built only with
// -DNEURONPROF_TRACY_DIR, see bench/CMakeLists.txt): the same loops as the
// marker variants, thread CPU ns per iteration.
#ifndef NEURONPROF_BENCH_SERVING_BENCH_TRACY_H_
#define NEURONPROF_BENCH_SERVING_BENCH_TRACY_H_

namespace serving_bench {
namespace tracy_peer {
double Zone(int n);           // ZoneScopedN("zone")
double ZoneWithValue(int n);      // ... + ZoneValue(i)
double ZoneWithValueText(int n);  // ... + ZoneValue(i) + ZoneText("x", 1)
}  // namespace tracy_peer
}  // namespace serving_bench

#endif  // NEURONPROF_BENCH_SERVING_BENCH_TRACY_H_
