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

// Outside the guard, so that this file may be included first: trace.h
// declares its markers, includes this file (guard not yet set) for these,
// then the definitions of both (internal/).
#include "neuronprof/trace.h"

#ifndef NEURONPROF_TRACE_EVENTS_H_
#define NEURONPROF_TRACE_EVENTS_H_

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string_view>
#include <type_traits>
#include <utility>

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
// Thread-safety: any thread, at any time.
inline uint64_t NewContextId();

// Arguments: every marker here that takes them takes the typed form (Arg,
// as ScopedTrace: written in place, level kTraceCritical), the one to use;
// producers, consumers and instants also take an initializer list of
// TraceArgs (encoded out of line, about twice the cost), recorded as the
// same stats.
//
// Thread-safety of every marker below: any number of threads may record at
// once, each into its own thread's buffer (no lock, no allocation, no
// exception); a scoped one (producer, consumer) is a scope of the thread that
// constructs it, as a ScopedTrace is. An AsyncTrace may end on another
// thread than the one that began it, but one object is used by one thread
// at a time.

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
//   neuronprof::TraceProducer q("enqueue", neuronprof::ContextType::kGeneric, 0,
//                               neuronprof::Arg("batch", n));  // With arguments.
//
// Many to one (N requests into one batch): give each request's producer the
// batch's id (TSL's batch scheduler does this), or consume every request's
// id in the batch's one TraceBatchConsumer (below). One to
// many: several consumers of one id. The name is copied; arguments too.
class TraceProducer {
 public:
  explicit TraceProducer(std::string_view name, ContextType type = ContextType::kGeneric,
                         uint64_t context_id = 0, uint32_t level = kTraceCritical);
  template <typename... A, internal::EnableIfTypedArgs<A...> = 0>
  [[gnu::always_inline]] TraceProducer(std::string_view name, ContextType type, uint64_t context_id,
                                       const A&... args);
  TraceProducer(std::string_view name, ContextType type, uint64_t context_id,
                std::initializer_list<TraceArg> args, uint32_t level = kTraceCritical);

  // The id consumers must be given; 0 when the marker is not recorded.
  uint64_t context_id() const { return context_id_; }

 private:
  // Admits the marker at `level` and settles context_id_ (a new id for 0,
  // only when recorded).
  bool Admit(uint64_t context_id, uint32_t level);

  ScopedTrace trace_;
  uint64_t context_id_ = 0;
};

// A scoped marker that consumes a context a TraceProducer produced (TSL's
// TraceMeConsumer). `context_id` 0 records a plain marker with no link.
class TraceConsumer {
 public:
  TraceConsumer(std::string_view name, ContextType type, uint64_t context_id,
                uint32_t level = kTraceCritical);
  TraceConsumer(std::string_view name, uint64_t context_id, uint32_t level = kTraceCritical);
  template <typename... A, internal::EnableIfTypedArgs<A...> = 0>
  [[gnu::always_inline]] TraceConsumer(std::string_view name, ContextType type, uint64_t context_id,
                                       const A&... args);
  TraceConsumer(std::string_view name, ContextType type, uint64_t context_id,
                std::initializer_list<TraceArg> args, uint32_t level = kTraceCritical);

 private:
  ScopedTrace trace_;
};

