// neuronprof markers: scoped traces and step markers.
//
// Cost: when no capture is running (or the marker's level is above the
// capture's host_tracer_level) a marker is one relaxed atomic load and a
// branch. During a capture a marker reads the clock twice and writes one
// 32-byte record into its thread's buffer: no lock, no allocation, no
// syscall. Its name is copied into the thread's arena (a bounded memcpy),
// except for NEURONPROF_SCOPE("literal") and StaticName, which are stored by
// pointer; arguments are always copied. The first marker of a thread in a
// capture takes a slower path once (it claims a buffer block and reads the
// thread's name). When the capture's buffer is full, events are dropped and
// counted, never blocking the caller.
//
// Compiling markers out: define NEURONPROF_DISABLE for a translation unit
// (`-DNEURONPROF_DISABLE`, or CMake's
// `target_compile_definitions(app PRIVATE NEURONPROF_DISABLE)`) and every
// marker below compiles to nothing: no clock read, no capture-state load,
// no reference to a libneuronprof symbol (a target whose sources all define
// it needs only this include directory, not the library). The same source
// compiles in both modes. What still runs when disabled: the arguments of a
// ScopedTrace / StepTrace / SetCurrentThreadName call are evaluated, as for
// any function call (keep costly ones inside NEURONPROF_IF_TRACING).
// Nothing of NEURONPROF_SCOPE's arguments or NEURONPROF_IF_TRACING's level
// is evaluated, and NEURONPROF_IF_TRACING's body is dead code (it must
// still compile). Disabled and enabled translation units may share one
// program: the disabled classes live in their own inline namespace, so
// their inline code never replaces the enabled one at link time.
//
// This header and trace_events.h are the API: declarations, documentation
// and macros. The inline bodies are in internal/trace_inline.h, the
// compiled-out twins in internal/trace_disabled.h; trace.h includes one.
#ifndef NEURONPROF_TRACE_H_
#define NEURONPROF_TRACE_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string_view>
#include <type_traits>

#include "neuronprof/internal/typed_args.h"
#ifndef NEURONPROF_DISABLE
#include "neuronprof/export.h"
#include "neuronprof/internal/recorder.h"
#endif

namespace neuronprof {

// Host tracer levels, as in TensorFlow's ProfileOptions.host_tracer_level.
enum TraceLevel : uint32_t {
  kTraceCritical = 1,  // User markers (the default for ScopedTrace).
  kTraceInfo = 2,      // Framework-level detail.
  kTraceVerbose = 3,   // Everything.
};

// One key=value pair of the initializer-list argument form; shown as a stat
// on the event. Keys and string values are copied when the marker is
// recorded. Arg (below) makes the same stat, faster: prefer it.
class TraceArg {
 public:
  enum class Kind : uint8_t { kInt, kUint, kDouble, kString };

