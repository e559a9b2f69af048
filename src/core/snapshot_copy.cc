#include "src/core/snapshot_copy.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14; older kernels: faults in the copy.
#endif

namespace neuronprof {
namespace core {

Result<std::unique_ptr<SnapshotCopy>> SnapshotCopy::Create(uint64_t bytes, uint64_t commit_bytes) {
  void* base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED) {
    return Result<>(ErrorCode::kResourceExhausted,
                    "cannot map " + std::to_string(bytes) +
                        " bytes for the flight recorder's snapshot: " + std::strerror(errno));
  }
  madvise(base, bytes, MADV_HUGEPAGE);
  commit_bytes = std::min(commit_bytes, bytes);
  if (commit_bytes > 0) madvise(base, commit_bytes, MADV_POPULATE_WRITE);
  return std::unique_ptr<SnapshotCopy>(new SnapshotCopy(static_cast<char*>(base), bytes));
}

void SnapshotCopy::ReleaseUnused() {
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t from = (reinterpret_cast<uintptr_t>(records_end_) + page - 1) & ~(page - 1);
  const uintptr_t to = reinterpret_cast<uintptr_t>(names_begin_) & ~(page - 1);
  if (from < to) madvise(reinterpret_cast<void*>(from), to - from, MADV_DONTNEED);
}

SnapshotCopy::~SnapshotCopy() { munmap(base_, bytes_); }

}  // namespace core
}  // namespace neuronprof
