#include "src/export/heap_trim.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "src/xplane/sanitizers.h"

namespace neuronprof {
namespace exporter {

void ReleaseFreedHeap() {
#if defined(__GLIBC__) && !NEURONPROF_SANITIZER_ALLOCATOR
  malloc_trim(0);
#endif
}

}  // namespace exporter
}  // namespace neuronprof