// A scoped marker that consumes several contexts at once: a batch made of
// N requests, each with its own producer's id (many to one). Each id
// becomes a link of its own just after the marker's start (a zero-length
// event named like the marker carrying _ct/_c, nested in it), so xprof's
// trace viewer and Perfetto draw N arrows into the batch; the summary
// counts the marker once and links every id to it (queue waits, tails).
// The ids are read in the constructor only; ids of 0 link nothing. Costs
// a marker plus one record per id (8 ids: about 8 TraceConsumers' time).
// Typed arguments (Arg) go on the batch's marker.
//
//   uint64_t ids[kMaxBatch]; size_t n = 0;
//   for (const Request& r : batch) ids[n++] = r.context_id;
//   neuronprof::TraceBatchConsumer c("assemble", neuronprof::ContextType::kGeneric, ids, n);
class TraceBatchConsumer {
 public:
  TraceBatchConsumer(std::string_view name, ContextType type, const uint64_t* context_ids,
                     size_t num_ids, uint32_t level = kTraceCritical);
  template <typename... A, internal::EnableIfTypedArgs<A...> = 0>
  TraceBatchConsumer(std::string_view name, ContextType type, const uint64_t* context_ids,
                     size_t num_ids, const A&... args);
  // Any contiguous container of uint64_t (std::vector, std::array).
  template <typename Ids, typename = decltype(std::declval<const Ids&>().data())>
  TraceBatchConsumer(std::string_view name, ContextType type, const Ids& context_ids,
                     uint32_t level = kTraceCritical)
      : TraceBatchConsumer(name, type, context_ids.data(), context_ids.size(), level) {}
  template <typename Ids, typename... A, typename = decltype(std::declval<const Ids&>().data()),
            internal::EnableIfTypedArgs<A...> = 0>
  TraceBatchConsumer(std::string_view name, ContextType type, const Ids& context_ids,
                     const A&... args)
      : TraceBatchConsumer(name, type, context_ids.data(), context_ids.size(), args...) {}

 private:
  // One link per nonzero id, once the marker is recorded.
  void Link(std::string_view name, ContextType type, const uint64_t* context_ids, size_t num_ids);

  ScopedTrace trace_;
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
// Arguments are given to End(), when the span is recorded (the thread that
// ends it copies them with the names).
//
//   neuronprof::AsyncTrace life("requests", "request");
//   queue.push({std::move(life), ...});   // ... later, on another thread:
//   item.life.End(neuronprof::Arg("status", 200));
class AsyncTrace {
 public:
  AsyncTrace() = default;  // Records nothing.
  AsyncTrace(StaticName track, StaticName name, uint64_t id = 0);
  // Literals: their lengths are taken only when the span is recorded.
  template <size_t N, size_t M>
  AsyncTrace(const char (&track)[N], const char (&name)[M], uint64_t id = 0);

  AsyncTrace(AsyncTrace&& other) noexcept;
  AsyncTrace& operator=(AsyncTrace&& other) noexcept;
  AsyncTrace(const AsyncTrace&) = delete;
  AsyncTrace& operator=(const AsyncTrace&) = delete;
  ~AsyncTrace();

  // Records the span (once; later calls do nothing), with typed `args`
  // (see Arg) after its track and id.
  void End();
  template <typename... A, internal::EnableIfTypedArgs<A...> = 0>
  [[gnu::always_inline]] void End(const A&... args);

  // The span's id (given or generated); 0 when it is not recorded and none
  // was given.
  uint64_t id() const { return id_; }
  // True until End() for a span the running capture records.
  bool recording() const { return state_ != 0; }

 private:
  bool Admit(uint64_t id);
  void Begin(StaticName track, StaticName name);
  void Take(AsyncTrace& other);
  // The span's state, cleared: End()'s once-only check.
  uint32_t Release();

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
template <typename T, internal::EnableIfInteger<T> = 0>
void TraceCounter(std::string_view name, T value);
inline void TraceCounter(std::string_view name, double value);

// An instant event on the calling thread's line (a cache miss, a request
// rejected), with optional arguments. The name and arguments are copied.
template <typename... A, internal::EnableIfTypedArgs<A...> = 0>
[[gnu::always_inline]] void TraceInstant(std::string_view name, const A&... args);
inline void TraceInstant(std::string_view name, std::initializer_list<TraceArg> args = {},
                         uint32_t level = kTraceCritical);

#endif  // NEURONPROF_DISABLE (internal/trace_disabled.h holds that API)

}  // namespace neuronprof

#endif  // NEURONPROF_TRACE_EVENTS_H_
