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

#include <cstdint>
#include <optional>
#include <string_view>

#include "absl/status/status.h"
#include "neuronprof/export.h"
#include "neuronprof/trace.h"

namespace torch {
namespace nn {
class Module;
}  // namespace nn
}  // namespace torch

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
  // Record each op's call stack: up to 32 return addresses when the op
  // starts (cost per op in docs/PERFORMANCE.md), symbolized once per
  // distinct address when the capture ends. The event's stat "stack" (the
  // Kineto trace's "Call stack") lists the frames from the code that
  // called into libtorch outwards, "function (file:line)"; libtorch's and
  // neuronprof's own frames before it are left out. file:line needs the
  // caller's debug info (-g). An op run by the TorchScript interpreter
  // also gets its script frames first, "function (file.py:line)" of the
  // source the module was scripted from (as torch.profiler's with_stack);
  // those are read and formatted when the op starts, which allocates.
  bool record_stacks = false;
};

// Makes every later capture with ProfileType::kOperator (and every remote
// capture at host_tracer_level >= 2) record libtorch operators. Safe to call again (the latest
// options apply to the next capture) and from any thread. Thread-safety: any thread, at any time.
NEURONPROF_API absl::Status EnableTorchOperators(const TorchOperatorOptions& options = {});

// Module scopes: the operator table's `layer` and `scope` columns from the
// modules' registered names, without hand-written "layer:" markers.
//
//   neuronprof::NameModules(*model);              // once, after building it
//   torch::Tensor Block::forward(torch::Tensor x) {
//     { neuronprof::ModuleScope s(*attn); x = attn->forward(x); }
//     ...
//
// NameModules records the dotted path of every submodule of `root` as
// libtorch's named_modules() gives it ("fc1", "encoder.layer0.attn"),
// prefixed with `root_name` when one is given (`root` itself is then named
// `root_name`). Call it again after adding modules; a later call for the same
// module replaces its name. Names are kept for the life of the process.
//
// A ModuleScope is a ScopedTrace named "layer:<path>", the same PyProf layer
// marker one would write by hand: the ops inside get layer = <path>, and a
// module's scope nested in its parent's ("encoder.layer0" then
// "encoder.layer0.attn") gives "encoder.layer0.attn", not a joined path. A
// module that NameModules never saw (or a root without `root_name`) gets a
// plain marker named by its C++ class (scope only, no layer). Outside a
// capture it costs one relaxed load; inside, a lock-free look-up and a
// copied marker name.
//
// Thread-safety: NameModules may run on any thread, also while ModuleScopes
// record on others (it takes a mutex; ModuleScope never locks); a
// ModuleScope is a scope of the thread that makes it, as a ScopedTrace is.
NEURONPROF_API void NameModules(const torch::nn::Module& root, std::string_view root_name = {});

namespace internal {
// The marker name of `module` (see ModuleScope); valid while `module` lives.
NEURONPROF_API std::string_view ModuleMarkerName(const torch::nn::Module& module);
}  // namespace internal

#ifndef NEURONPROF_DISABLE
class ModuleScope {
 public:
  explicit ModuleScope(const torch::nn::Module& module, uint32_t level = kTraceCritical) {
    if (TracingEnabled(level)) trace_.emplace(internal::ModuleMarkerName(module), level);
  }

  ModuleScope(const ModuleScope&) = delete;
  ModuleScope& operator=(const ModuleScope&) = delete;

 private:
  std::optional<ScopedTrace> trace_;
};
#else
inline namespace disabled {
class ModuleScope {
 public:
  explicit ModuleScope(const torch::nn::Module&, uint32_t = kTraceCritical) {}
  ~ModuleScope() {}  // User-provided: no unused-variable warnings.

  ModuleScope(const ModuleScope&) = delete;
  ModuleScope& operator=(const ModuleScope&) = delete;
};
}  // namespace disabled
#endif

}  // namespace neuronprof

#endif  // NEURONPROF_TORCH_H_
