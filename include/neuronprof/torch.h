// libtorch operators in neuronprof captures (link neuronprof::torch).
//
//   neuronprof::EnableTorchOperators();               // once, at startup
//   neuronprof::ProfilerOptions options;
//   options.profile_type = neuronprof::ProfileType::kOperator;
//   neuronprof::Profiler profiler(options);
//   ... forward, backward, optimizer step ...
//
// During a kOperator capture every aten operator (and every autograd
// backward node) that libtorch's RecordFunction reports becomes an event on
// its thread's line of the "/host:CPU" plane, nested under the ScopedTrace
// markers around it, with stats:
//   seq            autograd sequence number (links a backward node to the
//                  forward op that created it)
//   direction      "fprop", or "bprop" inside the autograd engine
//   fwd_thread_id  thread of the forward op (backward nodes)
//   input_dims, input_types, input_values   (with record_shapes)
//   scope, layer, tf_op, flops, bytes_accessed   (added when the capture
//                  ends; see docs/OPERATORS.md)
// Callbacks are registered when a kOperator window opens and removed when
// it closes, so libtorch runs at full speed outside captures. Operators need
// host_tracer_level >= 1. Remote captures through the profiler server
// (TensorBoard's Capture Profile, `neuronprof capture`) have no
// profile_type: once enabled here, they record operators when the client
// asks for host_tracer_level >= 2 (the default).
#ifndef NEURONPROF_TORCH_H_
#define NEURONPROF_TORCH_H_

#include "neuronprof/export.h"
#include "absl/status/status.h"

namespace neuronprof {

struct TorchOperatorOptions {
  // Record each op's input shapes, dtypes and scalar arguments. Needed for
  // FLOPs and bytes; costs a few hundred ns per op (libtorch has to hand
  // the inputs over).
  bool record_shapes = true;
  // Record every allocation and free of libtorch's allocators (CPU, CUDA)
  // made during the window, as MemoryAllocation / MemoryDeallocation events
  // on the thread that made it, with the address, bytes, the allocator's
  // total allocated and reserved bytes after it, the device and the
  // innermost operator. Covers threads that run operators during the
  // window (libtorch reports through a per-thread slot, which neuronprof
  // fills at each thread's first operator); a thread where libtorch's own
  // profiler is active keeps it and is reported in the capture's warnings.
  // After the window the slot is given back at each thread's next
  // allocation or free; until then libtorch's own profiler refuses to start
  // on that thread ("already enabled").
  // libtorch's CPU allocator counts only blocks allocated while a memory
  // profiler listens: its totals start from the first capture.
  bool profile_memory = true;
};

// Makes every later capture with ProfileType::kOperator (and every remote
// capture at host_tracer_level >= 2) record libtorch operators. Safe to call again (the latest options apply to the next
// capture) and from any thread.
NEURONPROF_API absl::Status EnableTorchOperators(const TorchOperatorOptions& options = {});

}  // namespace neuronprof

#endif  // NEURONPROF_TORCH_H_
