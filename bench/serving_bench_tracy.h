// Tracy's equivalents of the serving markers, for neuronprof_serving_bench's
// Tracy rows (built when NEURONPROF_TRACY_DIR names a Tracy source tree):
// a zone for a producer/consumer (Tracy has no flows: ZoneValue carries the
// id), TracyPlot for a counter, TracyMessageL for an instant. Thread CPU ns
// per iteration, as the other loops.
#ifndef NEURONPROF_BENCH_SERVING_BENCH_TRACY_H_
#define NEURONPROF_BENCH_SERVING_BENCH_TRACY_H_

namespace serving_bench {
namespace tracy_loops {

double Zone(int n);           // ZoneScopedN: NEURONPROF_SCOPE's twin
double ZoneWithStack(int n);  // ZoneScopedNS(depth 32): NEURONPROF_SCOPE_STACK's
double ZoneWithValue(int n);  // ZoneScopedN + ZoneValue(id): a consumer's
double ZoneWithText(int n);   // + ZoneValue(i) + ZoneText("x"): Arg(int), Arg(text)
double Plot(int n);           // TracyPlot(name, int64_t): TraceCounter(int)
double PlotDouble(int n);     // TracyPlot(name, double)
double Message(int n);        // TracyMessageL: TraceInstant
// Tracy keeps every event in memory until a viewer connects; this bench
// connects none, so each row's events stay queued (32 B each).

}  // namespace tracy_loops
}  // namespace serving_bench

#endif  // NEURONPROF_BENCH_SERVING_BENCH_TRACY_H_
