// Tracy's zones for bench/serving_bench.cc (see serving_bench_tracy.h).
// Tracy runs in its default mode (TRACY_ENABLE, not on demand): with no
// viewer connected it still queues every zone, as a capture records.
#include "bench/serving_bench_tracy.h"

#include <tracy/Tracy.hpp>

#include "bench/serving_bench_loops.h"

namespace serving_bench {
namespace tracy_peer {

double Zone(int n) {
  return PerIteration(n, [](int) { ZoneScopedN("zone"); });
}
double ZoneWithValue(int n) {
  return PerIteration(n, [](int i) {
    ZoneScopedN("zone");
    ZoneValue(static_cast<uint64_t>(i));
  });
}
double ZoneWithValueText(int n) {
  return PerIteration(n, [](int i) {
    ZoneScopedN("zone");
    ZoneValue(static_cast<uint64_t>(i));
    ZoneText("x", 1);
  });
}

}  // namespace tracy_peer
}  // namespace serving_bench
