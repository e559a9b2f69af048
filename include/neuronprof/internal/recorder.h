// INTERNAL: the inline half of the trace recorder. Do not include directly;
// <neuronprof/trace.h> is the public surface. Layouts here may change.
#ifndef NEURONPROF_INTERNAL_RECORDER_H_
#define NEURONPROF_INTERNAL_RECORDER_H_

#include <time.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <string_view>

#if defined(__x86_64__)
#include <x86intrin.h>

#include "neuronprof/export.h"
#endif
#include "neuronprof/internal/typed_args.h"

namespace neuronprof {
class TraceArg;
namespace internal {

// Capture state in one word so that a marker reads it with a single relaxed
// load: low 8 bits are the host tracer level in force (0 = not capturing),
// high 24 bits are the capture generation.
NEURONPROF_API extern std::atomic<uint32_t> g_capture_state;
// True when raw ticks are TSC cycles; false when they are CLOCK_MONOTONIC ns.
// Fixed before the first capture is enabled and never changed afterwards.
NEURONPROF_API extern bool g_ticks_are_tsc;

constexpr uint32_t kLevelMask = 0xffu;
constexpr uint32_t GenerationOf(uint32_t state) { return state >> 8; }

inline uint64_t NowTicks() {
#if defined(__x86_64__)
  if (g_ticks_are_tsc) return __rdtsc();
#endif
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);  // vDSO: no syscall.
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
}

// EventRecord::args_offset of a NEURONPROF_SCOPE record: `name` points at
// the call site's SourceLocation (neuronprof/trace.h), not at text. No
// real offset comes near it (a marker fits one 64 KiB block).
constexpr uint32_t kSourceLocationTag = 0xffffffffu;

// Flag in EventRecord::args_offset: the name was copied when the record
// was written (an AsyncTrace's end), not before its start tick. The ring
// snapshot's check that a name's block was not recycled then compares the
// block's claim with end_ticks. Never set with kSourceLocationTag.
constexpr uint32_t kNameCopiedAtEnd = 0x40000000u;

// One finished scope; 32 bytes so a 64 KiB block holds 2047 of them.
struct EventRecord {
  // A StaticName, a copy in the capture's arena, or (args_offset ==
  // kSourceLocationTag) a SourceLocation.
  const char* name;
  uint64_t start_ticks;
  uint64_t end_ticks;
  uint32_t name_length;  // Bytes of the name, arguments included.
  // 0: no arguments. Otherwise arguments follow the plain name, which is
  // (args_offset & ~kNameCopiedAtEnd) - 1 bytes long (see
  // src/core/event_args.h for the encoding), or kSourceLocationTag.
  uint32_t args_offset;
};
static_assert(sizeof(EventRecord) == 32, "EventRecord must stay 32 bytes");

struct EventBlock;

// Per-thread recording state. Every field below `writing` is owned by its
// thread and written only inside a write section (see EnterWriteSection);
// the collector reads them after every thread has left its section.
struct ThreadSlot {
  std::atomic<uint32_t> writing{0};
  bool needs_full_fence = false;  // No membarrier(2): pay a fence instead.
  uint32_t generation = 0;        // Capture the buffers below belong to.
  // Next free record in the current block. Atomic only so that a flight
  // recorder's snapshot may read it while the thread records: stored with
  // release, it publishes the records (and the names they point at) below
  // it. On x86 that is the same plain `mov` as before.
  std::atomic<EventRecord*> cursor{nullptr};
  EventRecord* limit = nullptr;
  char* arena_cursor = nullptr;  // Copies of dynamic names.
  char* arena_limit = nullptr;
  EventBlock* first_block = nullptr;
  EventBlock* last_block = nullptr;
  uint64_t recorded = 0;
  // Changed by this thread only (relaxed load + store, never a locked
  // instruction); atomic so that a snapshot may read them meanwhile.
  std::atomic<uint64_t> dropped{0};    // Events lost to a full buffer.
  std::atomic<uint64_t> too_large{0};  // Markers larger than a block, not kept.
  uint64_t largest_too_large = 0;      // Encoded bytes of the largest of them.
};

// `__thread` rather than `thread_local`: a trivially initialised TLS
// pointer, so the compiler emits no per-access TLS-init check. Initial-exec:
// markers in any shared object reach it with one thread-pointer-relative
// load instead of a __tls_get_addr call; the 8 bytes fit the static TLS
// space glibc keeps for libraries loaded with dlopen.
NEURONPROF_API extern __thread ThreadSlot* t_slot __attribute__((tls_model("initial-exec")));

// Opens a write section for the capture `state`. Returns false (and leaves
// no section open) when that capture has ended. Pairs with the collector's
// asymmetric barrier: it publishes the new state, runs membarrier(2), then
// waits for `writing` to clear on every slot.
inline bool EnterWriteSection(ThreadSlot* slot, uint32_t state) {
  slot->writing.store(1, std::memory_order_relaxed);
  if (slot->needs_full_fence) {
    std::atomic_thread_fence(std::memory_order_seq_cst);
  } else {
    std::atomic_signal_fence(std::memory_order_seq_cst);
  }
  // Acquire (a plain load on x86): the collector's reads of this slot for
  // the previous capture happen-before the state that opened this one.
  if (g_capture_state.load(std::memory_order_acquire) != state) {
    slot->writing.store(0, std::memory_order_release);
    return false;
  }
  return true;
}

inline void LeaveWriteSection(ThreadSlot* slot) {
  slot->writing.store(0, std::memory_order_release);
}

// Inside a write section, with room in the current block.
inline void AppendRecord(ThreadSlot* slot, const char* name, uint32_t name_length,
                         uint32_t args_offset, uint64_t start_ticks, uint64_t end_ticks) {
  EventRecord* record = slot->cursor.load(std::memory_order_relaxed);
  record->name = name;
  record->start_ticks = start_ticks;
  record->end_ticks = end_ticks;
  record->name_length = name_length;
  record->args_offset = args_offset;
  slot->cursor.store(record + 1, std::memory_order_release);
  ++slot->recorded;
}

// Out-of-line paths: first event of a thread or of a capture, a full block,
// copies of dynamic names.
NEURONPROF_API void RecordEventSlow(uint32_t state, const char* name, uint32_t name_length,
                                    uint32_t args_offset, uint64_t start_ticks, uint64_t end_ticks);
// Copies `name` plus its encoded arguments (`args`, then `more_args`) into
// the thread's arena. Returns nullptr when the capture ended, the buffer is
// full (counted as dropped) or the encoding cannot fit one block (counted as
// too large). On success also sets *out_args_offset (see
// EventRecord::args_offset).
NEURONPROF_API const char* CopyNameWithArgs(uint32_t state, std::string_view name,
                                            const TraceArg* args, size_t num_args,
                                            const TraceArg* more_args, size_t num_more_args,
                                            uint32_t* out_length, uint32_t* out_args_offset);
inline const char* CopyName(uint32_t state, std::string_view name, const TraceArg* args,
                            size_t num_args, uint32_t* out_length, uint32_t* out_args_offset) {
  return CopyNameWithArgs(state, name, args, num_args, nullptr, 0, out_length, out_args_offset);
}

// Copies a name without arguments: a memcpy when the thread's current arena
// block has room, else the out-of-line path (same results as CopyName).
inline const char* CopyPlainName(uint32_t state, std::string_view name, uint32_t* out_length) {
  ThreadSlot* slot = t_slot;
  // Strictly less: a null arena (no block yet) never takes this path.
  if (slot != nullptr && slot->generation == GenerationOf(state) &&
      name.size() < static_cast<size_t>(slot->arena_limit - slot->arena_cursor)) {
    if (!EnterWriteSection(slot, state)) return nullptr;
    char* copy = slot->arena_cursor;
    CopyBytes(copy, name.data(), name.size());  // Never reads an empty name's pointer.
    slot->arena_cursor = copy + name.size();
    LeaveWriteSection(slot);
    *out_length = static_cast<uint32_t>(name.size());
    return copy;
  }
  uint32_t no_args_offset = 0;
  return CopyNameWithArgs(state, name, nullptr, 0, nullptr, 0, out_length, &no_args_offset);
}

// ---- Reserved arguments: flows, async spans, counters and instants are
// plain records whose first arguments carry these keys (the encoding of
// src/core/event_args.h). TSL's stat names for flows; keys starting with
// byte 0x01 are reserved (src/xplane/schema.h): the compact keys use lower
// case letters, these upper case ones, which tell the host collector where
// the record goes.
inline constexpr std::string_view kProducerTypeKey = "_pt";  // int64 ContextType
inline constexpr std::string_view kProducerIdKey = "_p";     // uint64 context id
inline constexpr std::string_view kConsumerTypeKey = "_ct";
inline constexpr std::string_view kConsumerIdKey = "_c";
inline constexpr std::string_view kCounterValueKey =
    "\x01"
    "C";  // i, u or d: a counter sample
inline constexpr std::string_view kInstantKey =
    "\x01"
    "I";  // i 0: an instant event
inline constexpr std::string_view kAsyncTrackKey =
    "\x01"
    "A";  // s: an async span's track
inline constexpr std::string_view kAsyncIdKey =
    "\x01"
    "D";  // u: its id

// Call stacks (opt-in: NEURONPROF_SCOPE_STACK, TorchOperatorOptions::
// record_stacks): the caller's return addresses, innermost first, as the
// raw bytes (8 per frame) of an 's' argument under this key. The capture
// symbolizes them once per distinct address (src/collectors/host/
// stack_symbolizer.h) into the stat "stack".
inline constexpr std::string_view kStackKey =
    "\x01"
    "S";
inline constexpr size_t kMaxStackFrames = 32;
// An operator's TorchScript frames (text, innermost first, one a line),
// before its kStackKey argument: shown above its C++ frames.
inline constexpr std::string_view kScriptStackKey =
    "\x01"
    "T";

// Writes up to `max_frames` return addresses of its caller's stack (the
// caller's own frame first) into `frames` and returns how many, at most
// kMaxStackFrames. Unwinds with libunwind: no formatting, no lock, no
// allocation after the thread's first stack (its unwind cache).
NEURONPROF_API size_t CaptureStack(uint64_t* frames, size_t max_frames);

// One reserved argument: 'i', 'u', 'd' with `bits`, or 's' with `text`.
struct ReservedArg {
  std::string_view key;
  char kind;
  uint64_t bits;
  std::string_view text = {};
};

// The argument encoding's writers: core::EncodeMarker, the reserved
// arguments below and the typed ones (internal/typed_args.h) share
// PutEncodedText and PutEncodedNumber.
inline size_t EncodedSize(const ReservedArg& arg) {
  return 1 + sizeof(uint32_t) + arg.key.size() +
         (arg.kind == 's' ? sizeof(uint32_t) + arg.text.size() : sizeof(uint64_t));
}
inline char* PutReservedArg(char* out, const ReservedArg& arg) {
  *out++ = arg.kind;
  out = PutEncodedText(out, arg.key);
  return arg.kind == 's' ? PutEncodedText(out, arg.text) : PutEncodedNumber(out, arg.bits);
}

// `name`, then `reserved`, then `args` (TraceArgs), into the arena: the
// out-of-line path of CopyNameWithReserved, and the one for markers with
// user arguments too. Results as CopyNameWithArgs.
NEURONPROF_API const char* CopyNameWithReservedAndArgs(uint32_t state, std::string_view name,
                                                       const ReservedArg* reserved,
                                                       size_t num_reserved, const TraceArg* args,
                                                       size_t num_args, uint32_t* out_length,
                                                       uint32_t* out_args_offset);

// `name` and `reserved` (at least one) into the thread's arena: stores in
// place when the current arena block has room, else the out-of-line path.
inline const char* CopyNameWithReserved(uint32_t state, std::string_view name,
                                        const ReservedArg* reserved, size_t num_reserved,
                                        uint32_t* out_length, uint32_t* out_args_offset) {
  size_t size = name.size();
  for (size_t i = 0; i < num_reserved; ++i) size += EncodedSize(reserved[i]);
  ThreadSlot* slot = t_slot;
  if (slot != nullptr && slot->generation == GenerationOf(state) &&
      size < static_cast<size_t>(slot->arena_limit - slot->arena_cursor)) {
    if (!EnterWriteSection(slot, state)) return nullptr;
    char* copy = slot->arena_cursor;
    // An empty std::string_view{} holds a null pointer: CopyBytes never
    // reads it (memcpy from null is undefined even for 0 bytes).
    CopyBytes(copy, name.data(), name.size());
    char* out = copy + name.size();
    for (size_t i = 0; i < num_reserved; ++i) out = PutReservedArg(out, reserved[i]);
    slot->arena_cursor = out;
    LeaveWriteSection(slot);
    *out_length = static_cast<uint32_t>(size);
    *out_args_offset = static_cast<uint32_t>(name.size() + 1);
    return copy;
  }
  return CopyNameWithReservedAndArgs(state, name, reserved, num_reserved, nullptr, 0, out_length,
                                     out_args_offset);
}

inline ReservedArg ToReservedArg(const NumberArg& arg) { return {arg.key, arg.kind, arg.bits}; }
inline ReservedArg ToReservedArg(const TextArg& arg) { return {arg.key, 's', 0, arg.text}; }

// CopyNameWithTypedArgs's path when the arena block has no room: out of
// line and cold, so that what callers inline stays small.
template <typename... A>
[[gnu::noinline, gnu::cold]] const char* CopyNameWithTypedArgsSlow(uint32_t state,
                                                                   std::string_view name,
                                                                   uint32_t* out_length,
                                                                   uint32_t* out_args_offset,
                                                                   const A&... args) {
  const ReservedArg all[] = {ToReservedArg(args)...};
  return CopyNameWithReservedAndArgs(state, name, all, sizeof...(A), nullptr, 0, out_length,
                                     out_args_offset);
}

// `name` and the typed `args` (one or more, internal/typed_args.h) into the
// thread's arena: the types are known at compile time, so the size is a sum
// and each value is one store or one copy, with no branch on its type. When
// the current arena block has no room, the out-of-line path (a new block,
// or a drop or a too-large marker, counted). Results as CopyNameWithArgs.
// Always inlined: the constant key lengths and kinds fold only in the
// caller (GCC left it out of line in StepTrace, 1.45x the floor).
template <typename... A>
[[gnu::always_inline]] inline const char* CopyNameWithTypedArgs(uint32_t state,
                                                                std::string_view name,
                                                                uint32_t* out_length,
                                                                uint32_t* out_args_offset,
                                                                const A&... args) {
  static_assert(sizeof...(A) > 0, "at least one argument");
  const size_t size = name.size() + (size_t{0} + ... + EncodedSize(args));
  ThreadSlot* slot = t_slot;
  // Strictly less: a null arena (no block yet) never takes this path.
  if (slot != nullptr && slot->generation == GenerationOf(state) &&
      size < static_cast<size_t>(slot->arena_limit - slot->arena_cursor)) {
    if (!EnterWriteSection(slot, state)) return nullptr;
    char* copy = slot->arena_cursor;
    CopyBytes(copy, name.data(), name.size());
    char* out = copy + name.size();
    ((out = PutTypedArg(out, args)), ...);
    slot->arena_cursor = out;
    LeaveWriteSection(slot);
    *out_length = static_cast<uint32_t>(size);
    *out_args_offset = static_cast<uint32_t>(name.size() + 1);
    return copy;
  }
  return CopyNameWithTypedArgsSlow(state, name, out_length, out_args_offset, args...);
}

// StepTrace's entry points (src/core/step_watch.cc). A token of 0 means
// "not watched"; otherwise it names the watch install and the tag.
NEURONPROF_API uint32_t MatchWatchedStep(std::string_view name);
NEURONPROF_API void EndWatchedStep(uint32_t token, int64_t step_num, uint64_t start_ticks,
                                   uint64_t end_ticks);
// A StepTrace that was not recorded: counted while counting is on (one
// relaxed load otherwise).
NEURONPROF_API void NoteUnrecordedStep();

// Context ids: the thread's ordinal in the high 24 bits, a count below.
NEURONPROF_API extern __thread uint64_t t_next_context_id
    __attribute__((tls_model("initial-exec")));
NEURONPROF_API uint64_t FirstContextId();  // Claims the thread's ordinal.
inline uint64_t NewContextId() {
  const uint64_t id = t_next_context_id;
  if (id == 0) return FirstContextId();
  t_next_context_id = id + 1;
  return id;
}

inline void RecordEvent(uint32_t state, const char* name, uint32_t name_length,
                        uint32_t args_offset, uint64_t start_ticks, uint64_t end_ticks) {
  ThreadSlot* slot = t_slot;
  if (slot != nullptr && slot->generation == GenerationOf(state) &&
      slot->cursor.load(std::memory_order_relaxed) != slot->limit) {
    if (!EnterWriteSection(slot, state)) return;
    AppendRecord(slot, name, name_length, args_offset, start_ticks, end_ticks);
    LeaveWriteSection(slot);
    return;
  }
  RecordEventSlow(state, name, name_length, args_offset, start_ticks, end_ticks);
}

// A zero-length record at the clock's now, of a name (and arguments) just
// copied: the clock is read after the copy, as for every marker (the
// ring's name check).
inline void RecordNow(uint32_t state, const char* copy, uint32_t length, uint32_t args_offset) {
  const uint64_t now = NowTicks();
  RecordEvent(state, copy, length, args_offset, now, now);
}

// A counter sample: name + the value (kind 'i', 'u' or 'd').
inline void RecordCounter(uint32_t state, std::string_view name, char kind, uint64_t bits) {
  const ReservedArg value{kCounterValueKey, kind, bits};
  uint32_t length = 0, args_offset = 0;
  const char* copy = CopyNameWithReserved(state, name, &value, 1, &length, &args_offset);
  if (copy != nullptr) RecordNow(state, copy, length, args_offset);
}

// An instant: name + the instant key, then `args` (TraceArgs, or typed).
inline void RecordInstant(uint32_t state, std::string_view name, const TraceArg* args,
                          size_t num_args) {
  const ReservedArg instant{kInstantKey, 'i', 0};
  uint32_t length = 0, args_offset = 0;
  const char* copy = num_args == 0
                         ? CopyNameWithReserved(state, name, &instant, 1, &length, &args_offset)
                         : CopyNameWithReservedAndArgs(state, name, &instant, 1, args, num_args,
                                                       &length, &args_offset);
  if (copy != nullptr) RecordNow(state, copy, length, args_offset);
}
template <typename... A, EnableIfTypedArgs<A...> = 0>
[[gnu::always_inline]] inline void RecordInstant(uint32_t state, std::string_view name,
                                                 const A&... args) {
  uint32_t length = 0, args_offset = 0;
  const char* copy = CopyNameWithTypedArgs(state, name, &length, &args_offset,
                                           NumberArg{kInstantKey, 'i', 0}, args...);
  if (copy != nullptr) RecordNow(state, copy, length, args_offset);
}

// An async span's record, written by the thread that ends it: name + track
// + id, then the typed `args` (if any), copied now (hence kNameCopiedAtEnd),
// end tick read after the copy.
template <typename... A>
[[gnu::always_inline]] inline void RecordAsync(uint32_t state, std::string_view track,
                                               std::string_view name, uint64_t id,
                                               uint64_t start_ticks, const A&... args) {
  uint32_t length = 0, args_offset = 0;
  const char* copy =
      CopyNameWithTypedArgs(state, name, &length, &args_offset, TextArg{kAsyncTrackKey, track},
                            NumberArg{kAsyncIdKey, 'u', id}, args...);
  if (copy == nullptr) return;
  RecordEvent(state, copy, length, args_offset | kNameCopiedAtEnd, start_ticks, NowTicks());
}

}  // namespace internal
}  // namespace neuronprof

#endif  // NEURONPROF_INTERNAL_RECORDER_H_
