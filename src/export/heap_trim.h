// Giving freed heap memory back to the system after a large, short-lived
// export (a flight dump, a capture's response): glibc keeps what was
// freed in its arenas (one per thread that allocated), so without this a
// long-running process's RSS would stay at its peak.
#ifndef NEURONPROF_SRC_EXPORT_HEAP_TRIM_H_
#define NEURONPROF_SRC_EXPORT_HEAP_TRIM_H_

namespace neuronprof {
namespace exporter {

// malloc_trim(0) under glibc's allocator; nothing elsewhere, nor under a
// sanitizer, whose allocator replaces glibc's (calling glibc's trim there
// walks arenas the sanitizer does not own: it crashed an ASan test).
void ReleaseFreedHeap();

}  // namespace exporter
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_EXPORT_HEAP_TRIM_H_