  template <typename T,
            typename std::enable_if<std::is_integral<T>::value && !std::is_same<T, bool>::value,
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
  TraceArg(std::string_view key, const char* value) : TraceArg(key, std::string_view(value)) {}

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

// A typed argument for the variadic marker forms, the fast way to attach a
// value to a marker (as Tracy's ZoneValue / ZoneText and Perfetto's debug
// annotations do):
//
//   neuronprof::ScopedTrace t("fwd", neuronprof::Arg("batch", n),
//                             neuronprof::Arg("dtype", "bf16"));
//
// The value's type is fixed when the call is compiled: the marker copies
// the key and the value raw into its thread's buffer (8 bytes for a number,
// the bytes of a text), with no formatting, no allocation and no branch on
// the type; the capture decodes them when it is built. Each becomes the
// same stat as the TraceArg of the initializer-list form: integers (bool as
// 0/1) as int64 or uint64, floating point as double, texts as strings. Keys
// and texts are copied when the marker begins and taken whole (NUL bytes
// included; a null `const char*` text is empty). Only the first argument
// of a marker is looked at by the capture to tell flows, counters and the
// like apart: its key must not be one of the reserved ones ("_pt", "_p",
// "_ct", "_c" or a key starting with byte 0x01).
template <typename T,
          typename std::enable_if<std::is_integral<T>::value && !std::is_same<T, bool>::value,
                                  int>::type = 0>
constexpr internal::NumberArg Arg(std::string_view key, T value) {
  return {key, std::is_signed<T>::value ? 'i' : 'u',
          static_cast<uint64_t>(static_cast<int64_t>(value))};
}
constexpr internal::NumberArg Arg(std::string_view key, bool value) {
  return {key, 'i', value ? uint64_t{1} : uint64_t{0}};
}
inline internal::NumberArg Arg(std::string_view key, double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return {key, 'd', bits};
}
inline internal::NumberArg Arg(std::string_view key, float value) {
  return Arg(key, static_cast<double>(value));
}
constexpr internal::TextArg Arg(std::string_view key, std::string_view text) { return {key, text}; }
constexpr internal::TextArg Arg(std::string_view key, const char* text) {
  return {key, text == nullptr ? std::string_view() : std::string_view(text)};
}

#ifndef NEURONPROF_DISABLE
// True when a marker of `level` would be recorded now. Thread-safety: any
// thread, at any time (one relaxed load).
inline bool TracingEnabled(uint32_t level = kTraceCritical);
#endif

namespace internal {
// Length of the text in a char array: up to its first NUL, as for a C
// string, but never past the array's end.
constexpr size_t BoundedLength(const char* text, size_t capacity) {
  size_t n = 0;
  while (n < capacity && text[n] != '\0') ++n;
  return n;
}
}  // namespace internal

// A marker name stored by pointer, never copied: the caller promises that
// the text outlives every capture that can record it, i.e. it has static
// storage (a string literal, or a global or static char array that is never
// rewritten). Anything else (a stack buffer, a std::string, text that
// changes) must go through the copying constructors of ScopedTrace instead,
// or events come out with whatever the memory holds when the capture ends.
//
//   static constexpr neuronprof::StaticName kForward("forward");
//   neuronprof::ScopedTrace t(kForward);   // Zero-copy.
//
// NEURONPROF_SCOPE("literal") builds one for you and accepts only literals.
class StaticName {
 public:
  template <size_t N>
  constexpr explicit StaticName(const char (&text)[N])
      : data_(text), size_(static_cast<uint32_t>(internal::BoundedLength(text, N))) {}

  constexpr const char* data() const { return data_; }
  constexpr uint32_t size() const { return size_; }

