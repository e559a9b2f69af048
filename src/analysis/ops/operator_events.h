// Framework operator events of an XSpace, nested and costed: the one walk
// over host planes that the annotator, the op table and the step breakdown
// share.
//
// No double counting (each op's *self* cost; totals sum self costs):
// - FLOPs go to the innermost ops with a non-zero FLOP formula
//   (aten::linear -> aten::addmm: the addmm carries 2·M·N·K, linear 0);
// - an op that owns FLOPs also owns the bytes of everything nested in it
//   (addmm's bias broadcast copy_, a conv backend's copies);
// - elsewhere bytes go to the innermost ops with a non-zero byte formula.
#ifndef NEURONPROF_SRC_ANALYSIS_OPS_OPERATOR_EVENTS_H_
#define NEURONPROF_SRC_ANALYSIS_OPS_OPERATOR_EVENTS_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/container/node_hash_set.h"
#include "proto/xplane.pb.h"
#include "src/analysis/ops/op_cost.h"

namespace neuronprof {
namespace analysis {

enum class CostSource : uint8_t {
  kOwn,         // self cost from the op's own formula
  kInChildren,  // counted in ops nested in it (or, under a FLOP owner, above it)
  kUnknown,     // no formula, or the inputs it needs were not recorded
};
std::string_view CostSourceName(CostSource source);  // "own", "in_children", "unknown"

// Scope and layer paths end in "..." past this many bytes (deeper markers
// share the cut path): a path is built per marker, and paths as long as the
// nesting is deep would take memory quadratic in the depth.
inline constexpr size_t kMaxScopeBytes = 1024;

// The text fields are views: `name` into the XSpace's event metadata (valid
// while the XSpace lives; annotation adds stats but never event metadata),
// the others, and `formula`, into OperatorEvents::store.
struct OperatorEvent {                 // Fields by size: 152 bytes, one per operator of a capture.
  int plane = 0, line = 0, event = 0;  // indices into the XSpace
  int parent = -1;                     // enclosing operator, index into ops
  int64_t metadata_id = 0;             // the event's when walked (before annotation)
  std::string_view name;               // "aten::addmm"
  std::string_view direction;          // "fprop", "bprop", "" when not recorded
  std::string_view scope;              // enclosing markers, '/'-joined (kMaxScopeBytes)
  std::string_view layer;              // enclosing "layer:" markers, ':'-joined
  int64_t seq = 0;                     // when has_seq
  int64_t start_ps = 0, duration_ps = 0;
  int64_t self_ps = 0;  // minus the directly nested operators
  int64_t self_flops = 0, self_bytes = 0;
  const OpCost* formula = nullptr;  // never null in CollectOperatorEvents' ops
  bool has_seq = false;
  CostSource source = CostSource::kUnknown;
};

// What the ops' views point into: each distinct string and cost once, at
// a stable address (a million ops share a few hundred of each).
class OperatorEventsStore {
 public:
  std::string_view Intern(std::string_view text);
  const OpCost* Keep(OpCost cost);
  // Keeps `other` (and what points into it) alive as long as this one.
  void Adopt(std::unique_ptr<OperatorEventsStore> other);

 private:
  absl::node_hash_set<std::string> strings_;
  std::deque<OpCost> costs_;
  std::vector<std::unique_ptr<OperatorEventsStore>> adopted_;
};

// std::allocator, except that a vector's resize() leaves the new elements
// unwritten: CollectOperatorEvents sizes the ops once per line, then its two
// walks write their own ranges of them side by side (no copy to join
// them, no page of a million ops touched twice). Only for types a plain
// write may bring to life (trivially copyable and destructible).
template <typename T>
struct WrittenLaterAllocator : std::allocator<T> {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);
  template <typename U>
  struct rebind {
    using other = WrittenLaterAllocator<U>;
  };
  WrittenLaterAllocator() = default;
  template <typename U>
  WrittenLaterAllocator(const WrittenLaterAllocator<U>&) noexcept {}
  template <typename U>
  void construct(U*) noexcept {}
  template <typename U, typename... Args>
  void construct(U* at, Args&&... args) {
    ::new (static_cast<void*>(at)) U(std::forward<Args>(args)...);
  }
};
using OperatorEventList = std::vector<OperatorEvent, WrittenLaterAllocator<OperatorEvent>>;

struct OperatorEvents {
  OperatorEventList ops;  // per line, parents before children
  // Owns the ops' scope, layer, direction and formula; held by pointer so
  // that moving OperatorEvents keeps every view valid.
  std::unique_ptr<OperatorEventsStore> store = std::make_unique<OperatorEventsStore>();
  int64_t malformed_inputs = 0;  // ops whose input stats did not parse
  std::string first_input_error;
};

// Every operator (event with the framework stat) on planes named "/host:*".
// A line of many events is walked in runs on threads of their own (cut where no
// event is open), with the same result as one walk.
OperatorEvents CollectOperatorEvents(const tensorflow::profiler::XSpace& space);
// The same, splitting lines of at least `min_split_events` events (tests
// split small ones).
OperatorEvents CollectOperatorEvents(const tensorflow::profiler::XSpace& space,
                                     size_t min_split_events);

}  // namespace analysis
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_ANALYSIS_OPS_OPERATOR_EVENTS_H_
