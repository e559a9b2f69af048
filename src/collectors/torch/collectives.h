// c10d collectives in kOperator captures (see docs/ARCHITECTURE.md,
// "libtorch operators"). Two sources, both RecordFunctions that libtorch
// 1.13 starts itself:
//  - ProcessGroup Work objects with a profiling title ("gloo:all_reduce",
//    "nccl:broadcast"...): a USER_SCOPE, async RecordFunction whose inputs
//    are the tensors. ProcessGroupGloo (1.13) starts it on its worker
//    thread when the work begins to run and ends it when it completes, so
//    the span is the communication itself; recorded on the thread that
//    ends it, with sizes, dtype, world size and algbw/busbw. The enqueue
//    on the calling thread is only visible when the collective goes
//    through the dispatcher (c10d::ops::*, as the "c10d::<op>_" operator);
//    then both carry the same comm_id and comm_seq (BeginEnqueue).
//  - "record_param_comms" (RECORD_PARAM_COMMS: ProcessGroupNCCL in 1.13,
//    Gloo in later releases): a FUNCTION-scope op whose ParamCommsDebugInfo
//    (collective name, message sizes, dtype) becomes stats of that op.
#ifndef NEURONPROF_SRC_COLLECTORS_TORCH_COLLECTIVES_H_
#define NEURONPROF_SRC_COLLECTORS_TORCH_COLLECTIVES_H_

#include <ATen/record_function.h>

#include <cstddef>
#include <string_view>

#include "neuronprof/trace.h"

namespace neuronprof {
namespace collectors {
namespace libtorch {

// at::kParamCommsCallName / torch::kParamCommsCallName.
inline constexpr std::string_view kParamCommsName = "record_param_comms";

// The job's world size for the bus bandwidth factor and the world_size
// stat (from the capture's rank identity; 1 when unknown).
void SetCollectiveWorldSize(int world_size);

// Start/end callbacks for RecordScope::USER_SCOPE (registered with inputs).
// Only Work titles of a c10d backend are recorded; other user scopes
// return nullptr and cost nothing at their end.
std::unique_ptr<at::ObserverContext> OnWorkStart(const at::RecordFunction& fn);
void OnWorkEnd(const at::RecordFunction& fn, at::ObserverContext* ctx);

// A dispatcher collective ("c10d::allreduce_", FUNCTION scope, on the
// calling thread) starting while recorded: pushes a debug-info entry that
// libtorch propagates to the Work's RecordFunction (ProcessGroupGloo wraps
// it with the caller's thread-local state), and appends comm_id and
// comm_seq to `args` (room for kEnqueueArgs). EndEnqueue pops it.
inline bool IsDispatcherCollective(std::string_view name) {
  return name.size() > 6 && name[0] == 'c' && name.substr(0, 6) == "c10d::";
}
constexpr size_t kEnqueueArgs = 2;
size_t BeginEnqueue(TraceArg* args);
void EndEnqueue();

// Appends the stats of the current thread's ParamCommsDebugInfo (if any)
// to `args` (room for kParamCommsArgs more); returns how many.
constexpr size_t kParamCommsArgs = 8;
size_t AddParamCommsArgs(TraceArg* args);
static_assert(kEnqueueArgs <= kParamCommsArgs, "op_callbacks.cc has room for both");

// The bandwidth definitions are xplane/collective_bandwidth.h's.

}  // namespace libtorch
}  // namespace collectors
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_COLLECTORS_TORCH_COLLECTIVES_H_
