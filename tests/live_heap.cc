// Global operator new / delete on malloc, counting the usable size of each
// block (malloc_usable_size: the same figure at new and at delete).
#include "tests/live_heap.h"

#include <malloc.h>

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>

#include "src/xplane/sanitizers.h"

#if NEURONPROF_SANITIZER_ALLOCATOR
// A sanitizer's allocator owns new and delete (replacing them beside it
// mismatches its own allocations): it counts the same bytes itself.
extern "C" size_t __sanitizer_get_current_allocated_bytes();

namespace neuronprof {
namespace testing {

int64_t LiveHeapBytes() { return static_cast<int64_t>(__sanitizer_get_current_allocated_bytes()); }

}  // namespace testing
}  // namespace neuronprof

#else
namespace {

std::atomic<int64_t> live_bytes{0};

void* Allocate(std::size_t size) {
  void* p = std::malloc(size == 0 ? 1 : size);
  if (p == nullptr) throw std::bad_alloc();
  live_bytes.fetch_add(static_cast<int64_t>(malloc_usable_size(p)), std::memory_order_relaxed);
  return p;
}

void Release(void* p) noexcept {
  if (p == nullptr) return;
  live_bytes.fetch_sub(static_cast<int64_t>(malloc_usable_size(p)), std::memory_order_relaxed);
  std::free(p);
}

}  // namespace

void* operator new(std::size_t size) { return Allocate(size); }
void* operator new[](std::size_t size) { return Allocate(size); }
void operator delete(void* p) noexcept { Release(p); }
void operator delete[](void* p) noexcept { Release(p); }
void operator delete(void* p, std::size_t) noexcept { Release(p); }
void operator delete[](void* p, std::size_t) noexcept { Release(p); }

namespace neuronprof {
namespace testing {

int64_t LiveHeapBytes() { return live_bytes.load(std::memory_order_relaxed); }

}  // namespace testing
}  // namespace neuronprof

#endif  // NEURONPROF_SANITIZER_ALLOCATOR
