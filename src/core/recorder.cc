// Control side of the trace recorder.
//
// Safety argument: every write a thread makes into a capture's memory (its
// slot fields, records, copied names) happens inside a write section that
// first announces itself (`writing = 1`) and then checks the capture is
// still current. StopRecording publishes the new state, issues an
// asymmetric barrier (membarrier(2), or a full fence on the writer side where
// that is missing) and waits for every `writing` flag to clear. After that no
// thread can write into the capture, so it can be read and freed.
#include "src/core/recorder.h"

#include <linux/membarrier.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <stdexcept>
#include <cstring>
#include <mutex>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "neuronprof/trace.h"
#include "src/core/event_args.h"
#include "src/core/event_pool.h"

namespace neuronprof {
namespace internal {

std::atomic<uint32_t> g_capture_state{0};
__thread ThreadSlot* t_slot __attribute__((tls_model("initial-exec"))) =
    nullptr;

}  // namespace internal

namespace core {
namespace {

using internal::EventBlock;
using internal::EventRecord;
using internal::ThreadSlot;

// A slot plus what only the control side needs.
struct RegisteredThread : ThreadSlot {
  int64_t thread_id = 0;
  char os_name[32] = {};           // Read by the thread at its first event.
  std::string custom_name;         // SetCurrentThreadName; guarded by g_registry_mutex.
  std::atomic<bool> exited{false};
};

std::mutex g_registry_mutex;
std::vector<RegisteredThread*>* g_registry = new std::vector<RegisteredThread*>();

// Serialises StartRecording / StopRecording.
std::mutex g_control_mutex;
std::atomic<EventPool*> g_pool{nullptr};
uint32_t g_last_generation = 0;   // Guarded by g_control_mutex.
std::unique_ptr<EventPool> g_owned_pool;  // Guarded by g_control_mutex.
ClockSample g_start_sample;               // Guarded by g_control_mutex.
// Events lost on threads that have no slot (ending threads).
std::atomic<uint64_t> g_unattributed_drops{0};

std::atomic<bool> g_use_membarrier{false};
std::once_flag g_barrier_once;

void InitBarrier() {
  const long supported = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
  if (supported > 0 && (supported & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
      syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0,
              0) == 0) {
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

// Detaches the slot when its thread ends; the slot itself lives on until
// the next StopRecording has collected it.
struct SlotOwner {
  RegisteredThread* slot = nullptr;
  ~SlotOwner() {
    if (slot == nullptr) return;
    internal::t_slot = nullptr;
    t_thread_exiting = true;
    slot->exited.store(true, std::memory_order_release);
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

EventPool* PoolFor(uint32_t state) {
  EventPool* pool = g_pool.load(std::memory_order_acquire);
  if (pool == nullptr || pool->generation() != internal::GenerationOf(state)) {
    return nullptr;
  }
  return pool;
}

// Inside a write section: points the slot at a fresh capture.
void ResetSlot(RegisteredThread* slot, uint32_t state) {
  slot->generation = internal::GenerationOf(state);
  slot->cursor = slot->limit = nullptr;
  slot->arena_cursor = slot->arena_limit = nullptr;
  slot->first_block = slot->last_block = nullptr;
  slot->recorded = 0;
  slot->dropped = 0;
  slot->too_large = 0;
  slot->largest_too_large = 0;
  char name[17] = {};
  prctl(PR_GET_NAME, name, 0, 0, 0);
  std::memcpy(slot->os_name, name, sizeof(name));
}

// Inside a write section: makes room for one more record.
bool EnsureRecordSpace(RegisteredThread* slot, uint32_t state) {
  if (slot->cursor != slot->limit) return true;
  EventPool* pool = PoolFor(state);
  auto* block = pool ? static_cast<EventBlock*>(pool->ClaimBlock()) : nullptr;
  if (block == nullptr) return false;
  block->next = nullptr;
  if (slot->last_block != nullptr) {
    slot->last_block->next = block;
  } else {
    slot->first_block = block;
  }
  slot->last_block = block;
  slot->cursor = block->records;
  slot->limit = block->records + EventBlock::kRecords;
  return true;
}

}  // namespace
}  // namespace core

namespace internal {

void RecordEventSlow(uint32_t state, const char* name, uint32_t name_length,
                     uint32_t args_offset, uint64_t start_ticks,
                     uint64_t end_ticks) {
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
    ++slot->dropped;
    LeaveWriteSection(slot);
    return;
  }
  AppendRecord(slot, name, name_length, args_offset, start_ticks, end_ticks);
  LeaveWriteSection(slot);
}

const char* CopyNameWithArgs(uint32_t state, std::string_view name,
                             const TraceArg* args, size_t num_args,
                             const TraceArg* more_args, size_t num_more_args,
                             uint32_t* out_length, uint32_t* out_args_offset) {
  auto* slot = core::CurrentThreadSlot();
  if (slot == nullptr) return nullptr;
  if (!EnterWriteSection(slot, state)) return nullptr;
  if (slot->generation != GenerationOf(state)) core::ResetSlot(slot, state);
  const core::MarkerText marker{name, args, num_args, more_args, num_more_args};
  char* begin = slot->arena_cursor;
  const size_t room = static_cast<size_t>(slot->arena_limit - begin);
  size_t size = core::EncodeMarker(begin, room, marker);
  if (begin == nullptr || size > room) {
    if (size > EventBlock::kBytes) {
      // No block could hold it: leave the arena as it is, so that nothing
      // else is lost, and count it apart from the drops of a full buffer.
      ++slot->too_large;
      slot->largest_too_large = std::max<uint64_t>(slot->largest_too_large, size);
      LeaveWriteSection(slot);
      return nullptr;
    }
    core::EventPool* pool = core::PoolFor(state);
    begin = pool ? static_cast<char*>(pool->ClaimBlock()) : nullptr;
    if (begin == nullptr) {
      ++slot->dropped;  // The event this name belonged to is lost.
      LeaveWriteSection(slot);
      return nullptr;
    }
    // The arena's cursor and limit always move to a new block together.
    slot->arena_cursor = begin;
    slot->arena_limit = begin + EventBlock::kBytes;
    size = core::EncodeMarker(begin, EventBlock::kBytes, marker);
  }
  slot->arena_cursor = begin + size;
  LeaveWriteSection(slot);
  *out_length = static_cast<uint32_t>(size);
  *out_args_offset = num_args + num_more_args == 0
                         ? 0
                         : static_cast<uint32_t>(name.size() + 1);
  return begin;
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
  // step_num identifies the step; _r=1 marks the event as a root that
  // groups everything nested under it, as TSL's StepTraceAnnotation does.
  const TraceArg fixed[] = {TraceArg("step_num", step_num), TraceArg("_r", 1)};
  if (trace_.Admit(kTraceCritical)) {
    trace_.CopyWithArgs(name, fixed, 2, extra_args.begin(), extra_args.size());
  }
}

namespace core {

const internal::EventRecord& RecordsInPool::operator[](size_t i) const {
  size_t chunk = 0;
  while (i >= chunks_[chunk].second) i -= chunks_[chunk++].second;  // i < size()
  return chunks_[chunk].first[i];
}

const internal::EventRecord& RecordsInPool::at(size_t i) const {
  if (i >= size_) {
    throw std::out_of_range(absl::StrCat("record ", i, " of ", size_));
  }
  return (*this)[i];
}

RecordedCapture::RecordedCapture() = default;
RecordedCapture::~RecordedCapture() = default;
RecordedCapture::RecordedCapture(RecordedCapture&&) noexcept = default;
RecordedCapture& RecordedCapture::operator=(RecordedCapture&&) noexcept = default;

absl::Status StartRecording(int host_tracer_level, uint64_t max_buffer_bytes) {
  if (host_tracer_level < 0 || host_tracer_level > 3) {
    return absl::InvalidArgumentError(absl::StrCat(
        "host_tracer_level must be 0..3, got ", host_tracer_level));
  }
  std::lock_guard<std::mutex> lock(g_control_mutex);
  if (g_owned_pool != nullptr) {
    return absl::FailedPreconditionError(
        "a capture is already running in this process; stop it first (only "
        "one capture at a time)");
  }
  std::call_once(g_barrier_once, InitBarrier);
  InitTickSource();
  uint32_t generation = (g_last_generation + 1) & 0xffffffu;
  if (generation == 0) generation = 1;
  auto pool = EventPool::Create(max_buffer_bytes, generation);
  if (!pool.ok()) return pool.status();
  g_last_generation = generation;
  g_owned_pool = std::move(*pool);
  g_unattributed_drops.store(0, std::memory_order_relaxed);
  g_pool.store(g_owned_pool.get(), std::memory_order_release);
  g_start_sample = TakeClockSample();
  internal::g_capture_state.store((generation << 8) | static_cast<uint32_t>(host_tracer_level),
                        std::memory_order_release);
  return absl::OkStatus();
}

bool IsRecording() {
  std::lock_guard<std::mutex> lock(g_control_mutex);
  return g_owned_pool != nullptr;
}

absl::StatusOr<RecordedCapture> StopRecording() {
  std::lock_guard<std::mutex> lock(g_control_mutex);
  if (g_owned_pool == nullptr) {
    return absl::FailedPreconditionError("no capture is running");
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
    thread.thread_name =
        slot->custom_name.empty() ? std::string(slot->os_name) : slot->custom_name;
    thread.exited = slot->exited.load(std::memory_order_acquire);
    thread.dropped = slot->dropped;
    thread.too_large = slot->too_large;
    uint64_t remaining = slot->recorded;
    for (EventBlock* block = slot->first_block; block && remaining;
         block = block->next) {
      const uint64_t n = std::min<uint64_t>(remaining, EventBlock::kRecords);
      thread.events.AddChunk(block->records, n);  // Read in place.
      remaining -= n;
    }
    capture.dropped += thread.dropped;
    capture.too_large += thread.too_large;
    capture.largest_too_large =
        std::max(capture.largest_too_large, slot->largest_too_large);
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

}  // namespace core
}  // namespace neuronprof
