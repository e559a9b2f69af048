// Completes memory events after the capture, off the allocating threads:
// the libtorch reporter records only what it must (address, bytes, the
// allocator's totals, allocator name, operator), and this adds what xprof's
// memory_profile and the exporters read besides.
#ifndef NEURONPROF_SRC_ANALYSIS_MEMORY_MEMORY_ANNOTATOR_H_
#define NEURONPROF_SRC_ANALYSIS_MEMORY_MEMORY_ANNOTATOR_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "proto/xplane.pb.h"

namespace neuronprof {
namespace analysis {

// For every memory event (xplane::IsMemoryEventName) on "/host:*" planes,
// adds the stats it lacks: allocation_bytes (= requested_bytes),
// memory_device_type and device_id (from an allocator name "cpu",
// "cuda:1"), bytes_available (pool_reserved_bytes - bytes_allocated, when
// the pool size is known) and peak_bytes_in_use (the allocator's highest
// bytes_allocated so far, in time order). Stats already there are kept, so
// running it twice changes nothing.
void AnnotateMemoryEvents(tensorflow::profiler::XSpace* space);

// The stats AnnotateMemoryEvents adds to one event (48 bytes: one per
// memory event of a capture).
struct MemoryStatsToAdd {
  enum Has : uint8_t { kAllocationBytes = 1, kAvailable = 2, kPeak = 4 };
  int line = 0, event = 0;  // Where in its plane.
  int device_type = -1;     // Index into MemoryAnnotation::device_types; -1: no device stats.
  uint8_t has = 0;          // Has bits: which of the values below are added.
  int64_t allocation_bytes = 0, device_id = 0, available = 0, peak = 0;
};
// What AnnotateMemoryEvents adds, by plane index.
struct MemoryAnnotation {
  std::vector<std::pair<int, std::vector<MemoryStatsToAdd>>> planes;
  std::vector<std::string> device_types;  // "CPU", "CUDA"
};

// AnnotateMemoryEvents in two halves. The walk only reads `space`, so it
// may run beside other readers of it (the operator walk, on another
// core); adding then needs the same planes, lines and events in the same
// order (other stats and metadata may have been added meanwhile).
MemoryAnnotation PlanMemoryAnnotation(const tensorflow::profiler::XSpace& space);
void AddMemoryAnnotation(const MemoryAnnotation& annotation, tensorflow::profiler::XSpace* space);

// AddMemoryAnnotation in two steps. Resolving makes the stat metadata (it
// grows the planes' metadata, so nothing else may touch them); adding
// only adds stats to the memory events, so its parts (each plane's events
// cut into `parts` runs) may run side by side.
struct MemoryAnnotationIds {  // A plane's; -1 where no event adds the stat.
  int64_t allocation_bytes = -1, device_type = -1, device_id = -1, available = -1, peak = -1;
  std::vector<int64_t> device_type_refs;  // By index into MemoryAnnotation::device_types.
};
std::vector<MemoryAnnotationIds> ResolveMemoryStatIds(const MemoryAnnotation& annotation,
                                                      tensorflow::profiler::XSpace* space);
void AddMemoryStats(const MemoryAnnotation& annotation, const std::vector<MemoryAnnotationIds>& ids,
                    int part, int parts, tensorflow::profiler::XSpace* space);

}  // namespace analysis
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_ANALYSIS_MEMORY_MEMORY_ANNOTATOR_H_
