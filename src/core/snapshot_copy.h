// A flight-recorder snapshot's copy of the ring: one mapping of the ring's
// size (huge pages where the kernel allows), committed before the snapshot
// freezes block claims when the whole ring is copied (so that copy takes no
// page fault during the freeze), and unmapped when the snapshot goes (so
// the process's RSS comes back whatever malloc keeps).
// Records fill it from the bottom, names from the top: what a ring holds
// never needs more than the ring's size, and the pages between them, never
// used, are given back once the copy is done (ReleaseUnused).
#ifndef NEURONPROF_SRC_CORE_SNAPSHOT_COPY_H_
#define NEURONPROF_SRC_CORE_SNAPSHOT_COPY_H_

#include <cstdint>
#include <cstring>
#include <memory>

#include "absl/status/statusor.h"
#include "neuronprof/internal/recorder.h"

namespace neuronprof {
namespace core {

class SnapshotCopy {
 public:
  // Maps `bytes` (> 0), committed now when `commit` (a copy of the whole
  // ring), else page by page as the copy fills it; ResourceExhausted when
  // it cannot be mapped.
  static absl::StatusOr<std::unique_ptr<SnapshotCopy>> Create(uint64_t bytes, bool commit);
  ~SnapshotCopy();
  SnapshotCopy(const SnapshotCopy&) = delete;
  SnapshotCopy& operator=(const SnapshotCopy&) = delete;

  // Gives the system back the committed pages that neither records nor
  // names reached; appending after it commits pages again.
  void ReleaseUnused();

  // Where the next record goes; records appended since stay contiguous.
  const internal::EventRecord* next_record() const { return records_end_; }
  // Appends `record` (false: no room left).
  bool AppendRecord(const internal::EventRecord& record) {
    if (static_cast<uint64_t>(names_begin_ - reinterpret_cast<char*>(records_end_)) <
        sizeof(record)) {
      return false;
    }
    *records_end_++ = record;
    return true;
  }
  // A copy of `length` bytes at `name`, or nullptr when no room is left.
  const char* CopyName(const char* name, size_t length) {
    if (static_cast<size_t>(names_begin_ - reinterpret_cast<char*>(records_end_)) < length) {
      return nullptr;
    }
    names_begin_ -= length;
    std::memcpy(names_begin_, name, length);
    return names_begin_;
  }

 private:
  SnapshotCopy(char* base, uint64_t bytes)
      : base_(base),
        bytes_(bytes),
        records_end_(reinterpret_cast<internal::EventRecord*>(base)),
        names_begin_(base + bytes) {}

  char* const base_;
  const uint64_t bytes_;
  internal::EventRecord* records_end_;
  char* names_begin_;
};

}  // namespace core
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_CORE_SNAPSHOT_COPY_H_
