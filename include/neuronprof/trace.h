// neuronprof markers: scoped traces and step markers.
//
// Cost: when no capture is running (or the marker's level is above the
// capture's host_tracer_level) a marker is one relaxed atomic load and a
// branch. During a capture a marker with a string-literal name reads the
// clock twice and writes one 32-byte record into its thread's buffer: no
// lock, no allocation, no syscall. Dynamic names and metadata are copied into
// the thread's arena (a bounded memcpy). The first marker of a thread in a
// capture takes a slower path once (it claims a buffer block and reads the
// thread's name). When the capture's buffer is full, events are dropped and
// counted, never blocking the caller.
#ifndef NEURONPROF_TRACE_H_
#define NEURONPROF_TRACE_H_

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string_view>
#include <type_traits>

#include "neuronprof/internal/recorder.h"

namespace neuronprof {

// Host tracer levels, as in TensorFlow's ProfileOptions.host_tracer_level.
enum TraceLevel : uint32_t {
  kTraceCritical = 1,  // User markers (the default for ScopedTrace).
  kTraceInfo = 2,      // Framework-level detail.
  kTraceVerbose = 3,   // Everything.
};

// One key=value pair attached to a marker; shown as a stat on the event.
// Keys and string values are copied when the marker is recorded.
class TraceArg {
 public:
  enum class Kind : uint8_t { kInt, kUint, kDouble, kString };

  template <typename T,
            typename std::enable_if<std::is_integral<T>::value &&
                                        !std::is_same<T, bool>::value,
                                    int>::type = 0>
  TraceArg(std::string_view key, T value)
      : key_(key),
        kind_(std::is_signed<T>::value ? Kind::kInt : Kind::kUint),
        int_value_(static_cast<int64_t>(value)) {}
  TraceArg(std::string_view key, bool value)
      : key_(key), kind_(Kind::kInt), int_value_(value ? 1 : 0) {}
  TraceArg(std::string_view key, double value)
      : key_(key), kind_(Kind::kDouble), double_value_(value) {}
  TraceArg(std::string_view key, std::string_view value)
      : key_(key), kind_(Kind::kString), string_value_(value) {}
  TraceArg(std::string_view key, const char* value)
      : TraceArg(key, std::string_view(value)) {}

  std::string_view key() const { return key_; }
  Kind kind() const { return kind_; }
  int64_t int_value() const { return int_value_; }  // kInt; kUint bit pattern.
  double double_value() const { return double_value_; }
  std::string_view string_value() const { return string_value_; }

 private:
  std::string_view key_;
  Kind kind_;
  int64_t int_value_ = 0;
  double double_value_ = 0.0;
  std::string_view string_value_;
};

// True when a marker of `level` would be recorded now.
inline bool TracingEnabled(uint32_t level = kTraceCritical) {
  return (internal::g_capture_state.load(std::memory_order_relaxed) &
          internal::kLevelMask) >= level;
}

// RAII marker: the twin of torch_xla's `xp.Trace(name)` and TSL's TraceMe.
// The event spans the object's lifetime and nests under enclosing markers of
// the same thread.
//
//   neuronprof::ScopedTrace t("model_build");                 // literal
//   neuronprof::ScopedTrace t(layer_name);                    // copied
//   neuronprof::ScopedTrace t("fwd", {{"batch", 32}, {"dtype", "bf16"}});
//
// A string literal (or any char array with static storage) is stored by
// pointer; everything else, and any marker with arguments, is copied.
class ScopedTrace {
 public:
  template <size_t N>
  explicit ScopedTrace(const char (&name)[N], uint32_t level = kTraceCritical) {
    state_ = internal::g_capture_state.load(std::memory_order_relaxed);
    if ((state_ & internal::kLevelMask) < level) {
      state_ = 0;
      return;
    }
    name_ = name;
    name_length_ = static_cast<uint32_t>(N - 1);
    start_ticks_ = internal::NowTicks();
  }

  explicit ScopedTrace(std::string_view name, uint32_t level = kTraceCritical) {
    Begin(name, nullptr, 0, level);
  }

  ScopedTrace(std::string_view name, std::initializer_list<TraceArg> args,
              uint32_t level = kTraceCritical) {
    Begin(name, args.begin(), args.size(), level);
  }

  ~ScopedTrace() {
    if (state_ == 0) return;
    internal::RecordEvent(state_, name_, name_length_, args_offset_,
                          start_ticks_, internal::NowTicks());
  }

  ScopedTrace(const ScopedTrace&) = delete;
  ScopedTrace& operator=(const ScopedTrace&) = delete;

 private:
  friend class StepTrace;
  ScopedTrace() = default;

  void Begin(std::string_view name, const TraceArg* args, size_t num_args,
             uint32_t level) {
    state_ = internal::g_capture_state.load(std::memory_order_relaxed);
    if ((state_ & internal::kLevelMask) < level) {
      state_ = 0;
      return;
    }
    name_ = internal::CopyName(state_, name, args, num_args, &name_length_,
                               &args_offset_);
    if (name_ == nullptr) {
      state_ = 0;  // Capture ended or buffer full (the drop is counted).
      return;
    }
    start_ticks_ = internal::NowTicks();
  }

  uint32_t state_ = 0;
  uint32_t name_length_ = 0;
  uint32_t args_offset_ = 0;
  const char* name_ = nullptr;
  uint64_t start_ticks_ = 0;
};

// Marks one training or inference step: the twin of `xp.StepTrace(name,
// step_num=n)`. It records stats step_num=n and _r=1 (a root). xprof's
// overview page counts one step per StepTrace that has markers nested in it
// and groups those markers into the step. Do not nest StepTraces: an
// enclosing one swallows the inner steps.
class StepTrace {
 public:
  StepTrace(std::string_view name, int64_t step_num,
            std::initializer_list<TraceArg> extra_args = {});
  ~StepTrace() = default;

  StepTrace(const StepTrace&) = delete;
  StepTrace& operator=(const StepTrace&) = delete;

 private:
  ScopedTrace trace_;
};

// Names the calling thread's line in captures (default: the OS thread name).
void SetCurrentThreadName(std::string_view name);

}  // namespace neuronprof

#define NEURONPROF_CONCAT_INNER_(a, b) a##b
#define NEURONPROF_CONCAT_(a, b) NEURONPROF_CONCAT_INNER_(a, b)

// Scoped marker with a unique variable name:
//   NEURONPROF_SCOPE("optimizer_step");
//   NEURONPROF_SCOPE("fwd", {{"layer", i}});
#define NEURONPROF_SCOPE(...) \
  ::neuronprof::ScopedTrace NEURONPROF_CONCAT_(neuronprof_scope_, __LINE__)(__VA_ARGS__)

// Evaluates `expr` (e.g. an expensive name or argument) only while a capture
// records markers of `level`:
//   NEURONPROF_IF_TRACING(neuronprof::kTraceInfo) { ... }
#define NEURONPROF_IF_TRACING(level) if (::neuronprof::TracingEnabled(level))

#endif  // NEURONPROF_TRACE_H_
