// The libtorch RecordFunction callbacks that turn aten operators into
// recorder events. Registered for one capture window at a time.
#ifndef NEURONPROF_SRC_COLLECTORS_TORCH_OP_CALLBACKS_H_
#define NEURONPROF_SRC_COLLECTORS_TORCH_OP_CALLBACKS_H_

#include <cstdint>
#include <string_view>

#include "absl/status/status.h"

namespace neuronprof {
namespace collectors {
namespace libtorch {

// Adds the global callbacks (operators, and c10d Work for collectives:
// collectives.h; world_size is the job's, for bus bandwidth).
// FailedPrecondition if they are already added.
// record_stacks: each op also records its caller's return addresses
// (internal::kStackKey).
absl::Status AddOperatorCallbacks(bool record_shapes, int world_size = 1,
                                  bool record_stacks = false);
// Removes them. Ops that are still running when this returns end without
// being recorded (the recorder's window is closed first).
void RemoveOperatorCallbacks();

// Ops not recorded because their inputs did not fit the formatting buffers
// or because they nested deeper than the per-thread stack; since the last
// call (reset on read).
uint64_t TakeSkippedOperatorCount();

// The innermost operator recorded on the calling thread right now, or ""
// (memory events name the operator that allocated).
std::string_view CurrentOperatorName();

}  // namespace libtorch
}  // namespace collectors
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_COLLECTORS_TORCH_OP_CALLBACKS_H_
