// A flight-recorder snapshot's copy of the ring: one mapping of the ring's
// size (huge pages where the kernel allows), its records' part committed
// before the snapshot freezes block claims when the whole ring is copied
// (so that copy takes few page faults during the freeze; never the whole
// mapping, whose pages between records and names stay untouched: a dump
// takes less than the ring), and unmapped when the snapshot goes (so the
// process's RSS comes back whatever malloc keeps).
// Records fill it from the bottom, names from the top: what a ring holds
// never needs more than the ring's size, and the pages between them, never
// used, are given back once the copy is done (ReleaseUnused).
#ifndef NEURONPROF_SRC_CORE_SNAPSHOT_COPY_H_
#define NEURONPROF_SRC_CORE_SNAPSHOT_COPY_H_

#include <cstdint>
#include <cstring>
#include <memory>

#include "neuronprof/internal/recorder.h"
#include "src/core/result.h"

namespace neuronprof {
namespace core {

class SnapshotCopy {
 public:
  // Maps `bytes` (> 0), its first `commit_bytes` committed now (where the
  // records of a copy of the whole ring go), the rest page by page as the
  // copy fills it; ResourceExhausted when it cannot be mapped.
  static Result<std::unique_ptr<SnapshotCopy>> Create(uint64_t bytes, uint64_t commit_bytes);
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
  // Names (with their arguments) that repeat the bytes of a recent one
  // share its copy: in a full ring they take a third of the bytes, and a
  // copy that held each of them again would take the whole ring's size.
  const char* CopyName(const char* name, size_t length) {
    Recent& recent = recent_[RecentSlot(name, length)];
    if (recent.length == length && recent.copy != nullptr &&
        std::memcmp(recent.copy, name, length) == 0) {
      return recent.copy;
    }
    if (static_cast<size_t>(names_begin_ - reinterpret_cast<char*>(records_end_)) < length) {
      return nullptr;
    }
    names_begin_ -= length;
    std::memcpy(names_begin_, name, length);
    recent = Recent{names_begin_, length};
    return names_begin_;
  }

 private:
  SnapshotCopy(char* base, uint64_t bytes)
      : base_(base),
        bytes_(bytes),
        records_end_(reinterpret_cast<internal::EventRecord*>(base)),
        names_begin_(base + bytes) {}

  struct Recent {
    const char* copy = nullptr;
    size_t length = 0;
  };
  static constexpr size_t kRecentSlots = 1024;
  // From the length and the first and last 8 bytes: cheap, and what tells
  // a marker's names and argument values apart.
  static size_t RecentSlot(const char* name, size_t length) {
    uint64_t head = 0, tail = 0;
    std::memcpy(&head, name, length < 8 ? length : 8);
    if (length > 8) std::memcpy(&tail, name + length - 8, 8);
    const uint64_t mixed = (head ^ (tail * 0x9E3779B97F4A7C15ull) ^ length) * 0xFF51AFD7ED558CCDull;
    return static_cast<size_t>(mixed >> 54);  // 10 bits: kRecentSlots.
  }

  char* const base_;
  const uint64_t bytes_;
  internal::EventRecord* records_end_;
  char* names_begin_;
  Recent recent_[kRecentSlots];  // The last copy of each slot's names.
};

}  // namespace core
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_CORE_SNAPSHOT_COPY_H_
