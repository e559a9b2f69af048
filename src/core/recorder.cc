// Control side of the trace recorder.
//
// Safety argument: every write a thread makes into a capture's memory (its
// slot fields, records, copied names) happens inside a write section that
// first announces itself (`writing = 1`) and then checks the capture is
// still current. StopRecording publishes the new state, issues an
// asymmetric barrier (membarrier(2), or a full fence on the writer side where
// that is missing) and waits for every `writing` flag to clear. After that no
// thread can write into the capture, so it can be read and freed.
//
// Ring mode (the flight recorder) never stops: blocks are recycled
// (EventPool::ClaimRingBlock) and SnapshotRing copies the newest events out
// while threads go on recording. Memory-ordering argument:
// - A block changes hands only through its header's `state`: the owner
//   retires it with a release store, a claimer takes it with an acquire
//   CAS, and kCurrent blocks are never taken. So a block is written by one
//   thread at a time, and each owner's writes happen before the next one's.
// - SnapshotRing freezes claims (EventPool::set_frozen, seq_cst), runs the
//   same asymmetric barrier as StopRecording and waits until each
//   `writing` has been 0 once. A claim runs inside a write section and
//   checks the freeze after announcing the section, so after that wait no
//   block changes hands, no header changes, and every header, retired
//   block and exited thread's slot was written before (release of
//   `writing` = 0, acquire by the snapshot). Threads keep recording into
//   their current blocks; when one fills, they drop (counted) until the
//   freeze ends, a few ms later. They never wait.
// - A live thread's current block is read only below its `cursor`,
//   loaded with acquire: AppendRecord stores it with release after the
//   record, and the record's name was copied earlier by the same thread,
//   so both are visible and no longer written.
// - A record and its copied name may live in different blocks, and the
//   name's block may have been recycled since (by this thread or, after it
//   retired the block, another one). The name's block header must then say
//   kNames, the record's thread, and claim_ticks < the record's
//   start_ticks: a name is copied after its block was claimed and before
//   the marker reads its start tick, and any later claim of that block
//   reads its tick after that start (same thread in program order, or
//   through the retire/claim synchronisation and a monotonic clock). An
//   event that fails the check is left out and counted as clipped, never
//   decoded from foreign bytes.
#include "src/core/recorder.h"

#include <linux/membarrier.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <unordered_set>

#include "neuronprof/trace.h"
#include "src/core/event_args.h"
#include "src/core/event_pool.h"
#include "src/core/snapshot_copy.h"
#include "src/core/step_watch.h"

