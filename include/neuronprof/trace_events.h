// neuronprof markers for serving programs: flows between threads
// (TraceProducer / TraceConsumer), async spans (AsyncTrace), counters
// (TraceCounter) and instant events (TraceInstant). Included by
// <neuronprof/trace.h>; the same rules hold (see there): a relaxed load and
// a branch when no capture runs, no lock, no allocation, no exception, and
// nothing at all with NEURONPROF_DISABLE.
//
// What each one becomes (names in docs/ARCHITECTURE.md, "Serving events"):
// - Flows: stats _pt/_p (producer) and _ct/_c (consumer) on the marker's
//   event, as TSL's TraceMeProducer/TraceMeConsumer write them, so xprof's
//   trace viewer draws an arrow from every producer of a (type, id) to every
//   consumer of it; Chrome "s"/"f" flow events; Kineto flows.
// - Async spans: events on the host plane's async lines (one line per track
//   and overlap lane, named after the track), Chrome async "b"/"e" events
//   (cat = track, id = the span's id), Kineto events on the track's thread.
// - Counters: the host plane's "_counters_" line (xprof draws counter
//   tracks), Chrome/Kineto "C" events: one series per name and process.
// - Instants: zero-length events on the thread's line; Chrome "i" events.
//
// A flight recorder's dumps carry all of them.
#ifndef NEURONPROF_TRACE_EVENTS_H_
#define NEURONPROF_TRACE_EVENTS_H_

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string_view>
#include <type_traits>
#include <utility>

#include "neuronprof/trace.h"

namespace neuronprof {

// The kind of a context, as TSL numbers them (tsl/profiler/lib/
// context_types.h): xprof names an arrow's category after it, and ids of
// different types never link. kGeneric suits most programs.
enum class ContextType : uint32_t {
  kGeneric = 0,
  kLegacy = 1,
  kTfExecutor = 2,
  kTfrtExecutor = 3,
  kSharedBatchScheduler = 4,
  kPjRt = 5,
  kAdaptiveSharedBatchScheduler = 6,
  kTfrtTpuRuntime = 7,
  kTpuEmbeddingEngine = 8,
  kGpuLaunch = 9,
  kBatcher = 10,
  kTpuStream = 11,
  kTpuLaunch = 12,
  kPathwaysExecutor = 13,
  kPjrtLibraryCall = 14,
  kThreadpoolEvent = 15,
};

#ifndef NEURONPROF_DISABLE

// A context id that no other call in this process returns: never 0, no
// lock, no allocation (a per-thread counter under the thread's ordinal).
inline uint64_t NewContextId() { return internal::NewContextId(); }

namespace internal {
// What TraceProducer and TraceConsumer share: a scoped marker whose record
// carries the context's type and id as two reserved arguments.
class ContextMarker {
 public:
  ContextMarker(const ContextMarker&) = delete;
  ContextMarker& operator=(const ContextMarker&) = delete;
  ~ContextMarker() {
    if (state_ == 0) return;
    RecordEvent(state_, name_, name_length_, args_offset_, start_ticks_, NowTicks());
  }

 protected:
  ContextMarker() = default;

  // `producer`: _pt/_p, else _ct/_c. `id` 0 (a consumer's unknown
  // context): a plain marker. `level` admitted by the caller.
  void Begin(uint32_t state, std::string_view name, bool producer, ContextType type,
             uint64_t id, const TraceArg* args, size_t num_args) {
    state_ = state;
    const ReservedArg link[2] = {
        {producer ? kProducerTypeKey : kConsumerTypeKey, 'i', static_cast<uint64_t>(type)},
        {producer ? kProducerIdKey : kConsumerIdKey, 'u', id}};
    const size_t num_link = id == 0 ? 0 : 2;
    if (num_args == 0 && num_link == 0) {
      name_ = CopyPlainName(state, name, &name_length_);
    } else if (num_args == 0) {
      name_ = CopyNameWithReserved(state, name, link, num_link, &name_length_, &args_offset_);
    } else {
      name_ = CopyNameWithReservedAndArgs(state, name, link, num_link, args, num_args,
                                          &name_length_, &args_offset_);
    }
    if (name_ == nullptr) {
      state_ = 0;  // Capture ended, buffer full or marker too large (counted).
      return;
    }
    start_ticks_ = NowTicks();
  }

