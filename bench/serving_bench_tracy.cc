// The Tracy loops of bench/serving_bench_tracy.h, built with TRACY_ENABLE.
#include "bench/serving_bench_tracy.h"

#include <cstdint>

#include "bench/serving_bench_loops.h"
#include "tracy/Tracy.hpp"

namespace serving_bench {
namespace tracy_loops {

double Zone(int n) {
  return PerIteration(n, [](int) { ZoneScopedN("literal_marker"); });
}
// Tracy's default unwinder on glibc: backtrace(), into a tracy_malloc'd
// array per zone.
double ZoneWithStack(int n) {
  return PerIteration(n, [](int) { ZoneScopedNS("stack_marker", 32); });
}
double ZoneWithValue(int n) {
  return PerIteration(n, [](int i) {
    ZoneScopedN("dequeue");
    ZoneValue(static_cast<uint64_t>(i) + 1);
  });
}
double ZoneWithText(int n) {
  return PerIteration(n, [](int i) {
    ZoneScopedN("zone");
    ZoneValue(static_cast<uint64_t>(i));
    ZoneText("x", 1);
  });
}
double Plot(int n) {
  return PerIteration(n, [](int i) { TracyPlot("queue_depth", static_cast<int64_t>(i)); });
}
double PlotDouble(int n) {
  return PerIteration(n, [](int i) { TracyPlot("load", i * 0.5); });
}
double Message(int n) {
  return PerIteration(n, [](int) { TracyMessageL("cache_miss"); });
}

}  // namespace tracy_loops
}  // namespace serving_bench