 private:
  const char* data_;
  uint32_t size_;
};

namespace internal {
// One NEURONPROF_SCOPE call site: a `static constexpr` object the macro
// makes per expansion (as Tracy's ZoneScoped does). The marker's record
// stores its address in place of the name pointer, so the file and line
// cost nothing per event; the capture reads them once per call site.
struct SourceLocation {
  StaticName name;
  const char* file;  // __FILE__, as the compiler gives it.
  uint32_t line;
};

// What NEURONPROF_SCOPE hands to ScopedTrace; not for direct use.
struct MacroName {
  const SourceLocation* site;
};
}  // namespace internal

// Asks a ScopedTrace to record its caller's frames too (Tracy's
// ZoneScopedS; NEURONPROF_SCOPE_STACK is the macro form):
//
//   neuronprof::ScopedTrace t("decode", neuronprof::kWithStack);
//
// The marker captures up to 32 return addresses when it begins (about
// 90 ns at 7 frames, see docs/PERFORMANCE.md; no lock, no allocation after
// the thread's first stack) and the
// capture symbolizes them once per distinct address when it ends: the
// event's stat "stack" holds one frame a line, innermost first,
// "function (file:line)" (file:line needs the binary's debug info, -g).
// Frames of neuronprof itself are left out. The name is copied.
struct WithStack {};
inline constexpr WithStack kWithStack{};

enum class ContextType : uint32_t;  // A flow's context kind (trace_events.h).

#ifndef NEURONPROF_DISABLE
// RAII marker: the twin of torch_xla's `xp.Trace(name)` and TSL's TraceMe.
// The event spans the object's lifetime and nests under enclosing markers of
// the same thread.
//
//   NEURONPROF_SCOPE("model_build");                           // zero-copy
//   neuronprof::ScopedTrace t(layer_name);                     // copied
//   neuronprof::ScopedTrace t("fwd", neuronprof::Arg("batch", 32),
//                             neuronprof::Arg("dtype", "bf16"));  // typed
//   neuronprof::ScopedTrace t("fwd", {{"batch", 32}, {"dtype", "bf16"}});
//
// Both argument forms record the same stats. Use the typed one (Arg), about
// a plain copied marker plus the bytes of its arguments; the initializer
// list (for a level other than kTraceCritical, or existing code) builds
// TraceArgs and encodes them out of line, about twice the cost.
//
// The event's name is always the text the caller passed at construction:
// every constructor that takes a string (a literal, a char buffer, a
// `const char*`, a std::string or string_view) copies it into the thread's
// buffer when the marker begins, so the caller may rewrite or free it
// straight away. Only a StaticName (and NEURONPROF_SCOPE with a literal,
// which makes one) is stored by pointer. A marker with arguments is always
// copied, name included. A std::string or string_view name is taken whole,
// NUL bytes included, with or without arguments (as argument keys and
// values are); a char array (a literal or a buffer) ends at its first NUL,
// as a C string does. An empty name is recorded as an empty name.
//
// A marker whose name and arguments, encoded, exceed one 64 KiB buffer block
// is not recorded; the capture counts it on its own and warns that a marker
// was too large.
//
// Thread-safety: any number of threads may record markers at once, each into
// its own thread's buffer (no lock); one ScopedTrace is a scope of the thread
// that constructs it and must be destroyed there (it cannot be moved).
class ScopedTrace {
 public:
  explicit ScopedTrace(std::string_view name, uint32_t level = kTraceCritical);
  ScopedTrace(std::string_view name, std::initializer_list<TraceArg> args,
              uint32_t level = kTraceCritical);

  // A char array (a literal or a buffer): copied, up to its first NUL and
  // never past the array's end.
  template <size_t N>
  explicit ScopedTrace(const char (&name)[N], uint32_t level = kTraceCritical);
  template <size_t N>
  ScopedTrace(const char (&name)[N], std::initializer_list<TraceArg> args,
              uint32_t level = kTraceCritical);

  // Typed arguments (see Arg): the cheapest marker with arguments. The
  // name is copied as by the forms above; the level is kTraceCritical.
  template <typename... A, internal::EnableIfTypedArgs<A...> = 0>
  [[gnu::always_inline]] ScopedTrace(std::string_view name, const A&... args);
  template <size_t N, typename... A, internal::EnableIfTypedArgs<A...> = 0>
  [[gnu::always_inline]] ScopedTrace(const char (&name)[N], const A&... args);
  template <typename... A, internal::EnableIfTypedArgs<A...> = 0>
  [[gnu::always_inline]] ScopedTrace(StaticName name, const A&... args);

  // With the caller's frames (see WithStack).
  ScopedTrace(std::string_view name, WithStack, uint32_t level = kTraceCritical);
  ScopedTrace(StaticName name, WithStack, uint32_t level = kTraceCritical);

  // Zero-copy: the record points at `name` (see StaticName).
  explicit ScopedTrace(StaticName name, uint32_t level = kTraceCritical);
  ScopedTrace(StaticName name, std::initializer_list<TraceArg> args,
              uint32_t level = kTraceCritical);

  // NEURONPROF_SCOPE's entry points: `literal` repeats the macro's first
  // argument and is not used (the macro cannot strip it portably). Without
  // arguments the record points at the call site (name, file, line): the
  // same stores as the StaticName path, only the constants differ. With
  // arguments the name is copied and the site is not recorded.
  ScopedTrace(internal::MacroName name, const char* literal, uint32_t level = kTraceCritical);
  ScopedTrace(internal::MacroName name, const char* literal, std::initializer_list<TraceArg> args,
              uint32_t level = kTraceCritical);
  template <typename... A, internal::EnableIfTypedArgs<A...> = 0>
  ScopedTrace(internal::MacroName name, const char* literal, const A&... args);

