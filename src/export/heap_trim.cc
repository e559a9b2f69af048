#include "src/export/heap_trim.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define NEURONPROF_SANITIZER_ALLOCATOR 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define NEURONPROF_SANITIZER_ALLOCATOR 1
#endif

namespace neuronprof {
namespace exporter {

void ReleaseFreedHeap() {
#if defined(__GLIBC__) && !defined(NEURONPROF_SANITIZER_ALLOCATOR)
  malloc_trim(0);
#endif
}

}  // namespace exporter
}  // namespace neuronprof
