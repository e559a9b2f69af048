// libtorch's allocators report every allocation and free to the memory
// reporter in the calling thread's debug info (c10::MemoryReportingInfoBase,
// c10/core/Allocator.h). During a capture with profile_memory, neuronprof
// puts its reporter there on every thread that runs an operator, and records
// each report as a MemoryAllocation / MemoryDeallocation event (xplane/schema.h)
// on that thread.
//
// The slot is libtorch's profilers' own (PROFILER_STATE): a thread where
// torch's profiler is already active keeps it, and is counted instead.
// The window closes on whichever thread ends it, and a thread's slot can
// only be changed by that thread: the reporter leaves each thread at its
// next allocation or free, after which libtorch's profilers find the slot
// empty again.
#ifndef NEURONPROF_SRC_COLLECTORS_TORCH_MEMORY_REPORTER_H_
#define NEURONPROF_SRC_COLLECTORS_TORCH_MEMORY_REPORTER_H_

#include <cstdint>

namespace neuronprof {
namespace collectors {
namespace libtorch {

// Turns memory reports on for the capture that is open now (and installs
// the reporter on the calling thread), or off.
void EnableMemoryReports();
void DisableMemoryReports();

// Installs the reporter on the calling thread if reports are on and the
// slot is free. Called at each operator start: one relaxed load when off.
void EnsureMemoryReporterOnThisThread();

// Threads whose memory was not recorded because libtorch's own profiler
// held the slot, since the last call (reset on read).
uint64_t TakeBlockedMemoryThreadCount();

}  // namespace libtorch
}  // namespace collectors
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_COLLECTORS_TORCH_MEMORY_REPORTER_H_