  ~ScopedTrace();

  ScopedTrace(const ScopedTrace&) = delete;
  ScopedTrace& operator=(const ScopedTrace&) = delete;

 private:
  // The markers built on this one's record (trace_events.h).
  friend class StepTrace;
  friend class TraceProducer;
  friend class TraceConsumer;
  friend class TraceBatchConsumer;
  ScopedTrace() = default;

  // The paths below are in internal/trace_inline.h.
  // Reads the capture state; false (and nothing to record) when no capture
  // records markers of `level`. Nothing else runs before this check.
  bool Admit(uint32_t level);
  // After a copy into the arena: the start tick, or (no copy: capture ended,
  // buffer full or marker too large, counted) nothing to record.
  void StartWith(const char* copy);
  // A name without arguments: the cheapest copy (a memcpy into the arena).
  void CopyPlain(std::string_view name);
  // Name plus typed arguments, stored in place (CopyNameWithTypedArgs).
  template <typename... A>
  [[gnu::always_inline]] void CopyTyped(std::string_view name, const A&... args);
  // Name plus the caller's return addresses (internal::kStackKey).
  void CopyWithStack(std::string_view name);
  // Name plus `args`, then `more_args` (StepTrace's extras), encoded.
  void CopyWithArgs(std::string_view name, const TraceArg* args, size_t num_args,
                    const TraceArg* more_args, size_t num_more_args);
  // A flow's marker: the name, the link (_pt/_p for a producer, else _ct/_c;
  // none for `id` 0), then `args` (TraceArgs, or typed; none: the typed path,
  // whose keys are constants, so their copies fold).
  void CopyWithLink(std::string_view name, bool producer, ContextType type, uint64_t id,
                    const TraceArg* args, size_t num_args);
  template <bool kProducer, typename... A>
  [[gnu::always_inline]] void CopyTypedWithLink(std::string_view name, ContextType type,
                                                uint64_t id, const A&... args);

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
// enclosing one swallows the inner steps. The name is copied (as for
// ScopedTrace); extra arguments are typed (Arg, the cheap form) or an
// initializer list of any length:
//
//   neuronprof::StepTrace step("train", n, neuronprof::Arg("batch", 32));
//
// A FlightRecorder's slow-step trigger (FlightRecorder::TriggerOnSlowStep)
// watches StepTraces by name: the constructor asks it, out of line, and a
// watched step's end reports its duration (one branch on a member for
// unwatched steps).
//
// Thread-safety: as ScopedTrace (any threads at once, each step a scope of
// the thread that begins it).
class NEURONPROF_API StepTrace {
 public:
  // step_num and _r are typed arguments (see Arg), written in place.
  StepTrace(std::string_view name, int64_t step_num);
  template <typename... A, internal::EnableIfTypedArgs<A...> = 0>
  StepTrace(std::string_view name, int64_t step_num, const A&... extra_args);
  StepTrace(std::string_view name, int64_t step_num, std::initializer_list<TraceArg> extra_args);
  ~StepTrace();

  StepTrace(const StepTrace&) = delete;
  StepTrace& operator=(const StepTrace&) = delete;

 private:
  void EndWatched();  // Records the event, then reports it to the watch.
  template <typename... A>
  void Begin(std::string_view name, int64_t step_num, const A&... extra_args);

