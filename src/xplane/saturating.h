// The one set of helpers for arithmetic on integers read from untrusted
// files and requests: a crafted .xplane.pb can hold any int64, and signed
// overflow (a sum, a product, a negation, end - start) is undefined
// behaviour. Times and sizes clamp to the int64 range (Saturating*);
// formulas whose result is meaningless once clamped (FLOPs, bytes of an
// operator) use Checked, which says whether any step overflowed.
// In namespace neuronprof so that analysis, export, the multi-rank report
// and the CLI (every module above xplane) use the same ones.
#ifndef NEURONPROF_SRC_XPLANE_SATURATING_H_
#define NEURONPROF_SRC_XPLANE_SATURATING_H_

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace neuronprof {

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

// -a; -INT64_MIN clamps to INT64_MAX.
inline int64_t SaturatingNeg(int64_t a) { return SaturatingSub(0, a); }

// An int64 formula that remembers overflow instead of wrapping: with one
// operand Checked, `Checked(2) * m * n + k` is computed step by step and
// ok() is false once any step overflowed (value() is then meaningless).
class Checked {
 public:
  constexpr Checked(int64_t value = 0) : value_(value) {}  // NOLINT: implicit by design
  constexpr bool ok() const { return ok_; }
  constexpr int64_t value() const { return value_; }

  friend Checked operator+(Checked a, Checked b) {
    return a.Then(b, __builtin_add_overflow(a.value_, b.value_, &a.value_));
  }
  friend Checked operator-(Checked a, Checked b) {
    return a.Then(b, __builtin_sub_overflow(a.value_, b.value_, &a.value_));
  }
  friend Checked operator*(Checked a, Checked b) {
    return a.Then(b, __builtin_mul_overflow(a.value_, b.value_, &a.value_));
  }
  Checked& operator+=(Checked b) { return *this = *this + b; }
  Checked& operator*=(Checked b) { return *this = *this * b; }

 private:
  Checked Then(Checked b, bool overflowed) {
    ok_ = ok_ && b.ok_ && !overflowed;
    return *this;
  }

  int64_t value_;
  bool ok_ = true;
};

// `ms` milliseconds after `now`, or time_point::max() (never) when that is
// past what the clock can count (~292 years): a chrono conversion of a huge
// count overflows into the past.
inline std::chrono::steady_clock::time_point SaturatingTimeAfter(
    std::chrono::steady_clock::time_point now, int64_t ms) {
  using Clock = std::chrono::steady_clock;
  static_assert(std::is_same<Clock::rep, int64_t>::value, "int64 ticks");
  const int64_t ticks_per_ms =
      std::chrono::duration_cast<Clock::duration>(std::chrono::milliseconds(1)).count();
  const int64_t ticks = SaturatingAdd(now.time_since_epoch().count(),
                                      SaturatingMul(std::max<int64_t>(ms, 0), ticks_per_ms));
  return Clock::time_point(Clock::duration(ticks));
}

// An XLine's timestamp_ns as picoseconds, clamped.
inline int64_t LineStartPs(int64_t timestamp_ns) { return SaturatingMul(timestamp_ns, 1000); }

// True when an event's start (line start + offset) and end (+ duration)
// in picoseconds fit int64 without clamping.
inline bool EventTimesFit(int64_t line_timestamp_ns, int64_t offset_ps, int64_t duration_ps) {
  const Checked end = Checked(line_timestamp_ns) * 1000 + offset_ps + duration_ps;
  return end.ok();
}

}  // namespace neuronprof

#endif  // NEURONPROF_SRC_XPLANE_SATURATING_H_