  uint32_t state_ = 0;
  uint32_t name_length_ = 0;
  uint32_t args_offset_ = 0;
  const char* name_ = nullptr;
  uint64_t start_ticks_ = 0;
};

// A link of a TraceBatchConsumer: an instant named `name` whose arguments
// after the instant key are the consumer's context type and id. The clock
// is read after the copy, as for every record (the ring's name check).
inline void RecordLink(uint32_t state, std::string_view name, ContextType type, uint64_t id) {
  const ReservedArg link[3] = {{kInstantKey, 'i', 0},
                               {kConsumerTypeKey, 'i', static_cast<uint64_t>(type)},
                               {kConsumerIdKey, 'u', id}};
  uint32_t length = 0, args_offset = 0;
  const char* copy = CopyNameWithReserved(state, name, link, 3, &length, &args_offset);
  if (copy == nullptr) return;
  const uint64_t now = NowTicks();
  RecordEvent(state, copy, length, args_offset, now, now);
}

// The capture state when it records markers of `level`, else 0.
inline uint32_t AdmitLevel(uint32_t level) {
  const uint32_t state = g_capture_state.load(std::memory_order_relaxed);
  return (state & kLevelMask) >= level ? state : 0;
}
}  // namespace internal

// A scoped marker that produces a context: the twin of TSL's
// TraceMeProducer. Every TraceConsumer of the same (type, id), on any
// thread, is linked to it (an arrow in xprof's trace viewer and Perfetto).
// `context_id` 0 asks for a new id (NewContextId()); read it with
// context_id() and hand it to the consumers (it is 0 when no capture
// records the marker: pass it on anyway, a consumer of 0 links nothing).
//
//   neuronprof::TraceProducer p("enqueue", neuronprof::ContextType::kGeneric);
//   queue.push({request, p.context_id()});
//   ...  // on a worker thread:
//   neuronprof::TraceConsumer c("infer", neuronprof::ContextType::kGeneric, item.id);
//
// Many to one (N requests into one batch): give each request's producer the
// batch's id (TSL's batch scheduler does this), or consume every request's
// id in the batch's one TraceBatchConsumer (below). One to
// many: several consumers of one id. The name is copied; arguments too.
class TraceProducer : public internal::ContextMarker {
 public:
  explicit TraceProducer(std::string_view name, ContextType type = ContextType::kGeneric,
                         uint64_t context_id = 0, uint32_t level = kTraceCritical) {
    Start(name, type, context_id, nullptr, 0, level);
  }
  TraceProducer(std::string_view name, ContextType type, uint64_t context_id,
                std::initializer_list<TraceArg> args, uint32_t level = kTraceCritical) {
    Start(name, type, context_id, args.begin(), args.size(), level);
  }

  // The id consumers must be given; 0 when the marker is not recorded.
  uint64_t context_id() const { return context_id_; }

 private:
  void Start(std::string_view name, ContextType type, uint64_t context_id,
             const TraceArg* args, size_t num_args, uint32_t level) {
    const uint32_t state = internal::AdmitLevel(level);
    if (state == 0) {
      context_id_ = context_id;
      return;
    }
    context_id_ = context_id != 0 ? context_id : NewContextId();
    Begin(state, name, /*producer=*/true, type, context_id_, args, num_args);
  }

