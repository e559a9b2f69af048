// NVIDIA GPU activity in neuronprof captures, through CUPTI (link
// neuronprof::cupti; built when the CUDA toolkit with CUPTI is found).
//
//   neuronprof::EnableCuptiCollector();     // once, at startup
//   neuronprof::Profiler profiler(options); // options.device_tracer_level
//                                           // >= 1 (the default); 0 = off
//   ... kernels, copies ...
//   profiler.Stop();
//
// Each capture then holds, besides "/host:CPU":
//   "/device:GPU:<n>"  one line per CUDA stream with kernels (stat
//                      kernel_details "regs:.. static_shared:..
//                      dynamic_shared:.. grid:x,y,z block:x,y,z occ_pct:..",
//                      and occupancy stats when the driver reports the
//                      GPU's limits), copies named "MemcpyHtoD",
//                      "MemcpyDtoH", ... (memcpy_details, bytes) and
//                      "Memset" events;
//   "/host:CPU-GPU-runtime"  the CUDA runtime and driver calls
//                      (cudaLaunchKernel, cudaMemcpyAsync, cuLaunchKernel,
//                      ...), one line per host thread (OS thread id), linked
//                      to the device work they queued by correlation_id.
// CUPTI's clock is mapped onto the host clock by two readings of both, at
// start and at stop. Records CUPTI loses (full buffers) are reported as
// drops in the capture's warnings.
//
// Without a GPU or NVIDIA driver the collector's start fails with an error
// naming the cause; the capture keeps its host plane.
#ifndef NEURONPROF_CUPTI_H_
#define NEURONPROF_CUPTI_H_

#include <cstddef>

#include "absl/status/status.h"
#include "neuronprof/export.h"

namespace neuronprof {

struct CuptiOptions {
  // CUPTI writes activity records into buffers it asks neuronprof for. The
  // pool is reserved at the first GPU capture (address space only: memory
  // is used as records arrive) and reused by later captures. When every
  // buffer is full, CUPTI drops records and the capture reports how many.
  size_t buffer_bytes = size_t{4} << 20;  // Multiple of 8, 64 KiB .. 1 GiB.
  size_t max_buffers = 32;                // 1 .. 4096.
  // Also record CUDA driver API calls (cu*), e.g. launches made by Triton
  // or other libraries that bypass the runtime.
  bool driver_api = true;
};

// Adds the CUPTI collector to every later capture (registered under the
// name "cupti"). Idempotent: calling it again with equal options is OK;
// different options are FailedPrecondition (the first call's options stay).
// InvalidArgument for out-of-range options. Thread-safety: any thread, at
// any time (the first call's options win).
NEURONPROF_API absl::Status EnableCuptiCollector(const CuptiOptions& options = {});

}  // namespace neuronprof

#endif  // NEURONPROF_CUPTI_H_
