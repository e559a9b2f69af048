// A count of the inner-loop steps the readers take (events visited, stats
// compared, intervals merged, stack entries walked), per thread, so tests
// can bound the work a crafted capture causes by counting operations
// instead of timing them (tests/analysis/report/linear_work_test.cc). Costs one
// thread-local add where it is counted.
#ifndef NEURONPROF_SRC_XPLANE_WORK_COUNT_H_
#define NEURONPROF_SRC_XPLANE_WORK_COUNT_H_

#include <cstdint>

namespace neuronprof {
namespace xplane {

inline uint64_t& WorkCounter() {
  static thread_local uint64_t count = 0;
  return count;
}
inline void CountWork(uint64_t steps = 1) { WorkCounter() += steps; }

// The steps counted on this thread since the last reset.
inline uint64_t WorkCount() { return WorkCounter(); }
inline void ResetWorkCount() { WorkCounter() = 0; }

}  // namespace xplane
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_XPLANE_WORK_COUNT_H_