  uint64_t context_id_ = 0;
};

// A scoped marker that consumes a context a TraceProducer produced (TSL's
// TraceMeConsumer). `context_id` 0 records a plain marker with no link.
class TraceConsumer : public internal::ContextMarker {
 public:
  TraceConsumer(std::string_view name, ContextType type, uint64_t context_id,
                uint32_t level = kTraceCritical) {
    if (const uint32_t state = internal::AdmitLevel(level)) {
      Begin(state, name, /*producer=*/false, type, context_id, nullptr, 0);
    }
  }
  TraceConsumer(std::string_view name, uint64_t context_id, uint32_t level = kTraceCritical)
      : TraceConsumer(name, ContextType::kGeneric, context_id, level) {}
  TraceConsumer(std::string_view name, ContextType type, uint64_t context_id,
                std::initializer_list<TraceArg> args, uint32_t level = kTraceCritical) {
    if (const uint32_t state = internal::AdmitLevel(level)) {
      Begin(state, name, /*producer=*/false, type, context_id, args.begin(), args.size());
    }
  }
};

// A scoped marker that consumes several contexts at once: a batch made of
// N requests, each with its own producer's id (many to one). Each id
// becomes a link of its own just after the marker's start (a zero-length
// event named like the marker carrying _ct/_c, nested in it), so xprof's
// trace viewer and Perfetto draw N arrows into the batch; the summary
// counts the marker once and links every id to it (queue waits, tails).
// The ids are read in the constructor only; ids of 0 link nothing. Costs
// a marker plus one record per id (8 ids: about 8 TraceConsumers' time).
//
//   uint64_t ids[kMaxBatch]; size_t n = 0;
//   for (const Request& r : batch) ids[n++] = r.context_id;
//   neuronprof::TraceBatchConsumer c("assemble", neuronprof::ContextType::kGeneric, ids, n);
class TraceBatchConsumer : public internal::ContextMarker {
 public:
  TraceBatchConsumer(std::string_view name, ContextType type, const uint64_t* context_ids,
                     size_t num_ids, uint32_t level = kTraceCritical) {
    const uint32_t state = internal::AdmitLevel(level);
    if (state == 0) return;
    Begin(state, name, /*producer=*/false, type, 0, nullptr, 0);
    if (state_ == 0) return;
    for (size_t i = 0; i < num_ids; ++i) {
      if (context_ids[i] != 0) internal::RecordLink(state, name, type, context_ids[i]);
    }
  }
  // Any contiguous container of uint64_t (std::vector, std::array).
  template <typename Ids, typename = decltype(std::declval<const Ids&>().data())>
  TraceBatchConsumer(std::string_view name, ContextType type, const Ids& context_ids,
                     uint32_t level = kTraceCritical)
      : TraceBatchConsumer(name, type, context_ids.data(), context_ids.size(), level) {}
};

// A span that begins on one thread and may end on another (a request's
// life, from its arrival to its reply), shown on a track of its own named
// `track`. Movable (hand it along with the request); ended by End() or by
// its destructor, whichever comes first, on whatever thread that runs.
// `track` and `name` are stored by pointer until the end (copied then): like
// StaticName, they must have static storage (string literals). `id` 0 asks
// for NewContextId(); id() returns it, so the span's id can also serve as a
// flow's context id. Only spans that begin and end within one capture are
// recorded. Level: kTraceCritical. Like any object, one AsyncTrace is used
// by one thread at a time: hand it over (move it) with the request.
//
//   neuronprof::AsyncTrace life("requests", "request");
//   queue.push({std::move(life), ...});   // ... later, on another thread:
//   item.life.End();
class AsyncTrace {
 public:
  AsyncTrace() = default;  // Records nothing.
  AsyncTrace(StaticName track, StaticName name, uint64_t id = 0) {
    if (Admit(id)) Begin(track, name);
  }
  // Literals: their lengths are taken only when the span is recorded.
  template <size_t N, size_t M>
  AsyncTrace(const char (&track)[N], const char (&name)[M], uint64_t id = 0) {
    if (Admit(id)) Begin(StaticName(track), StaticName(name));
  }

  AsyncTrace(AsyncTrace&& other) noexcept { Take(other); }
  AsyncTrace& operator=(AsyncTrace&& other) noexcept {
    if (this != &other) {
      End();
      Take(other);
    }
    return *this;
  }
  AsyncTrace(const AsyncTrace&) = delete;
  AsyncTrace& operator=(const AsyncTrace&) = delete;
  ~AsyncTrace() { End(); }

