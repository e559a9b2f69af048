// INTERNAL: the inline bodies of the markers that <neuronprof/trace.h> and
// <neuronprof/trace_events.h> declare: admission, the copies into the
// thread's arena and the records. trace.h includes it last, except with
// NEURONPROF_DISABLE (internal/trace_disabled.h then); not for direct use.
#ifndef NEURONPROF_INTERNAL_TRACE_INLINE_H_
#define NEURONPROF_INTERNAL_TRACE_INLINE_H_

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string_view>

#include "neuronprof/internal/recorder.h"
#include "neuronprof/internal/typed_args.h"
#include "neuronprof/trace.h"

#ifdef NEURONPROF_DISABLE
#error "internal/trace_inline.h holds the enabled markers only"
#endif

namespace neuronprof {
namespace internal {

// The capture state when it records markers of `level`, else 0.
inline uint32_t AdmitLevel(uint32_t level) {
  const uint32_t state = g_capture_state.load(std::memory_order_relaxed);
  return (state & kLevelMask) >= level ? state : 0;
}

// A link of a TraceBatchConsumer: an instant named `name` whose arguments
// after the instant key are the consumer's context type and id.
inline void RecordLink(uint32_t state, std::string_view name, ContextType type, uint64_t id) {
  const ReservedArg link[3] = {{kInstantKey, 'i', 0},
                               {kConsumerTypeKey, 'i', static_cast<uint64_t>(type)},
                               {kConsumerIdKey, 'u', id}};
  uint32_t length = 0, args_offset = 0;
  const char* copy = CopyNameWithReserved(state, name, link, 3, &length, &args_offset);
  if (copy != nullptr) RecordNow(state, copy, length, args_offset);
}

}  // namespace internal

inline bool TracingEnabled(uint32_t level) {
  return (internal::g_capture_state.load(std::memory_order_relaxed) & internal::kLevelMask) >=
         level;
}

// ---- ScopedTrace

inline ScopedTrace::ScopedTrace(std::string_view name, uint32_t level) {
  if (Admit(level)) CopyPlain(name);
}

inline ScopedTrace::ScopedTrace(std::string_view name, std::initializer_list<TraceArg> args,
                                uint32_t level) {
  if (Admit(level)) CopyWithArgs(name, args.begin(), args.size(), nullptr, 0);
}

template <size_t N>
inline ScopedTrace::ScopedTrace(const char (&name)[N], uint32_t level) {
  if (Admit(level)) CopyPlain(std::string_view(name, internal::BoundedLength(name, N)));
}

template <size_t N>
inline ScopedTrace::ScopedTrace(const char (&name)[N], std::initializer_list<TraceArg> args,
                                uint32_t level) {
  if (Admit(level)) {
    CopyWithArgs(std::string_view(name, internal::BoundedLength(name, N)), args.begin(),
                 args.size(), nullptr, 0);
  }
}

template <typename... A, internal::EnableIfTypedArgs<A...>>
inline ScopedTrace::ScopedTrace(std::string_view name, const A&... args) {
  if (Admit(kTraceCritical)) CopyTyped(name, args...);
}

template <size_t N, typename... A, internal::EnableIfTypedArgs<A...>>
inline ScopedTrace::ScopedTrace(const char (&name)[N], const A&... args) {
  if (Admit(kTraceCritical)) {
    CopyTyped(std::string_view(name, internal::BoundedLength(name, N)), args...);
  }
}

template <typename... A, internal::EnableIfTypedArgs<A...>>
inline ScopedTrace::ScopedTrace(StaticName name, const A&... args) {
  if (Admit(kTraceCritical)) CopyTyped(std::string_view(name.data(), name.size()), args...);
}

inline ScopedTrace::ScopedTrace(std::string_view name, WithStack, uint32_t level) {
  if (Admit(level)) CopyWithStack(name);
}

inline ScopedTrace::ScopedTrace(StaticName name, WithStack, uint32_t level) {
  if (Admit(level)) CopyWithStack(std::string_view(name.data(), name.size()));
}

inline ScopedTrace::ScopedTrace(StaticName name, uint32_t level) {
  if (!Admit(level)) return;
  name_ = name.data();
  name_length_ = name.size();
  start_ticks_ = internal::NowTicks();
}

inline ScopedTrace::ScopedTrace(StaticName name, std::initializer_list<TraceArg> args,
                                uint32_t level) {
  if (Admit(level)) {
    CopyWithArgs(std::string_view(name.data(), name.size()), args.begin(), args.size(), nullptr, 0);
  }
}

inline ScopedTrace::ScopedTrace(internal::MacroName name, const char* /*literal*/, uint32_t level) {
  if (!Admit(level)) return;
  name_ = reinterpret_cast<const char*>(name.site);
  name_length_ = name.site->name.size();
  args_offset_ = internal::kSourceLocationTag;
  start_ticks_ = internal::NowTicks();
}

inline ScopedTrace::ScopedTrace(internal::MacroName name, const char* /*literal*/,
                                std::initializer_list<TraceArg> args, uint32_t level)
    : ScopedTrace(name.site->name, args, level) {}

template <typename... A, internal::EnableIfTypedArgs<A...>>
inline ScopedTrace::ScopedTrace(internal::MacroName name, const char* /*literal*/, const A&... args)
    : ScopedTrace(name.site->name, args...) {}

inline ScopedTrace::~ScopedTrace() {
  if (state_ == 0) return;
  internal::RecordEvent(state_, name_, name_length_, args_offset_, start_ticks_,
                        internal::NowTicks());
}

inline bool ScopedTrace::Admit(uint32_t level) {
  state_ = internal::AdmitLevel(level);
  return state_ != 0;
}

inline void ScopedTrace::StartWith(const char* copy) {
  name_ = copy;
  if (copy == nullptr) {
    state_ = 0;
    return;
  }
  start_ticks_ = internal::NowTicks();
}

inline void ScopedTrace::CopyPlain(std::string_view name) {
  StartWith(internal::CopyPlainName(state_, name, &name_length_));
}

template <typename... A>
inline void ScopedTrace::CopyTyped(std::string_view name, const A&... args) {
  StartWith(internal::CopyNameWithTypedArgs(state_, name, &name_length_, &args_offset_, args...));
}

inline void ScopedTrace::CopyWithStack(std::string_view name) {
  uint64_t frames[internal::kMaxStackFrames];
  const size_t count = internal::CaptureStack(frames, internal::kMaxStackFrames);
  const internal::TextArg stack{
      internal::kStackKey,
      std::string_view(reinterpret_cast<const char*>(frames), count * sizeof(uint64_t))};
  CopyTyped(name, stack);
}

inline void ScopedTrace::CopyWithArgs(std::string_view name, const TraceArg* args, size_t num_args,
                                      const TraceArg* more_args, size_t num_more_args) {
  StartWith(internal::CopyNameWithArgs(state_, name, args, num_args, more_args, num_more_args,
                                       &name_length_, &args_offset_));
}

inline void ScopedTrace::CopyWithLink(std::string_view name, bool producer, ContextType type,
                                      uint64_t id, const TraceArg* args, size_t num_args) {
  if (id == 0 && num_args == 0) return CopyPlain(name);
  const internal::ReservedArg link[2] = {
      {producer ? internal::kProducerTypeKey : internal::kConsumerTypeKey, 'i',
       static_cast<uint64_t>(type)},
      {producer ? internal::kProducerIdKey : internal::kConsumerIdKey, 'u', id}};
  const size_t num_link = id == 0 ? 0 : 2;
  StartWith(num_args == 0
                ? internal::CopyNameWithReserved(state_, name, link, num_link, &name_length_,
                                                 &args_offset_)
                : internal::CopyNameWithReservedAndArgs(state_, name, link, num_link, args,
                                                        num_args, &name_length_, &args_offset_));
}

// The link as two typed arguments before the caller's (if any): the bytes
// of the reserved ones CopyWithLink writes, stored in place.
template <bool kProducer, typename... A>
inline void ScopedTrace::CopyTypedWithLink(std::string_view name, ContextType type, uint64_t id,
                                           const A&... args) {
  if (id == 0) {
    if constexpr (sizeof...(A) == 0) {
      CopyPlain(name);
    } else {
      CopyTyped(name, args...);
    }
    return;
  }
  constexpr std::string_view type_key =
      kProducer ? internal::kProducerTypeKey : internal::kConsumerTypeKey;
  constexpr std::string_view id_key =
      kProducer ? internal::kProducerIdKey : internal::kConsumerIdKey;
  CopyTyped(name, internal::NumberArg{type_key, 'i', static_cast<uint64_t>(type)},
            internal::NumberArg{id_key, 'u', id}, args...);
}

// ---- StepTrace

inline StepTrace::StepTrace(std::string_view name, int64_t step_num) { Begin(name, step_num); }

template <typename... A, internal::EnableIfTypedArgs<A...>>
inline StepTrace::StepTrace(std::string_view name, int64_t step_num, const A&... extra_args) {
  Begin(name, step_num, extra_args...);
}

inline StepTrace::~StepTrace() {
  if (watch_token_ != 0) EndWatched();
}

template <typename... A>
inline void StepTrace::Begin(std::string_view name, int64_t step_num, const A&... extra_args) {
  if (!trace_.Admit(kTraceCritical)) {
    internal::NoteUnrecordedStep();  // Counted after a Profiler's window ended.
    return;
  }
  // Asked before the step's start tick is read: not part of its duration.
  watch_token_ = internal::MatchWatchedStep(name);
  step_num_ = step_num;
  // step_num identifies the step; _r=1 marks the event as a root that
  // groups everything nested under it, as TSL's StepTraceAnnotation does.
  trace_.CopyTyped(name, Arg("step_num", step_num), Arg("_r", 1), extra_args...);
}

// ---- Flows (trace_events.h)

inline uint64_t NewContextId() { return internal::NewContextId(); }

inline TraceProducer::TraceProducer(std::string_view name, ContextType type, uint64_t context_id,
                                    uint32_t level) {
  if (Admit(context_id, level)) trace_.CopyTypedWithLink<true>(name, type, context_id_);
}

template <typename... A, internal::EnableIfTypedArgs<A...>>
inline TraceProducer::TraceProducer(std::string_view name, ContextType type, uint64_t context_id,
                                    const A&... args) {
  if (Admit(context_id, kTraceCritical)) {
    trace_.CopyTypedWithLink<true>(name, type, context_id_, args...);
  }
}

inline TraceProducer::TraceProducer(std::string_view name, ContextType type, uint64_t context_id,
                                    std::initializer_list<TraceArg> args, uint32_t level) {
  if (Admit(context_id, level)) {
    trace_.CopyWithLink(name, true, type, context_id_, args.begin(), args.size());
  }
}

inline bool TraceProducer::Admit(uint64_t context_id, uint32_t level) {
  context_id_ = context_id;
  if (!trace_.Admit(level)) return false;
  if (context_id_ == 0) context_id_ = NewContextId();
  return true;
}

inline TraceConsumer::TraceConsumer(std::string_view name, ContextType type, uint64_t context_id,
                                    uint32_t level) {
  if (trace_.Admit(level)) trace_.CopyTypedWithLink<false>(name, type, context_id);
}

inline TraceConsumer::TraceConsumer(std::string_view name, uint64_t context_id, uint32_t level)
    : TraceConsumer(name, ContextType::kGeneric, context_id, level) {}

template <typename... A, internal::EnableIfTypedArgs<A...>>
inline TraceConsumer::TraceConsumer(std::string_view name, ContextType type, uint64_t context_id,
                                    const A&... args) {
  if (trace_.Admit(kTraceCritical)) {
    trace_.CopyTypedWithLink<false>(name, type, context_id, args...);
  }
}

inline TraceConsumer::TraceConsumer(std::string_view name, ContextType type, uint64_t context_id,
                                    std::initializer_list<TraceArg> args, uint32_t level) {
  if (trace_.Admit(level)) {
    trace_.CopyWithLink(name, false, type, context_id, args.begin(), args.size());
  }
}

inline TraceBatchConsumer::TraceBatchConsumer(std::string_view name, ContextType type,
                                              const uint64_t* context_ids, size_t num_ids,
                                              uint32_t level) {
  if (!trace_.Admit(level)) return;
  trace_.CopyPlain(name);
  Link(name, type, context_ids, num_ids);
}

template <typename... A, internal::EnableIfTypedArgs<A...>>
inline TraceBatchConsumer::TraceBatchConsumer(std::string_view name, ContextType type,
                                              const uint64_t* context_ids, size_t num_ids,
                                              const A&... args) {
  if (!trace_.Admit(kTraceCritical)) return;
  trace_.CopyTyped(name, args...);
  Link(name, type, context_ids, num_ids);
}

inline void TraceBatchConsumer::Link(std::string_view name, ContextType type,
                                     const uint64_t* context_ids, size_t num_ids) {
  const uint32_t state = trace_.state_;
  if (state == 0) return;
  for (size_t i = 0; i < num_ids; ++i) {
    if (context_ids[i] != 0) internal::RecordLink(state, name, type, context_ids[i]);
  }
}

// ---- AsyncTrace

inline AsyncTrace::AsyncTrace(StaticName track, StaticName name, uint64_t id) {
  if (Admit(id)) Begin(track, name);
}

template <size_t N, size_t M>
inline AsyncTrace::AsyncTrace(const char (&track)[N], const char (&name)[M], uint64_t id) {
  if (Admit(id)) Begin(StaticName(track), StaticName(name));
}

inline AsyncTrace::AsyncTrace(AsyncTrace&& other) noexcept { Take(other); }

inline AsyncTrace& AsyncTrace::operator=(AsyncTrace&& other) noexcept {
  if (this != &other) {
    End();
    Take(other);
  }
  return *this;
}

inline AsyncTrace::~AsyncTrace() { End(); }

inline void AsyncTrace::End() {
  if (const uint32_t state = Release()) {
    internal::RecordAsync(state, std::string_view(track_, track_length_),
                          std::string_view(name_, name_length_), id_, start_ticks_);
  }
}

template <typename... A, internal::EnableIfTypedArgs<A...>>
inline void AsyncTrace::End(const A&... args) {
  if (const uint32_t state = Release()) {
    internal::RecordAsync(state, std::string_view(track_, track_length_),
                          std::string_view(name_, name_length_), id_, start_ticks_, args...);
  }
}

inline bool AsyncTrace::Admit(uint64_t id) {
  state_ = internal::AdmitLevel(kTraceCritical);
  id_ = id;
  return state_ != 0;
}

inline void AsyncTrace::Begin(StaticName track, StaticName name) {
  track_ = track.data();
  track_length_ = track.size();
  name_ = name.data();
  name_length_ = name.size();
  if (id_ == 0) id_ = NewContextId();
  start_ticks_ = internal::NowTicks();
}

inline void AsyncTrace::Take(AsyncTrace& other) {
  state_ = other.state_;
  track_length_ = other.track_length_;
  name_length_ = other.name_length_;
  track_ = other.track_;
  name_ = other.name_;
  id_ = other.id_;
  start_ticks_ = other.start_ticks_;
  other.state_ = 0;
}

inline uint32_t AsyncTrace::Release() {
  const uint32_t state = state_;
  state_ = 0;
  return state;
}

// ---- Counters and instants

template <typename T, internal::EnableIfInteger<T>>
inline void TraceCounter(std::string_view name, T value) {
  if (const uint32_t state = internal::AdmitLevel(kTraceCritical)) {
    const int64_t bits = static_cast<int64_t>(value);
    internal::RecordCounter(state, name, std::is_signed<T>::value ? 'i' : 'u',
                            static_cast<uint64_t>(bits));
  }
}

inline void TraceCounter(std::string_view name, double value) {
  if (const uint32_t state = internal::AdmitLevel(kTraceCritical)) {
    uint64_t bits;
    std::memcpy(&bits, &value, sizeof(bits));
    internal::RecordCounter(state, name, 'd', bits);
  }
}

template <typename... A, internal::EnableIfTypedArgs<A...>>
inline void TraceInstant(std::string_view name, const A&... args) {
  if (const uint32_t state = internal::AdmitLevel(kTraceCritical)) {
    internal::RecordInstant(state, name, args...);
  }
}

inline void TraceInstant(std::string_view name, std::initializer_list<TraceArg> args,
                         uint32_t level) {
  if (const uint32_t state = internal::AdmitLevel(level)) {
    internal::RecordInstant(state, name, args.begin(), args.size());
  }
}

}  // namespace neuronprof

#endif  // NEURONPROF_INTERNAL_TRACE_INLINE_H_
