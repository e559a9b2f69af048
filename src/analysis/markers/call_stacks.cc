#include "src/analysis/markers/call_stacks.h"

#include <algorithm>
#include <iterator>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "fmt/format.h"
#include "src/analysis/text/terminal_text.h"
#include "src/analysis/timeline/host_spans.h"
#include "src/xplane/absl_view.h"
#include "src/xplane/saturating.h"
#include "src/xplane/schema.h"
#include "src/xplane/work_count.h"
#include "src/xplane/xplane_visitor.h"

namespace neuronprof {
namespace analysis {
namespace {

using tensorflow::profiler::XEvent;

constexpr std::string_view kDeeperScopesCut = "[deeper scopes cut]";
constexpr std::string_view kOuterFramesCut = "[outer frames cut]";

// The stack stat of every host event that has one, as a view into the
// XSpace: an interned stack is shared by many events, never copied.
absl::flat_hash_map<const XEvent*, std::string_view> EventStacks(
    const tensorflow::profiler::XSpace& space) {
  absl::flat_hash_map<const XEvent*, std::string_view> stacks;
  for (const auto& raw : space.planes()) {
    if (!xplane::IsHostPlane(raw)) continue;
    const xplane::PlaneVisitor plane(raw);
    plane.ForEachEvent([&](const xplane::EventVisitor& event) {
      if (auto stack = event.StrStatNamed(xplane::kStackStat); stack && !stack->empty()) {
        stacks.emplace(&event.raw(), *stack);
      }
    });
  }
  return stacks;
}

// A frame as the folded format can hold it: no ';' (the separator) or
// line break inside.
std::string FoldedFrame(std::string_view name) {
  std::string out(name);
  std::replace(out.begin(), out.end(), ';', ',');
  std::replace(out.begin(), out.end(), '\n', ' ');
  return out;
}

// Builds the tree of folded paths, one node per distinct path, in time and
// memory linear in the frames it adds, depth capped at kMaxFoldedFrames.
class StackTrie {
 public:
  explicit StackTrie(FoldedStacks* out) : out_(out) {}

  // The node of a recorded stack ("inner\nouter"), outermost frame first;
  // each distinct stack text is walked once.
  int32_t Stack(std::string_view stack) {
    const auto key = std::make_pair(stack.data(), stack.size());
    if (auto it = stack_nodes_.find(key); it != stack_nodes_.end()) {
      if (it->second.second) ++out_->cut_stacks;
      return it->second.first;
    }
    std::vector<std::string_view> frames;  // innermost first
    for (std::string_view rest = stack; !rest.empty();) {
      const size_t end = std::min(rest.find('\n'), rest.size());
      frames.push_back(rest.substr(0, end));
      rest.remove_prefix(std::min(end + 1, rest.size()));
    }
    // Room for the cut frame, the scope itself and, past it, the one
    // frame of deeper scopes cut (Scope).
    const size_t keep = kMaxFoldedFrames - 3;
    int32_t node = -1;
    const bool cut = frames.size() > keep;
    if (cut) {
      node = Child(-1, kOuterFramesCut);
      frames.resize(keep);
      ++out_->cut_stacks;
    }
    for (auto it = frames.rbegin(); it != frames.rend(); ++it) node = Child(node, *it);
    stack_nodes_.emplace(key, std::make_pair(node, cut));
    return node;
  }

  // `name` under `parent`; at the depth limit, the one cut node there.
  int32_t Scope(int32_t parent, std::string_view name) {
    const int depth = parent < 0 ? 0 : out_->nodes[parent].depth;
    if (depth + 1 < kMaxFoldedFrames) return Child(parent, name);
    ++out_->cut_scopes;
    if (depth + 1 == kMaxFoldedFrames) return Child(parent, kDeeperScopesCut);
    return parent;  // Already the cut node.
  }

 private:
  int32_t Child(int32_t parent, std::string_view frame) {
    xplane::CountWork();
    auto [it, added] = children_.try_emplace({parent, xplane::AbslView(frame)},
                                             static_cast<int32_t>(out_->nodes.size()));
    if (added) {
      FoldedStacks::Node node;
      node.parent = parent;
      node.frame = frame;
      node.depth = parent < 0 ? 1 : out_->nodes[parent].depth + 1;
      out_->nodes.push_back(node);
    }
    return it->second;
  }

