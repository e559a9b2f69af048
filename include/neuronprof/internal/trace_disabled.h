// INTERNAL: with NEURONPROF_DISABLE, the markers of <neuronprof/trace.h> and
// <neuronprof/trace_events.h> compiled to nothing. trace.h includes it in
// place of internal/trace_inline.h; not for direct use. Every public
// spelling of those headers has its twin here (tests/core/
// compile_out_markers.cc builds each in both modes), in an inline namespace
// of its own, so its inline code never replaces the enabled one at link
// time in a program that mixes both kinds of translation units.
#ifndef NEURONPROF_INTERNAL_TRACE_DISABLED_H_
#define NEURONPROF_INTERNAL_TRACE_DISABLED_H_

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string_view>
#include <utility>

#include "neuronprof/internal/typed_args.h"
#include "neuronprof/trace.h"

#ifndef NEURONPROF_DISABLE
#error "internal/trace_disabled.h is the NEURONPROF_DISABLE build's markers only"
#endif

namespace neuronprof {
inline namespace disabled {

constexpr bool TracingEnabled(uint32_t /*level*/ = kTraceCritical) { return false; }

class ScopedTrace {
 public:
  explicit ScopedTrace(std::string_view, uint32_t = kTraceCritical) {}
  ScopedTrace(std::string_view, std::initializer_list<TraceArg>, uint32_t = kTraceCritical) {}
  // Char arrays by reference, so that a buffer without a NUL is not read.
  template <size_t N>
  explicit ScopedTrace(const char (&)[N], uint32_t = kTraceCritical) {}
  template <size_t N>
  ScopedTrace(const char (&)[N], std::initializer_list<TraceArg>, uint32_t = kTraceCritical) {}
  template <typename... A, internal::EnableIfTypedArgs<A...> = 0>
  ScopedTrace(std::string_view, const A&...) {}
  template <size_t N, typename... A, internal::EnableIfTypedArgs<A...> = 0>
  ScopedTrace(const char (&)[N], const A&...) {}
  template <typename... A, internal::EnableIfTypedArgs<A...> = 0>
  ScopedTrace(StaticName, const A&...) {}
  ScopedTrace(std::string_view, WithStack, uint32_t = kTraceCritical) {}
  ScopedTrace(StaticName, WithStack, uint32_t = kTraceCritical) {}
  explicit ScopedTrace(StaticName, uint32_t = kTraceCritical) {}
  ScopedTrace(StaticName, std::initializer_list<TraceArg>, uint32_t = kTraceCritical) {}
  ScopedTrace(internal::MacroName, const char*, uint32_t = kTraceCritical) {}
  ScopedTrace(internal::MacroName, const char*, std::initializer_list<TraceArg>,
              uint32_t = kTraceCritical) {}
  template <typename... A, internal::EnableIfTypedArgs<A...> = 0>
  ScopedTrace(internal::MacroName, const char*, const A&...) {}
  ~ScopedTrace() {}  // User-provided: no unused-variable warnings.

  ScopedTrace(const ScopedTrace&) = delete;
  ScopedTrace& operator=(const ScopedTrace&) = delete;
};

class StepTrace {
 public:
  StepTrace(std::string_view, int64_t) {}
  template <typename... A, internal::EnableIfTypedArgs<A...> = 0>
  StepTrace(std::string_view, int64_t, const A&...) {}
  StepTrace(std::string_view, int64_t, std::initializer_list<TraceArg>) {}
  ~StepTrace() {}

  StepTrace(const StepTrace&) = delete;
  StepTrace& operator=(const StepTrace&) = delete;
};

inline void SetCurrentThreadName(std::string_view) {}

// ---- trace_events.h

// Disabled builds generate no ids: 0, which consumers ignore.
constexpr uint64_t NewContextId() { return 0; }

class TraceProducer {
 public:
  explicit TraceProducer(std::string_view, ContextType = ContextType::kGeneric,
                         uint64_t context_id = 0, uint32_t = kTraceCritical)
      : context_id_(context_id) {}
  template <typename... A, internal::EnableIfTypedArgs<A...> = 0>
  TraceProducer(std::string_view, ContextType, uint64_t context_id, const A&...)
      : context_id_(context_id) {}
  TraceProducer(std::string_view, ContextType, uint64_t context_id, std::initializer_list<TraceArg>,
                uint32_t = kTraceCritical)
      : context_id_(context_id) {}
  ~TraceProducer() {}
  TraceProducer(const TraceProducer&) = delete;
  TraceProducer& operator=(const TraceProducer&) = delete;
  uint64_t context_id() const { return context_id_; }

 private:
  uint64_t context_id_;
};

class TraceConsumer {
 public:
  TraceConsumer(std::string_view, ContextType, uint64_t, uint32_t = kTraceCritical) {}
  TraceConsumer(std::string_view, uint64_t, uint32_t = kTraceCritical) {}
  template <typename... A, internal::EnableIfTypedArgs<A...> = 0>
  TraceConsumer(std::string_view, ContextType, uint64_t, const A&...) {}
  TraceConsumer(std::string_view, ContextType, uint64_t, std::initializer_list<TraceArg>,
                uint32_t = kTraceCritical) {}
  ~TraceConsumer() {}
  TraceConsumer(const TraceConsumer&) = delete;
  TraceConsumer& operator=(const TraceConsumer&) = delete;
};

class TraceBatchConsumer {
 public:
  TraceBatchConsumer(std::string_view, ContextType, const uint64_t*, size_t,
                     uint32_t = kTraceCritical) {}
  template <typename... A, internal::EnableIfTypedArgs<A...> = 0>
  TraceBatchConsumer(std::string_view, ContextType, const uint64_t*, size_t, const A&...) {}
  template <typename Ids, typename = decltype(std::declval<const Ids&>().data())>
  TraceBatchConsumer(std::string_view, ContextType, const Ids&, uint32_t = kTraceCritical) {}
  template <typename Ids, typename... A, typename = decltype(std::declval<const Ids&>().data()),
            internal::EnableIfTypedArgs<A...> = 0>
  TraceBatchConsumer(std::string_view, ContextType, const Ids&, const A&...) {}
  ~TraceBatchConsumer() {}
  TraceBatchConsumer(const TraceBatchConsumer&) = delete;
  TraceBatchConsumer& operator=(const TraceBatchConsumer&) = delete;
};

class AsyncTrace {
 public:
  AsyncTrace() = default;
  AsyncTrace(StaticName, StaticName, uint64_t id = 0) : id_(id) {}
  template <size_t N, size_t M>
  AsyncTrace(const char (&)[N], const char (&)[M], uint64_t id = 0) : id_(id) {}
  AsyncTrace(AsyncTrace&&) noexcept = default;
  AsyncTrace& operator=(AsyncTrace&&) noexcept = default;
  AsyncTrace(const AsyncTrace&) = delete;
  AsyncTrace& operator=(const AsyncTrace&) = delete;
  ~AsyncTrace() {}
  void End() {}
  template <typename... A, internal::EnableIfTypedArgs<A...> = 0>
  void End(const A&...) {}
  uint64_t id() const { return id_; }
  constexpr bool recording() const { return false; }

 private:
  uint64_t id_ = 0;
};

template <typename T, internal::EnableIfInteger<T> = 0>
inline void TraceCounter(std::string_view, T) {}
inline void TraceCounter(std::string_view, double) {}
template <typename... A, internal::EnableIfTypedArgs<A...> = 0>
inline void TraceInstant(std::string_view, const A&...) {}
inline void TraceInstant(std::string_view, std::initializer_list<TraceArg> = {},
                         uint32_t = kTraceCritical) {}

}  // namespace disabled
}  // namespace neuronprof

#endif  // NEURONPROF_INTERNAL_TRACE_DISABLED_H_
