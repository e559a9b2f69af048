// Arithmetic on times and sizes read from untrusted files: a crafted
// .xplane.pb can hold any int64, and signed overflow is undefined
// behaviour. These clamp to the int64 range instead.
#ifndef NEURONPROF_SRC_ANALYSIS_SATURATING_H_
#define NEURONPROF_SRC_ANALYSIS_SATURATING_H_

#include <cstdint>
#include <limits>

namespace neuronprof {
namespace analysis {

inline int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t sum;
  if (!__builtin_add_overflow(a, b, &sum)) return sum;
  return b > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
}

inline int64_t SaturatingSub(int64_t a, int64_t b) {
  int64_t difference;
  if (!__builtin_sub_overflow(a, b, &difference)) return difference;
  return b < 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
}

inline int64_t SaturatingMul(int64_t a, int64_t b) {
  int64_t product;
  if (!__builtin_mul_overflow(a, b, &product)) return product;
  return (a < 0) != (b < 0) ? std::numeric_limits<int64_t>::min()
                            : std::numeric_limits<int64_t>::max();
}

// An XLine's timestamp_ns as picoseconds, clamped.
inline int64_t LineStartPs(int64_t timestamp_ns) { return SaturatingMul(timestamp_ns, 1000); }

// True when an event's start (line start + offset) and end (+ duration)
// in picoseconds fit int64 without clamping.
inline bool EventTimesFit(int64_t line_timestamp_ns, int64_t offset_ps, int64_t duration_ps) {
  int64_t line_ps, start, end;
  return !__builtin_mul_overflow(line_timestamp_ns, int64_t{1000}, &line_ps) &&
         !__builtin_add_overflow(line_ps, offset_ps, &start) &&
         !__builtin_add_overflow(start, duration_ps, &end);
}

}  // namespace analysis
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_ANALYSIS_SATURATING_H_