  // Records the span (once; later calls do nothing).
  void End() {
    if (state_ == 0) return;
    const uint32_t state = state_;
    state_ = 0;
    internal::RecordAsync(state, std::string_view(track_, track_length_),
                          std::string_view(name_, name_length_), id_, start_ticks_);
  }

  // The span's id (given or generated); 0 when it is not recorded and none
  // was given.
  uint64_t id() const { return id_; }
  // True until End() for a span the running capture records.
  bool recording() const { return state_ != 0; }

 private:
  bool Admit(uint64_t id) {
    state_ = internal::AdmitLevel(kTraceCritical);
    id_ = id;
    return state_ != 0;
  }
  void Begin(StaticName track, StaticName name) {
    track_ = track.data();
    track_length_ = track.size();
    name_ = name.data();
    name_length_ = name.size();
    if (id_ == 0) id_ = NewContextId();
    start_ticks_ = internal::NowTicks();
  }

  void Take(AsyncTrace& other) {
    state_ = other.state_;
    track_length_ = other.track_length_;
    name_length_ = other.name_length_;
    track_ = other.track_;
    name_ = other.name_;
    id_ = other.id_;
    start_ticks_ = other.start_ticks_;
    other.state_ = 0;
  }

  uint32_t state_ = 0;
  uint32_t track_length_ = 0;
  uint32_t name_length_ = 0;
  const char* track_ = nullptr;
  const char* name_ = nullptr;
  uint64_t id_ = 0;
  uint64_t start_ticks_ = 0;
};

// One sample of the counter `name` (queue depth, batch size, requests in
// flight): one time series per name in the process, drawn as a counter
// track. Integers and doubles; a series should keep one of the two. The
// name is copied. Level: kTraceCritical.
template <typename T, typename std::enable_if<std::is_integral<T>::value &&
                                                  !std::is_same<T, bool>::value,
                                              int>::type = 0>
inline void TraceCounter(std::string_view name, T value) {
  if (const uint32_t state = internal::AdmitLevel(kTraceCritical)) {
    int64_t bits = static_cast<int64_t>(value);
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

// An instant event on the calling thread's line (a cache miss, a request
// rejected), with optional arguments. The name and arguments are copied.
inline void TraceInstant(std::string_view name, std::initializer_list<TraceArg> args = {},
                         uint32_t level = kTraceCritical) {
  if (const uint32_t state = internal::AdmitLevel(level)) {
    internal::RecordInstant(state, name, args.begin(), args.size());
  }
}

#else  // NEURONPROF_DISABLE: the same API, compiled to nothing.
inline namespace disabled {

// Disabled builds generate no ids: 0, which consumers ignore.
constexpr uint64_t NewContextId() { return 0; }

class TraceProducer {
 public:
  explicit TraceProducer(std::string_view, ContextType = ContextType::kGeneric,
                         uint64_t context_id = 0, uint32_t = kTraceCritical)
      : context_id_(context_id) {}
  TraceProducer(std::string_view, ContextType, uint64_t context_id,
                std::initializer_list<TraceArg>, uint32_t = kTraceCritical)
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
  template <typename Ids, typename = decltype(std::declval<const Ids&>().data())>
  TraceBatchConsumer(std::string_view, ContextType, const Ids&, uint32_t = kTraceCritical) {}
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
  uint64_t id() const { return id_; }
  constexpr bool recording() const { return false; }

 private:
  uint64_t id_ = 0;
};

template <typename T, typename std::enable_if<std::is_integral<T>::value &&
                                                  !std::is_same<T, bool>::value,
                                              int>::type = 0>
inline void TraceCounter(std::string_view, T) {}
inline void TraceCounter(std::string_view, double) {}
inline void TraceInstant(std::string_view, std::initializer_list<TraceArg> = {},
                         uint32_t = kTraceCritical) {}

}  // namespace disabled
#endif  // NEURONPROF_DISABLE

}  // namespace neuronprof

#endif  // NEURONPROF_TRACE_EVENTS_H_