  ScopedTrace trace_;
  uint32_t watch_token_ = 0;  // Nonzero: a step watch asked for this step.
  int64_t step_num_ = 0;
};

// Names the calling thread's line in captures (default: the OS thread name).
// Thread-safety: any thread, for itself; it takes the thread registry's
// mutex and copies the name, so keep it out of hot loops.
NEURONPROF_API void SetCurrentThreadName(std::string_view name);

#endif  // NEURONPROF_DISABLE (internal/trace_disabled.h holds that API)

}  // namespace neuronprof

#define NEURONPROF_CONCAT_INNER_(a, b) a##b
#define NEURONPROF_CONCAT_(a, b) NEURONPROF_CONCAT_INNER_(a, b)

#define NEURONPROF_FIRST_ARG_(first, ...) first

// Scoped marker with a unique variable name, for a string-literal name:
//   NEURONPROF_SCOPE("optimizer_step");
//   NEURONPROF_SCOPE("fwd", {{"layer", i}});
//   NEURONPROF_SCOPE("fwd", neuronprof::Arg("layer", i));
//   NEURONPROF_SCOPE("detail", neuronprof::kTraceVerbose);
// The literal, __FILE__ and __LINE__ are kept in one `static constexpr`
// object per call site (internal::SourceLocation), so the marker records
// them by pointer (zero-copy; the capture shows the file and line as the
// stat "source" on the event's metadata) unless it has arguments, which
// copy the name and leave the location out. The name must
// be a string literal: anything else (a variable, a buffer, a std::string)
// fails to compile, because the macro pastes it after "" (the compiler
// then says "expected '}' before '<your argument>'"). Use
// neuronprof::ScopedTrace for names built at run time (they are copied).
// The macro is one declaration, like the ScopedTrace it declares. With
// NEURONPROF_DISABLE it is a static_assert on the same expression, so the
// same arguments are checked and none is evaluated.
#ifndef NEURONPROF_DISABLE
#define NEURONPROF_SCOPE(...)                                                             \
  ::neuronprof::ScopedTrace NEURONPROF_CONCAT_(neuronprof_scope_, __LINE__)(              \
      [] {                                                                                \
        static constexpr ::neuronprof::internal::SourceLocation neuronprof_site{          \
            ::neuronprof::StaticName{"" NEURONPROF_FIRST_ARG_(__VA_ARGS__, ~)}, __FILE__, \
            __LINE__};                                                                    \
        return ::neuronprof::internal::MacroName{&neuronprof_site};                       \
      }(),                                                                                \
      __VA_ARGS__)
#else
#define NEURONPROF_SCOPE(...)                                                                     \
  static_assert(sizeof(::neuronprof::StaticName{"" NEURONPROF_FIRST_ARG_(__VA_ARGS__, ~)}) > 0 && \
                    sizeof(::neuronprof::ScopedTrace(::neuronprof::internal::MacroName{nullptr},  \
                                                     __VA_ARGS__)) > 0,                           \
                "NEURONPROF_SCOPE")
#endif

// NEURONPROF_SCOPE with the caller's frames (see WithStack), for a
// string-literal name, like Tracy's ZoneScopedS:
//   NEURONPROF_SCOPE_STACK("load_batch");
#define NEURONPROF_SCOPE_STACK(literal)                                      \
  ::neuronprof::ScopedTrace NEURONPROF_CONCAT_(neuronprof_scope_, __LINE__)( \
      ::neuronprof::StaticName{"" literal}, ::neuronprof::kWithStack)

// Guards code that is only worth running while a capture records markers of
// `level`. The macro is the head of an `if` statement: the statement or
// block that follows it runs only then (nothing is evaluated otherwise):
//   NEURONPROF_IF_TRACING(neuronprof::kTraceInfo) {
//     shapes = DescribeShapes(batch);  // Costly; skipped when not recorded.
//   }
// With NEURONPROF_DISABLE the condition is the constant false (`level` is
// not evaluated) and the guarded code is dead.
#ifndef NEURONPROF_DISABLE
#define NEURONPROF_IF_TRACING(level) if (::neuronprof::TracingEnabled(level))
#else
#define NEURONPROF_IF_TRACING(level) if (false && ::neuronprof::TracingEnabled(level))
#endif

// Flows, async spans, counters and instant events.
#include "neuronprof/trace_events.h"

// The definitions of every marker above and in trace_events.h: their inline
// bodies, or with NEURONPROF_DISABLE, the same API compiled to nothing.
#ifdef NEURONPROF_DISABLE
#include "neuronprof/internal/trace_disabled.h"
#else
#include "neuronprof/internal/trace_inline.h"
#endif

#endif  // NEURONPROF_TRACE_H_
