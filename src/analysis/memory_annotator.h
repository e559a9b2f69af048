// Completes memory events after the capture, off the allocating threads:
// the libtorch reporter records only what it must (address, bytes, the
// allocator's totals, allocator name, operator), and this adds what xprof's
// memory_profile and the exporters read besides.
#ifndef NEURONPROF_SRC_ANALYSIS_MEMORY_ANNOTATOR_H_
#define NEURONPROF_SRC_ANALYSIS_MEMORY_ANNOTATOR_H_

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

}  // namespace analysis
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_ANALYSIS_MEMORY_ANNOTATOR_H_
