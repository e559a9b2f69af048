#include "src/analysis/markers/call_stacks.h"

#include <algorithm>
#include <iterator>
#include <memory>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "fmt/format.h"
#include "src/analysis/timeline/host_spans.h"
#include "src/analysis/text/terminal_text.h"
#include "src/xplane/schema.h"
#include "src/xplane/saturating.h"
#include "src/xplane/xplane_visitor.h"

namespace neuronprof {
namespace analysis {
namespace {

using tensorflow::profiler::XEvent;

// The stack stat of every host event that has one.
absl::flat_hash_map<const XEvent*, std::string> EventStacks(
    const tensorflow::profiler::XSpace& space) {
  absl::flat_hash_map<const XEvent*, std::string> stacks;
  for (const auto& raw : space.planes()) {
    if (!xplane::IsHostPlane(raw)) continue;
    const xplane::PlaneVisitor plane(raw);
    plane.ForEachEvent([&](const xplane::EventVisitor& event) {
      if (auto stack = event.StrStatNamed(xplane::kStackStat); stack && !stack->empty()) {
        stacks.emplace(&event.raw(), std::string(*stack));
      }
    });
  }
  return stacks;
}

// "inner\nouter" -> "outer;inner" (a folded path has no ';' inside a frame).
std::string OuterFirst(std::string_view stack) {
  std::vector<std::string_view> frames;
  while (!stack.empty()) {
    const size_t end = std::min(stack.find('\n'), stack.size());
    frames.push_back(stack.substr(0, end));
    stack.remove_prefix(std::min(end + 1, stack.size()));
  }
  std::string path;
  for (auto it = frames.rbegin(); it != frames.rend(); ++it) {
    if (!path.empty()) path.push_back(';');
    for (char c : *it) path.push_back(c == ';' ? ',' : c);
  }
  return path;
}

std::string FrameName(std::string_view name) {
  std::string out(name);
  std::replace(out.begin(), out.end(), ';', ',');
  std::replace(out.begin(), out.end(), '\n', ' ');
  return out;
}

struct Node {
  std::string frame;
  int64_t total_ps = 0, self_ps = 0;
  std::vector<std::unique_ptr<Node>> children;

  Node* Child(std::string_view name) {
    for (auto& child : children) {
      if (child->frame == name) return child.get();
    }
    children.push_back(std::make_unique<Node>());
    children.back()->frame = std::string(name);
    return children.back().get();
  }
};

void AppendRows(const Node& node, int depth, size_t limit, size_t* rows,
                fmt::memory_buffer& out) {
  std::vector<const Node*> order;
  for (const auto& child : node.children) order.push_back(child.get());
  std::stable_sort(order.begin(), order.end(),
                   [](const Node* a, const Node* b) { return a->total_ps > b->total_ps; });
  for (const Node* child : order) {
    if (*rows >= limit) return;
    ++*rows;
    fmt::format_to(std::back_inserter(out), "{:>10.3f} {:>10.3f}  {:{}}{}\n",
                   child->total_ps / 1e9, child->self_ps / 1e9, "", depth * 2,
                   TerminalText(child->frame));
    AppendRows(*child, depth + 1, limit, rows, out);
  }
}

}  // namespace

FoldedStacks FoldCallStacks(const tensorflow::profiler::XSpace& space) {
  FoldedStacks folded;
  const auto stacks = EventStacks(space);
  if (stacks.empty()) return folded;
  const HostSpans spans = CollectHostSpans(space);
  // owner[i]: the innermost span with a stack enclosing span i (itself
  // included), -1 for none. Paths are kept once each (many events share
  // one), as iterators into `folded`.
  std::vector<int32_t> owner(spans.spans.size(), -1);
  std::vector<FoldedStacks::iterator> path_of(spans.spans.size(), folded.end());
  std::string path;
  for (size_t i = 0; i < spans.spans.size(); ++i) {
    const HostSpan& span = spans.spans[i];
    const int32_t outer = span.parent >= 0 ? owner[span.parent] : -1;
    auto stack = span.event != nullptr ? stacks.find(span.event) : stacks.end();
    if (stack != stacks.end()) {
      owner[i] = static_cast<int32_t>(i);
      path = outer >= 0 ? path_of[outer]->first : OuterFirst(stack->second);
      path += ";" + FrameName(span.name);
      path_of[i] = folded.try_emplace(path, 0).first;
    } else {
      owner[i] = outer;
    }
    if (owner[i] >= 0) {
      int64_t& ps = path_of[owner[i]]->second;
      ps = SaturatingAdd(ps, span.self_ps);  // Times come from a file.
    }
  }
  return folded;
}

std::string FormatFolded(const FoldedStacks& stacks) {
  std::string out;
  for (const auto& [path, ps] : stacks) {
    if (ps / 1000 > 0) out += fmt::format("{} {}\n", path, ps / 1000);
  }
  return out;
}

std::string FormatStackTree(const FoldedStacks& stacks, size_t limit) {
  if (stacks.empty()) return "";
  Node root;
  for (const auto& [path, ps] : stacks) {
    Node* node = &root;
    std::string_view rest = path;
    while (true) {
      const size_t end = std::min(rest.find(';'), rest.size());
      node = node->Child(rest.substr(0, end));
      node->total_ps = SaturatingAdd(node->total_ps, ps);
      if (end == rest.size()) break;
      rest.remove_prefix(end + 1);
    }
    node->self_ps = SaturatingAdd(node->self_ps, ps);
  }
  fmt::memory_buffer out;
  fmt::format_to(std::back_inserter(out),
                 "\nCall stacks (top-down: time under each caller frame; --folded FILE writes "
                 "them for flamegraph.pl or speedscope)\n{:>10} {:>10}  {}\n",
                 "total_ms", "self_ms", "frame");
  size_t rows = 0;
  AppendRows(root, 0, limit, &rows, out);
  return fmt::to_string(out);
}

}  // namespace analysis
}  // namespace neuronprof