  FoldedStacks* out_;
  absl::flat_hash_map<std::pair<int32_t, absl::string_view>, int32_t> children_;
  // A stack's text (where it lies in the XSpace) -> its node, and whether
  // it was cut.
  absl::flat_hash_map<std::pair<const char*, size_t>, std::pair<int32_t, bool>> stack_nodes_;
};

// The folded path of `node`, outermost frame first.
std::string PathOf(const FoldedStacks& stacks, int32_t node) {
  std::vector<int32_t> chain;
  for (; node >= 0; node = stacks.nodes[node].parent) chain.push_back(node);
  std::string path;
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    if (!path.empty()) path.push_back(';');
    path += FoldedFrame(stacks.nodes[*it].frame);
  }
  return path;
}

}  // namespace

FoldedStacks FoldCallStacks(const tensorflow::profiler::XSpace& space) {
  FoldedStacks folded;
  const auto stacks = EventStacks(space);
  if (stacks.empty()) return folded;
  const HostSpans spans = CollectHostSpans(space);
  StackTrie trie(&folded);
  // owner[i]: the innermost span with a stack enclosing span i (itself
  // included), -1 for none; node_of[i]: that span's node.
  std::vector<int32_t> owner(spans.spans.size(), -1);
  std::vector<int32_t> node_of(spans.spans.size(), -1);
  for (size_t i = 0; i < spans.spans.size(); ++i) {
    const HostSpan& span = spans.spans[i];
    const int32_t outer = span.parent >= 0 ? owner[span.parent] : -1;
    auto stack = span.event != nullptr ? stacks.find(span.event) : stacks.end();
    if (stack != stacks.end()) {
      owner[i] = static_cast<int32_t>(i);
      const int32_t caller = outer >= 0 ? node_of[outer] : trie.Stack(stack->second);
      node_of[i] = trie.Scope(caller, span.name);
    } else {
      owner[i] = outer;
    }
    if (owner[i] >= 0) {
      int64_t& ps = folded.nodes[node_of[owner[i]]].self_ps;
      ps = SaturatingAdd(ps, span.self_ps);  // Times come from a file.
    }
  }
  return folded;
}

std::string FormatFolded(const FoldedStacks& stacks) {
  // Sorted by path, paths that print alike (a ';' made ',') as one line.
  std::vector<std::pair<std::string, int64_t>> lines;
  for (size_t n = 0; n < stacks.nodes.size(); ++n) {
    if (stacks.nodes[n].self_ps > 0) {
      lines.emplace_back(PathOf(stacks, static_cast<int32_t>(n)), stacks.nodes[n].self_ps);
    }
  }
  std::sort(lines.begin(), lines.end());
  std::string out;
  for (size_t i = 0; i < lines.size();) {
    int64_t ps = 0;
    size_t j = i;
    for (; j < lines.size() && lines[j].first == lines[i].first; ++j) {
      ps = SaturatingAdd(ps, lines[j].second);
    }
    if (ps / 1000 > 0) out += fmt::format("{} {}\n", lines[i].first, ps / 1000);
    i = j;
  }
  return out;
}

std::string FormatStackTree(const FoldedStacks& stacks, size_t limit) {
  if (stacks.empty()) return "";
  // Totals bottom-up: a child is always made after its parent.
  const size_t n = stacks.nodes.size();
  std::vector<int64_t> total(n);
  std::vector<std::vector<int32_t>> children(n);
  std::vector<int32_t> roots;
  for (size_t i = n; i-- > 0;) {
    const FoldedStacks::Node& node = stacks.nodes[i];
    total[i] = SaturatingAdd(total[i], node.self_ps);
    if (node.parent >= 0) total[node.parent] = SaturatingAdd(total[node.parent], total[i]);
  }
  for (size_t i = 0; i < n; ++i) {
    const int32_t parent = stacks.nodes[i].parent;
    (parent >= 0 ? children[parent] : roots).push_back(static_cast<int32_t>(i));
  }
  auto hottest_first = [&](std::vector<int32_t>& order) {
    std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
      if (total[a] != total[b]) return total[a] > total[b];
      return stacks.nodes[a].frame < stacks.nodes[b].frame;
    });
  };
  fmt::memory_buffer out;
  auto to = std::back_inserter(out);
  fmt::format_to(to,
                 "\nCall stacks (top-down: time under each caller frame; --folded FILE writes "
                 "them for flamegraph.pl or speedscope)\n{:>10} {:>10}  {}\n",
                 "total_ms", "self_ms", "frame");
  // Depth first without recursion: a file decides how deep the tree is.
  hottest_first(roots);
  std::vector<int32_t> pending(roots.rbegin(), roots.rend());
  for (size_t rows = 0; !pending.empty() && rows < limit; ++rows) {
    const int32_t at = pending.back();
    pending.pop_back();
    const FoldedStacks::Node& node = stacks.nodes[at];
    fmt::format_to(to, "{:>10.3f} {:>10.3f}  {:{}}{}\n", total[at] / 1e9, node.self_ps / 1e9, "",
                   (node.depth - 1) * 2, TerminalText(FoldedFrame(node.frame)));
    hottest_first(children[at]);
    pending.insert(pending.end(), children[at].rbegin(), children[at].rend());
  }
  if (stacks.cut_stacks > 0 || stacks.cut_scopes > 0) {
    fmt::format_to(to,
                   "  Paths are cut at {} frames: {} recorded stacks kept their innermost "
                   "frames under \"{}\", {} scopes nested deeper count under \"{}\"\n",
                   kMaxFoldedFrames, stacks.cut_stacks, kOuterFramesCut, stacks.cut_scopes,
                   kDeeperScopesCut);
  }
  return fmt::to_string(out);
}

}  // namespace analysis
}  // namespace neuronprof
