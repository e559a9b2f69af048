// Call stacks (the stat "stack" of markers and operators recorded with
// NEURONPROF_SCOPE_STACK or TorchOperatorOptions::record_stacks) folded
// into a flame graph's input: each stack's frames, outermost first, then
// the event and the recorded scopes nested in it, weighted by self time.
// Every host scope's self time goes to the innermost enclosing scope with
// a stack (itself included), so the weights add up to the time spent under
// the recorded stacks. A scope with a stack nested in another one extends
// its path (the caller's frames are the enclosing scope's).
#ifndef NEURONPROF_SRC_ANALYSIS_MARKERS_CALL_STACKS_H_
#define NEURONPROF_SRC_ANALYSIS_MARKERS_CALL_STACKS_H_

#include <cstdint>
#include <map>
#include <string>

#include "proto/xplane.pb.h"

namespace neuronprof {
namespace analysis {

// Folded path ("main (a.cc:3);Run() (a.cc:9);aten::conv2d") -> self time
// in picoseconds; empty when no event has a stack.
using FoldedStacks = std::map<std::string, int64_t>;
FoldedStacks FoldCallStacks(const tensorflow::profiler::XSpace& space);

// Brendan Gregg's folded format, which flamegraph.pl and speedscope read:
// one "path weight" line per path, the weight in nanoseconds.
std::string FormatFolded(const FoldedStacks& stacks);

// A top-down tree: each frame's total and self time in ms, children by
// total time, at most `limit` rows (hottest first); "" without stacks.
std::string FormatStackTree(const FoldedStacks& stacks, size_t limit);

}  // namespace analysis
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_ANALYSIS_MARKERS_CALL_STACKS_H_
