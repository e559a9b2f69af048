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
#include <string>
#include <string_view>
#include <vector>

#include "proto/xplane.pb.h"

namespace neuronprof {
namespace analysis {

// At most this many frames in a folded path: a recorded stack longer than
// that keeps its innermost frames under one "[outer frames cut]" frame,
// and scopes nested deeper give their time to the path at the limit, which
// ends in "[deeper scopes cut]". Bounds the work and the output of one
// stack or one nesting by a constant, whatever a file holds.
inline constexpr int kMaxFoldedFrames = 512;

// The folded paths ("main (a.cc:3);Run() (a.cc:9);aten::conv2d") as a
// tree, one node per distinct path with its self time in picoseconds;
// empty when no event has a stack. Frames are views into the XSpace,
// which must outlive it (or static text: the cut frames).
struct FoldedStacks {
  struct Node {
    int32_t parent = -1;  // -1: a root; parents come before their children
    std::string_view frame;
    int depth = 1;  // frames from the root, this one included
    int64_t self_ps = 0;
  };
  std::vector<Node> nodes;
  int64_t cut_stacks = 0;  // recorded stacks cut to kMaxFoldedFrames
  int64_t cut_scopes = 0;  // scopes nested past kMaxFoldedFrames
  bool empty() const { return nodes.empty(); }
};
FoldedStacks FoldCallStacks(const tensorflow::profiler::XSpace& space);

// Brendan Gregg's folded format, which flamegraph.pl and speedscope read:
// one "path weight" line per path (sorted), the weight in nanoseconds.
std::string FormatFolded(const FoldedStacks& stacks);

// A top-down tree: each frame's total and self time in ms, children by
// total time, at most `limit` rows (hottest first); "" without stacks.
std::string FormatStackTree(const FoldedStacks& stacks, size_t limit);

}  // namespace analysis
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_ANALYSIS_MARKERS_CALL_STACKS_H_