namespace neuronprof {
namespace internal {

std::atomic<uint32_t> g_capture_state{0};
__thread ThreadSlot* t_slot __attribute__((tls_model("initial-exec"))) = nullptr;

}  // namespace internal

namespace core {
namespace {

using internal::EventBlock;
using internal::EventRecord;
using internal::RingBlockHeader;
using internal::ThreadSlot;

// A slot plus what only the control side needs.
struct RegisteredThread : ThreadSlot {
  int64_t thread_id = 0;
  char os_name[32] = {};    // Read by the thread at its first event.
  std::string custom_name;  // SetCurrentThreadName; guarded by g_registry_mutex.
  std::atomic<bool> exited{false};
};

std::mutex g_registry_mutex;
std::vector<RegisteredThread*>* g_registry = new std::vector<RegisteredThread*>();

// Serialises StartRecording / StopRecording.
std::mutex g_control_mutex;
std::atomic<EventPool*> g_pool{nullptr};
uint32_t g_last_generation = 0;           // Guarded by g_control_mutex.
std::unique_ptr<EventPool> g_owned_pool;  // Guarded by g_control_mutex.
ClockSample g_start_sample;               // Guarded by g_control_mutex.
// Events lost on threads that have no slot (ending threads).
std::atomic<uint64_t> g_unattributed_drops{0};

std::atomic<bool> g_use_membarrier{false};
std::once_flag g_barrier_once;

// A child forked during a capture has one thread and none of the capture's
// others: its markers record nothing, and the parent's Profiler or
// FlightRecorder copied into it is inert (src/session/fork_guard.h).
void CaptureOffInChild() { internal::g_capture_state.store(0, std::memory_order_relaxed); }
[[maybe_unused]] const int g_fork_handler = pthread_atfork(nullptr, nullptr, CaptureOffInChild);

void InitBarrier() {
  const long supported = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
  if (supported > 0 && (supported & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
      syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0) {
    g_use_membarrier.store(true, std::memory_order_relaxed);
  }
}

void HeavyBarrier() {
  if (g_use_membarrier.load(std::memory_order_relaxed)) {
    syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
  } else {
    std::atomic_thread_fence(std::memory_order_seq_cst);
  }
}

thread_local bool t_thread_exiting = false;

// Ring mode: the header of the block that `limit` (a records or names
// limit, one past the block's end) belongs to; nullptr without a block.
RingBlockHeader* HeaderBefore(const void* limit) {
  if (limit == nullptr) return nullptr;
  // The slot's own block: never const memory.
  return reinterpret_cast<RingBlockHeader*>(const_cast<char*>(static_cast<const char*>(limit)) -
                                            EventBlock::kBytes);
}

// Ring mode: lets other threads recycle a block this thread is done with.
void Retire(RingBlockHeader* header) {
  if (header != nullptr) {
    header->state.store(RingBlockHeader::kRetired, std::memory_order_release);
  }
}

// Ring mode: claims a block of `kind` for `slot`, or nullptr (frozen or
// every block in use). Inside the slot's write section.
RingBlockHeader* ClaimRing(EventPool* pool, const ThreadSlot* slot, RingBlockHeader::Kind kind) {
  RingBlockHeader* header = pool->ClaimRingBlock();
  if (header == nullptr) return nullptr;
  header->kind.store(kind, std::memory_order_relaxed);
  header->owner = slot;
  // Read after the block is ours and before any name is copied into it.
  header->claim_ticks = internal::NowTicks();
  return header;
}

void RetireCurrentBlocks(ThreadSlot* slot);
void NoteThreadExit();

// Detaches the slot when its thread ends; the slot itself lives on until
// the next StopRecording has collected it, or in a ring until no block
// holds its events any more (NoteThreadExit).
struct SlotOwner {
  RegisteredThread* slot = nullptr;
  ~SlotOwner() {
    if (slot == nullptr) return;
    // A flight recorder's ring gets this thread's current blocks back once
    // they are overwritten in turn; until then they keep its last events.
    RetireCurrentBlocks(slot);
    internal::t_slot = nullptr;
    t_thread_exiting = true;
    slot->exited.store(true, std::memory_order_release);
    NoteThreadExit();
  }
};
thread_local SlotOwner t_slot_owner;

RegisteredThread* CurrentThreadSlot() {
  if (internal::t_slot != nullptr) {
    return static_cast<RegisteredThread*>(internal::t_slot);
  }
  if (t_thread_exiting) return nullptr;
  // Decide the barrier before the first slot exists, so no thread is left
  // paying a full fence when membarrier(2) works.
  std::call_once(g_barrier_once, InitBarrier);
  auto* slot = new RegisteredThread();
  slot->thread_id = static_cast<int64_t>(syscall(SYS_gettid));
  slot->needs_full_fence = !g_use_membarrier.load(std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lock(g_registry_mutex);
    g_registry->push_back(slot);
  }
  t_slot_owner.slot = slot;
  internal::t_slot = slot;
  return slot;
}

// Only the owning thread changes its counts: no locked instruction needed.
void CountDrop(ThreadSlot* slot) {
  slot->dropped.store(slot->dropped.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

EventPool* PoolFor(uint32_t state) {
  EventPool* pool = g_pool.load(std::memory_order_acquire);
  if (pool == nullptr || pool->generation() != internal::GenerationOf(state)) {
    return nullptr;
  }
  return pool;
}

void RetireCurrentBlocks(ThreadSlot* slot) {
  const uint32_t state = internal::g_capture_state.load(std::memory_order_relaxed);
  if (state == 0 || slot->generation != internal::GenerationOf(state)) return;
  if (!internal::EnterWriteSection(slot, state)) return;
  EventPool* pool = PoolFor(state);
  // Frozen: a snapshot is reading; it retires exited threads' blocks itself.
  if (pool != nullptr && pool->ring() && !pool->frozen()) {
    Retire(HeaderBefore(slot->limit));
    Retire(HeaderBefore(slot->arena_limit));
  }
  internal::LeaveWriteSection(slot);
}

// Ring mode, with claims frozen and every write section ended (as in
// SnapshotRing): gives the ring the current blocks of exited threads (a
// thread that ended during a freeze could not), then deletes the slots of
// exited threads that no block names as its owner any more, i.e. whose
// events have all been overwritten. A block's owner is set only when it is
// claimed, so no later snapshot can look for a deleted slot. Needs
// g_registry_mutex.
void EraseOverwrittenExitedSlots(const EventPool& pool) {
  for (RegisteredThread* slot : *g_registry) {
    if (!slot->exited.load(std::memory_order_acquire) || slot->generation != pool.generation()) {
      continue;
    }
    for (const void* limit :
         {static_cast<const void*>(slot->limit), static_cast<const void*>(slot->arena_limit)}) {
      RingBlockHeader* header = HeaderBefore(limit);
      if (header != nullptr && header->owner == slot) Retire(header);
    }
  }
  std::unordered_set<const void*> owners;
  for (uint64_t i = 0; i < pool.num_blocks(); ++i) {
    const RingBlockHeader* header = pool.ring_header(i);
    if (header->state.load(std::memory_order_acquire) != RingBlockHeader::kFree) {
      owners.insert(header->owner);
    }
  }
  std::vector<RegisteredThread*>& registry = *g_registry;
  registry.erase(std::remove_if(registry.begin(), registry.end(),
                                [&owners](RegisteredThread* slot) {
                                  if (!slot->exited.load(std::memory_order_acquire) ||
                                      owners.count(slot) != 0) {
                                    return false;
                                  }
                                  delete slot;
                                  return true;
                                }),
                 registry.end());
}

// Waits until every write section open now has ended. Needs
// g_registry_mutex; after a freeze, no block changes hands afterwards.
void WaitForWriters() {
  HeavyBarrier();
  for (RegisteredThread* slot : *g_registry) {
    while (slot->writing.load(std::memory_order_acquire) != 0) {
      std::this_thread::yield();
    }
  }
}

// Exits since the last sweep of a ring's exited slots.
std::atomic<uint64_t> g_exits_since_sweep{0};

// On an exiting thread. A ring capture never stops, so its exited slots
// are swept here instead: once per max(kMinExitsPerSweep, blocks) exits,
// which bounds the slots kept to the ring's blocks (each names one owner)
// plus that many, and the claims frozen meanwhile (the sweep reads block
// owners; threads that switch blocks then drop, as during a snapshot) to
// one short freeze per that many exits.
void NoteThreadExit() {
  constexpr uint64_t kMinExitsPerSweep = 64;
  const uint64_t exits = g_exits_since_sweep.fetch_add(1, std::memory_order_relaxed) + 1;
  if (exits < kMinExitsPerSweep) return;
  // Never wait here: a capture starting, stopping or being read sweeps or
  // collects itself; the next exit tries again.
  std::unique_lock<std::mutex> control(g_control_mutex, std::try_to_lock);
  if (!control.owns_lock() || g_owned_pool == nullptr || !g_owned_pool->ring()) return;
  EventPool& pool = *g_owned_pool;
  if (exits < std::max(kMinExitsPerSweep, pool.num_blocks())) return;
  g_exits_since_sweep.store(0, std::memory_order_relaxed);
  pool.set_frozen(true);
  {
    std::lock_guard<std::mutex> registry_lock(g_registry_mutex);
    WaitForWriters();
    EraseOverwrittenExitedSlots(pool);
  }
  pool.set_frozen(false);
}

// Inside a write section: points the slot at a fresh capture.
void ResetSlot(RegisteredThread* slot, uint32_t state) {
  slot->generation = internal::GenerationOf(state);
  slot->cursor.store(nullptr, std::memory_order_relaxed);
  slot->limit = nullptr;
  slot->arena_cursor = slot->arena_limit = nullptr;
  slot->first_block = slot->last_block = nullptr;
  slot->recorded = 0;
  slot->dropped.store(0, std::memory_order_relaxed);
  slot->too_large.store(0, std::memory_order_relaxed);
  slot->largest_too_large = 0;
  char name[17] = {};
  prctl(PR_GET_NAME, name, 0, 0, 0);
  std::memcpy(slot->os_name, name, sizeof(name));
}

// Inside a write section: makes room for one more record.
bool EnsureRecordSpace(RegisteredThread* slot, uint32_t state) {
  if (slot->cursor.load(std::memory_order_relaxed) != slot->limit) return true;
  EventPool* pool = PoolFor(state);
  if (pool != nullptr && pool->ring()) {
    RingBlockHeader* header = ClaimRing(pool, slot, RingBlockHeader::kRecords);
    if (header == nullptr) return false;
    Retire(HeaderBefore(slot->limit));  // Full: only snapshots read it now.
    auto* block = reinterpret_cast<EventBlock*>(header);
    slot->cursor.store(block->records, std::memory_order_release);
    slot->limit = block->records + EventBlock::kRecords;
    return true;
  }
  auto* block = pool ? static_cast<EventBlock*>(pool->ClaimBlock()) : nullptr;
  if (block == nullptr) return false;
  block->next = nullptr;
  if (slot->last_block != nullptr) {
    slot->last_block->next = block;
  } else {
    slot->first_block = block;
  }
  slot->last_block = block;
  slot->cursor.store(block->records, std::memory_order_release);
  slot->limit = block->records + EventBlock::kRecords;
  return true;
}

}  // namespace
}  // namespace core

namespace internal {

void RecordEventSlow(uint32_t state, const char* name, uint32_t name_length, uint32_t args_offset,
                     uint64_t start_ticks, uint64_t end_ticks) {
  auto* slot = core::CurrentThreadSlot();
  if (slot == nullptr) {
    if (g_capture_state.load(std::memory_order_relaxed) == state) {
      core::g_unattributed_drops.fetch_add(1, std::memory_order_relaxed);
    }
    return;
  }
  if (!EnterWriteSection(slot, state)) return;
  if (slot->generation != GenerationOf(state)) core::ResetSlot(slot, state);
  if (!core::EnsureRecordSpace(slot, state)) {
    core::CountDrop(slot);
    LeaveWriteSection(slot);
    return;
  }
  AppendRecord(slot, name, name_length, args_offset, start_ticks, end_ticks);
  LeaveWriteSection(slot);
}

namespace {

// CopyNameWithArgs and CopyNameWithReservedAndArgs: `marker` encoded into
// the thread's arena.
const char* CopyMarker(uint32_t state, const core::MarkerText& marker, uint32_t* out_length,
                       uint32_t* out_args_offset) {
  auto* slot = core::CurrentThreadSlot();
  if (slot == nullptr) return nullptr;
  if (!EnterWriteSection(slot, state)) return nullptr;
  if (slot->generation != GenerationOf(state)) core::ResetSlot(slot, state);
  char* begin = slot->arena_cursor;
  const size_t room = static_cast<size_t>(slot->arena_limit - begin);
  size_t size = core::EncodeMarker(begin, room, marker);
  if (begin == nullptr || size > room) {
    core::EventPool* pool = core::PoolFor(state);
    // A ring block starts with its header; names take the rest.
    const size_t header_bytes = pool != nullptr && pool->ring() ? sizeof(RingBlockHeader) : 0;
    const size_t capacity = EventBlock::kBytes - header_bytes;
    if (size > capacity) {
      // No block could hold it: leave the arena as it is, so that nothing
      // else is lost, and count it apart from the drops of a full buffer.
      slot->too_large.store(slot->too_large.load(std::memory_order_relaxed) + 1,
                            std::memory_order_relaxed);
      slot->largest_too_large = std::max<uint64_t>(slot->largest_too_large, size);
      LeaveWriteSection(slot);
      return nullptr;
    }
    char* block = nullptr;
    if (pool != nullptr && pool->ring()) {
      RingBlockHeader* header = core::ClaimRing(pool, slot, RingBlockHeader::kNames);
      if (header != nullptr) {
        core::Retire(core::HeaderBefore(slot->arena_limit));
        block = reinterpret_cast<char*>(header);
      }
    } else if (pool != nullptr) {
      block = static_cast<char*>(pool->ClaimBlock());
    }
    if (block == nullptr) {
      core::CountDrop(slot);  // The event this name belonged to is lost.
      LeaveWriteSection(slot);
      return nullptr;
    }
    // The arena's cursor and limit always move to a new block together.
    begin = block + header_bytes;
    slot->arena_cursor = begin;
    slot->arena_limit = block + EventBlock::kBytes;
    size = core::EncodeMarker(begin, capacity, marker);
  }
  slot->arena_cursor = begin + size;
  LeaveWriteSection(slot);
  *out_length = static_cast<uint32_t>(size);
  *out_args_offset = marker.num_args + marker.num_more_args + marker.num_reserved == 0
                         ? 0
                         : static_cast<uint32_t>(marker.name.size() + 1);
  return begin;
}

}  // namespace

const char* CopyNameWithArgs(uint32_t state, std::string_view name, const TraceArg* args,
                             size_t num_args, const TraceArg* more_args, size_t num_more_args,
                             uint32_t* out_length, uint32_t* out_args_offset) {
  const core::MarkerText marker{name, args, num_args, more_args, num_more_args};
  return CopyMarker(state, marker, out_length, out_args_offset);
}

const char* CopyNameWithReservedAndArgs(uint32_t state, std::string_view name,
                                        const ReservedArg* reserved, size_t num_reserved,
                                        const TraceArg* args, size_t num_args, uint32_t* out_length,
                                        uint32_t* out_args_offset) {
  const core::MarkerText marker{name, args, num_args, nullptr, 0, reserved, num_reserved};
  return CopyMarker(state, marker, out_length, out_args_offset);
}

__thread uint64_t t_next_context_id __attribute__((tls_model("initial-exec"))) = 0;

uint64_t FirstContextId() {
  // Ordinals from 1, so no id is 0; 2^40 ids per thread before the count
  // would reach the ordinal's bits.
  static std::atomic<uint64_t> next_ordinal{1};
  const uint64_t ordinal = next_ordinal.fetch_add(1, std::memory_order_relaxed) & 0xffffffu;
  const uint64_t first = (ordinal == 0 ? 1 : ordinal) << 40;
  t_next_context_id = first + 2;
  return first + 1;
}

}  // namespace internal

void SetCurrentThreadName(std::string_view name) {
  auto* slot = core::CurrentThreadSlot();
  if (slot == nullptr) return;
  std::lock_guard<std::mutex> lock(core::g_registry_mutex);
  slot->custom_name = std::string(name);
}

StepTrace::StepTrace(std::string_view name, int64_t step_num,
                     std::initializer_list<TraceArg> extra_args) {
  // As Begin (neuronprof/internal/trace_inline.h), with the extras as a list.
  if (trace_.Admit(kTraceCritical)) {
    watch_token_ = internal::MatchWatchedStep(name);
    step_num_ = step_num;
    const TraceArg fixed[] = {TraceArg("step_num", step_num), TraceArg("_r", 1)};
    trace_.CopyWithArgs(name, fixed, 2, extra_args.begin(), extra_args.size());
  } else {
    internal::NoteUnrecordedStep();  // Counted after a Profiler's window ended.
  }
}

void StepTrace::EndWatched() {
  if (trace_.state_ == 0) return;
  const uint64_t end_ticks = internal::NowTicks();
  internal::RecordEvent(trace_.state_, trace_.name_, trace_.name_length_, trace_.args_offset_,
                        trace_.start_ticks_, end_ticks);
  trace_.state_ = 0;  // Recorded: trace_'s destructor does nothing.
  internal::EndWatchedStep(watch_token_, step_num_, trace_.start_ticks_, end_ticks);
}

namespace core {

const internal::EventRecord& RecordsInPool::operator[](size_t i) const {
  size_t chunk = 0;
  while (i >= chunks_[chunk].second) i -= chunks_[chunk++].second;  // i < size()
  return chunks_[chunk].first[i];
}

const internal::EventRecord& RecordsInPool::at(size_t i) const {
  if (i >= size_) {
    throw std::out_of_range("record " + std::to_string(i) + " of " + std::to_string(size_));
  }
  return (*this)[i];
}

RecordedCapture::RecordedCapture() = default;
RecordedCapture::~RecordedCapture() = default;
RecordedCapture::RecordedCapture(RecordedCapture&&) noexcept = default;
RecordedCapture& RecordedCapture::operator=(RecordedCapture&&) noexcept = default;

namespace {
Result<> Start(int host_tracer_level, uint64_t max_buffer_bytes, bool ring);
}  // namespace

Result<> StartRecording(int host_tracer_level, uint64_t max_buffer_bytes) {
  return Start(host_tracer_level, max_buffer_bytes, /*ring=*/false);
}

Result<> StartRingRecording(int host_tracer_level, uint64_t ring_bytes) {
  if (ring_bytes < kMinRingBytes) {
    return {ErrorCode::kInvalidArgument,
            "the ring must hold at least " + std::to_string(kMinRingBytes / kBlockBytes) +
                " blocks of " + std::to_string(kBlockBytes) + " bytes (" +
                std::to_string(kMinRingBytes) + " bytes), got " + std::to_string(ring_bytes)};
  }
  return Start(host_tracer_level, ring_bytes, /*ring=*/true);
}

namespace {
Result<> Start(int host_tracer_level, uint64_t max_buffer_bytes, bool ring) {
  if (host_tracer_level < 0 || host_tracer_level > 3) {
    return {ErrorCode::kInvalidArgument,
            "host_tracer_level must be 0..3, got " + std::to_string(host_tracer_level)};
  }
  std::lock_guard<std::mutex> lock(g_control_mutex);
  if (g_owned_pool != nullptr) {
    return {ErrorCode::kFailedPrecondition,
            "a capture is already running in this process; stop it first (only "
            "one capture at a time)"};
  }
  std::call_once(g_barrier_once, InitBarrier);
  InitTickSource();
  uint32_t generation = (g_last_generation + 1) & 0xffffffu;
  if (generation == 0) generation = 1;
  auto pool = EventPool::Create(max_buffer_bytes, generation, ring);
  if (!pool.ok()) return pool.status();
  g_last_generation = generation;
  g_owned_pool = std::move(*pool);
  g_unattributed_drops.store(0, std::memory_order_relaxed);
  g_pool.store(g_owned_pool.get(), std::memory_order_release);
  g_start_sample = TakeClockSample();
  internal::g_capture_state.store((generation << 8) | static_cast<uint32_t>(host_tracer_level),
                                  std::memory_order_release);
  return {};
}
}  // namespace

size_t RegisteredThreadCount() {
  std::lock_guard<std::mutex> lock(g_registry_mutex);
  return g_registry->size();
}

bool IsRecording() {
  std::lock_guard<std::mutex> lock(g_control_mutex);
  return g_owned_pool != nullptr;
}

Result<RecordedCapture> StopRecording() {
  std::lock_guard<std::mutex> lock(g_control_mutex);
  if (g_owned_pool == nullptr) {
    return Result<>(ErrorCode::kFailedPrecondition, "no capture is running");
  }
  internal::g_capture_state.store(0, std::memory_order_seq_cst);
  const ClockSample stop_sample = TakeClockSample();
  HeavyBarrier();

  RecordedCapture capture;
  capture.clock = TickConverter(g_start_sample, stop_sample);
  capture.start_epoch_ns = g_start_sample.realtime_ns;
  capture.stop_epoch_ns = stop_sample.realtime_ns;
  capture.buffer_bytes = g_owned_pool->capacity_bytes();
  g_owned_pool->StopPrefaulting();
  const uint32_t generation = g_owned_pool->generation();

  std::lock_guard<std::mutex> registry_lock(g_registry_mutex);
  std::vector<RegisteredThread*>& registry = *g_registry;
  for (RegisteredThread* slot : registry) {
    while (slot->writing.load(std::memory_order_acquire) != 0) {
      std::this_thread::yield();
    }
  }
  for (RegisteredThread* slot : registry) {
    if (slot->generation != generation) continue;
    if (slot->recorded == 0 && slot->dropped == 0 && slot->too_large == 0) {
      continue;
    }
    ThreadEvents thread;
    thread.thread_id = slot->thread_id;
    thread.thread_name = slot->custom_name.empty() ? std::string(slot->os_name) : slot->custom_name;
    thread.exited = slot->exited.load(std::memory_order_acquire);
    thread.dropped = slot->dropped.load(std::memory_order_relaxed);
    thread.too_large = slot->too_large.load(std::memory_order_relaxed);
    uint64_t remaining = slot->recorded;
    for (EventBlock* block = slot->first_block; block && remaining; block = block->next) {
      const uint64_t n = std::min<uint64_t>(remaining, EventBlock::kRecords);
      thread.events.AddChunk(block->records, n);  // Read in place.
      remaining -= n;
    }
    capture.dropped += thread.dropped;
    capture.too_large += thread.too_large;
    capture.largest_too_large = std::max(capture.largest_too_large, slot->largest_too_large);
    capture.threads.push_back(std::move(thread));
  }
  capture.dropped += g_unattributed_drops.load(std::memory_order_relaxed);
  // Threads that ended are collected now; their slots can go.
  registry.erase(std::remove_if(registry.begin(), registry.end(),
                                [](RegisteredThread* slot) {
                                  if (!slot->exited.load(std::memory_order_acquire)) {
                                    return false;
                                  }
                                  delete slot;
                                  return true;
                                }),
                 registry.end());
  g_pool.store(nullptr, std::memory_order_release);
  capture.pool = std::move(g_owned_pool);
  return capture;
}

namespace {

// The name of `record` (of `owner`) is intact: see "Ring mode" above.
bool NameIsIntact(const EventPool& pool, const void* owner, const EventRecord& record) {
  const char* block = pool.BlockOf(record.name);
  const auto* header = reinterpret_cast<const RingBlockHeader*>(block);
  // The tick read after the name was copied: the start, or for a name
  // copied when the record was written (kNameCopiedAtEnd), the end.
  const bool copied_at_end = record.args_offset != internal::kSourceLocationTag &&
                             (record.args_offset & internal::kNameCopiedAtEnd) != 0;
  const uint64_t after_copy = copied_at_end ? record.end_ticks : record.start_ticks;
  return header->kind.load(std::memory_order_relaxed) == RingBlockHeader::kNames &&
         header->owner == owner && static_cast<int64_t>(after_copy - header->claim_ticks) > 0 &&
         record.name >= block + sizeof(RingBlockHeader) &&
         record.name_length <= static_cast<size_t>(block + EventBlock::kBytes - record.name);
}

// What the records of the ring's blocks take in a copy now (blocks
// claimed later add theirs as the copy fills).
uint64_t RingRecordBytes(const EventPool& pool) {
  uint64_t blocks = 0;
  for (uint64_t i = 0; i < pool.num_blocks(); ++i) {
    const RingBlockHeader* header = pool.ring_header(i);
    if (header->state.load(std::memory_order_acquire) != RingBlockHeader::kFree &&
        header->kind.load(std::memory_order_relaxed) == RingBlockHeader::kRecords) {
      ++blocks;
    }
  }
  return blocks * EventBlock::kRecords * sizeof(EventRecord);
}

}  // namespace

Result<RecordedCapture> SnapshotRing(int64_t last_ms) {
  std::lock_guard<std::mutex> lock(g_control_mutex);
  if (g_owned_pool == nullptr || !g_owned_pool->ring()) {
    return Result<>(ErrorCode::kFailedPrecondition,
                    "no flight recorder is running (a ring capture), so there is nothing to "
                    "snapshot");
  }
  if (last_ms < 0) {
    return Result<>(
        ErrorCode::kInvalidArgument,
        "last_ms must be >= 0 (0 = everything retained), got " + std::to_string(last_ms));
  }
  EventPool& pool = *g_owned_pool;
  // Mapped before the freeze; for the whole ring its records' part also
  // committed, so that the copy made during the freeze (when threads that
  // fill their block drop events) takes few page faults: the names' part
  // faults in as it fills (a few huge pages), and the pages between never
  // do, so a dump never takes the ring's size.
  auto copy = SnapshotCopy::Create(pool.capacity_bytes(), last_ms == 0 ? RingRecordBytes(pool) : 0);
  if (!copy.ok()) return copy.status();
  // Freeze claims, then wait until every section that may have missed the
  // freeze has ended (the argument at the top of this file).
  pool.set_frozen(true);
  std::lock_guard<std::mutex> registry_lock(g_registry_mutex);
  WaitForWriters();
  const ClockSample now = TakeClockSample();
  RecordedCapture capture;
  capture.copy = std::move(*copy);
  capture.clock = TickConverter(g_start_sample, now);
  capture.stop_epoch_ns = now.realtime_ns;
  capture.buffer_bytes = pool.capacity_bytes();
  capture.ring_overwrote = pool.recycled();
  uint64_t cutoff_ticks = 0;
  if (last_ms > 0) {
    const double window_ticks = static_cast<double>(last_ms) * 1e6 / capture.clock.ns_per_tick();
    if (window_ticks < static_cast<double>(now.ticks)) {
      cutoff_ticks = now.ticks - static_cast<uint64_t>(window_ticks);
    }
  }

  // Each thread's records blocks, oldest first (claim order).
  std::map<const void*, std::vector<std::pair<uint64_t, const EventBlock*>>> blocks;
  for (uint64_t i = 0; i < pool.num_blocks(); ++i) {
    const RingBlockHeader* header = pool.ring_header(i);
    if (header->state.load(std::memory_order_acquire) == RingBlockHeader::kFree ||
        header->kind.load(std::memory_order_relaxed) != RingBlockHeader::kRecords) {
      continue;
    }
    blocks[header->owner].emplace_back(header->ticket, reinterpret_cast<const EventBlock*>(header));
  }
  SnapshotCopy& copied = *capture.copy;
  uint64_t first_start = now.ticks;
  for (RegisteredThread* slot : *g_registry) {
    const bool exited = slot->exited.load(std::memory_order_acquire);
    const EventRecord* cursor = slot->cursor.load(std::memory_order_acquire);
    auto owned = blocks.find(slot);
    if (owned != blocks.end()) {
      std::sort(owned->second.begin(), owned->second.end(),
                [](const auto& a, const auto& b) { return a.first < b.first; });
      const char* current = cursor != nullptr ? pool.BlockOf(cursor - 1) : nullptr;
      ThreadEvents thread;
      for (const auto& [ticket, block] : owned->second) {
        const size_t count = reinterpret_cast<const char*>(block) == current
                                 ? static_cast<size_t>(cursor - block->records)
                                 : EventBlock::kRecords;
        const EventRecord* chunk = copied.next_record();
        for (size_t i = 0; i < count; ++i) {
          EventRecord record = block->records[i];
          if (record.end_ticks < cutoff_ticks) continue;
          if (pool.Contains(record.name)) {
            // The copy holds the ring's bytes: it has room for every name
            // and record the ring does.
            const char* name = NameIsIntact(pool, slot, record)
                                   ? copied.CopyName(record.name, record.name_length)
                                   : nullptr;
            if (name == nullptr) {
              ++capture.clipped;
              continue;
            }
            record.name = name;
          }
          if (!copied.AppendRecord(record)) {
            ++capture.clipped;
            continue;
          }
          if (static_cast<int64_t>(record.start_ticks - first_start) < 0) {
            first_start = record.start_ticks;
          }
        }
        const size_t kept = static_cast<size_t>(copied.next_record() - chunk);
        if (kept > 0) thread.events.AddChunk(chunk, kept);
      }
      if (!thread.events.empty()) {
        thread.thread_id = slot->thread_id;
        thread.thread_name =
            slot->custom_name.empty() ? std::string(slot->os_name) : slot->custom_name;
        thread.exited = exited;
        thread.dropped = slot->dropped.load(std::memory_order_relaxed);
        thread.too_large = slot->too_large.load(std::memory_order_relaxed);
        capture.dropped += thread.dropped;
        capture.too_large += thread.too_large;
        capture.threads.push_back(std::move(thread));
      }
    }
  }
  // An exited thread writes no more: its current blocks rejoin the ring,
  // and its slot goes once no block holds its events (its drops were
  // counted above).
  EraseOverwrittenExitedSlots(pool);
  pool.set_frozen(false);
  copied.ReleaseUnused();  // After the freeze: recording goes on meanwhile.
  capture.dropped += g_unattributed_drops.load(std::memory_order_relaxed);
  capture.start_epoch_ns =
      std::max(g_start_sample.realtime_ns, capture.clock.ToEpochNs(first_start));
  return capture;
}

}  // namespace core
}  // namespace neuronprof
