// The trace recorder's control side: starts and stops captures and hands the
// recorded events to the host collector. The per-event side is inline in
// include/neuronprof/internal/recorder.h.
#ifndef NEURONPROF_SRC_CORE_RECORDER_H_
#define NEURONPROF_SRC_CORE_RECORDER_H_

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "neuronprof/internal/recorder.h"
#include "src/core/clock.h"
#include "src/core/result.h"

// NEURONPROF_API here: exported from libneuronprof_markers for the other
// neuronprof libraries (not public API; see neuronprof/export.h).

namespace neuronprof {
namespace core {

class EventPool;
class SnapshotCopy;

// One thread's records, read in place from the capture's pool blocks (no
// copy): valid while the RecordedCapture that holds the pool lives.
class RecordsInPool {
 public:
  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = internal::EventRecord;
    using difference_type = std::ptrdiff_t;
    using pointer = const internal::EventRecord*;
    using reference = const internal::EventRecord&;
    const_iterator(const RecordsInPool* records, size_t chunk, size_t index)
        : records_(records), chunk_(chunk), index_(index) {}
    reference operator*() const { return records_->chunks_[chunk_].first[index_]; }
    pointer operator->() const { return &**this; }
    const_iterator& operator++() {
      if (++index_ == records_->chunks_[chunk_].second) {
        ++chunk_;
        index_ = 0;
      }
      return *this;
    }
    bool operator==(const const_iterator& other) const {
      return chunk_ == other.chunk_ && index_ == other.index_;
    }
    bool operator!=(const const_iterator& other) const { return !(*this == other); }

   private:
    const RecordsInPool* records_;
    size_t chunk_;
    size_t index_;
  };

  // Appends the first `count` (> 0) records of one block.
  void AddChunk(const internal::EventRecord* first, size_t count) {
    chunks_.emplace_back(first, count);
    size_ += count;
  }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const_iterator begin() const { return {this, 0, 0}; }
  const_iterator end() const { return {this, chunks_.size(), 0}; }
  const internal::EventRecord& front() const { return chunks_.front().first[0]; }
  const internal::EventRecord& operator[](size_t i) const;
  const internal::EventRecord& at(size_t i) const;  // Throws out_of_range.
  // The first record of the block that holds record `i` (< size()), and
  // in `*index` its index: where to cut the records in two runs.
  // (Inline: the markers library exports no more than it must.)
  const_iterator BlockStartOf(size_t i, size_t* index) const {
    size_t chunk = 0;
    *index = 0;
    while (i >= chunks_[chunk].second) {
      i -= chunks_[chunk].second;
      *index += chunks_[chunk++].second;
    }
    return {this, chunk, 0};
  }

 private:
  std::vector<std::pair<const internal::EventRecord*, size_t>> chunks_;
  size_t size_ = 0;
};

// Everything one thread recorded in one capture.
struct ThreadEvents {
  int64_t thread_id = 0;
  std::string thread_name;
  bool exited = false;     // The thread ended before the capture did.
  RecordsInPool events;    // In the order they ended; in the pool's blocks.
  uint64_t dropped = 0;    // Lost to a full buffer.
  uint64_t too_large = 0;  // Markers larger than a block (never recorded).
};

// The result of one capture. Owns the pool that records and copied names
// live in (read in place, never copied), so they stay valid as long as this
// object lives; drop it once the host plane is built to free the pool.
struct NEURONPROF_API RecordedCapture {
  RecordedCapture();
  ~RecordedCapture();
  RecordedCapture(RecordedCapture&&) noexcept;
  RecordedCapture& operator=(RecordedCapture&&) noexcept;

  std::vector<ThreadEvents> threads;  // Threads with at least one event or drop.
  uint64_t dropped = 0;               // Sum over threads, plus unattributed.
  // Markers whose name and arguments, encoded, exceed one block
  // (kBlockBytes): not recorded, and not counted in `dropped`.
  uint64_t too_large = 0;
  uint64_t largest_too_large = 0;  // Encoded bytes of the largest one.
  uint64_t buffer_bytes = 0;       // Size of the capture's buffer.
  TickConverter clock;
  int64_t start_epoch_ns = 0;
  int64_t stop_epoch_ns = 0;
  std::unique_ptr<EventPool> pool;
  // A flight recorder's snapshot (SnapshotRing) holds a copy instead of the
  // pool, which recording goes on using: the records and the names they
  // point at, in one mapping of the ring's size.
  std::unique_ptr<SnapshotCopy> copy;
  // Events left out of a snapshot because their name's block had been
  // recycled (the ring's cut went between the record and its name).
  uint64_t clipped = 0;
  // A flight recorder's ring had overwritten older events: the snapshot
  // starts where the ring's oldest retained block does, not earlier.
  bool ring_overwrote = false;
};

// Enables markers up to `host_tracer_level` (1..3; 0 records nothing but
// still opens a window). Fails if a capture is already running or the
// buffer cannot be reserved.
NEURONPROF_API Result<> StartRecording(int host_tracer_level, uint64_t max_buffer_bytes);

// Disables markers, waits until no thread is still writing a record, and
// returns everything recorded since StartRecording.
NEURONPROF_API Result<RecordedCapture> StopRecording();

bool IsRecording();

// Smallest ring: a thread needs a records and a names block, and the ring
// needs blocks to recycle.
constexpr uint64_t kMinRingBytes = 4 * 64 * 1024;

// Starts a capture that never fills (the flight recorder): `ring_bytes`
// (whole 64 KiB blocks, at least kMinRingBytes) are reused oldest block
// first once every block has been claimed. Same markers, same hot path as
// StartRecording; read with SnapshotRing, end with StopRecording (whose
// result then holds no events).
NEURONPROF_API Result<> StartRingRecording(int host_tracer_level, uint64_t ring_bytes);

// Copies what the ring holds (only events that ended in the last `last_ms`
// milliseconds when > 0) while recording goes on: threads are never
// blocked; a thread that fills its block during the copy (a few ms) drops
// events, counted. Events whose name was overwritten are left out and
// counted in `clipped`. The copy takes one mapping of the ring's size,
// committed before the copy starts and unmapped with the result.
// FailedPrecondition without a running ring capture; ResourceExhausted
// when the copy cannot be mapped.
NEURONPROF_API Result<RecordedCapture> SnapshotRing(int64_t last_ms = 0);

// Threads whose recording state (about 200 bytes each) is kept now: live
// ones that recorded, and exited ones whose events a capture may still
// hold. Internal; tests count what exited threads leave behind with it.
NEURONPROF_API size_t RegisteredThreadCount();

// Size of one buffer block; every thread that records claims at least one.
constexpr uint64_t kBlockBytes = 64 * 1024;

}  // namespace core
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_CORE_RECORDER_H_
