#include "src/core/snapshot_copy.h"

#include <sys/mman.h>

#include <cerrno>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14; older kernels: faults in the copy.
#endif

namespace neuronprof {
namespace core {

absl::StatusOr<std::unique_ptr<SnapshotCopy>> SnapshotCopy::Create(uint64_t bytes, bool commit) {
  void* base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "cannot map ", bytes, " bytes for the flight recorder's snapshot: ",
        std::strerror(errno)));
  }
  madvise(base, bytes, MADV_HUGEPAGE);
  if (commit) madvise(base, bytes, MADV_POPULATE_WRITE);
  return std::unique_ptr<SnapshotCopy>(new SnapshotCopy(static_cast<char*>(base), bytes));
}

SnapshotCopy::~SnapshotCopy() { munmap(base_, bytes_); }

}  // namespace core
}  // namespace neuronprof
