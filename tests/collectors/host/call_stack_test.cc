// Call stacks (NEURONPROF_SCOPE_STACK, kWithStack): recorded as return
// addresses, symbolized when the host plane is built into the stat "stack"
// against this binary's own functions and lines (built with -g).
#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "neuronprof/trace.h"
#include "proto/xplane.pb.h"
#include "src/collectors/host/host_collector.h"
#include "src/core/recorder.h"
#include "src/xplane/schema.h"
#include "src/xplane/xplane_visitor.h"
#include "tests/host_plane_capture.h"

// Known frames, outside neuronprof's namespace (whose frames are left out)
// and never inlined, each recording the line of its call.
int g_leaf_line = 0;
int g_middle_line = 0;
int g_plain_line = 0;

[[gnu::noinline]] void StackTestLeaf() {
  g_leaf_line = __LINE__ + 1;
  NEURONPROF_SCOPE_STACK("leaf");
}

[[gnu::noinline]] void StackTestMiddle() {
  g_middle_line = __LINE__ + 1;
  StackTestLeaf();
  asm volatile("");  // Keeps the call a call, not a tail jump.
}

[[gnu::noinline]] void StackTestPlain(std::string name) {
  g_plain_line = __LINE__ + 1;
  neuronprof::ScopedTrace t(name, neuronprof::kWithStack);
}

namespace neuronprof {
namespace {

using tensorflow::profiler::XSpace;

// The stack stat of every event named `name`, one entry per event.
std::vector<std::string> Stacks(const XSpace& space, std::string_view name) {
  std::vector<std::string> stacks;
  for (const auto& plane : space.planes()) {
    const xplane::PlaneVisitor visitor(plane);
    visitor.ForEachLine([&](const xplane::LineVisitor& line) {
      line.ForEachEvent([&](const xplane::EventVisitor& event) {
        if (event.Name() != name) return;
        stacks.emplace_back(event.StrStatNamed(xplane::kStackStat).value_or("<none>"));
      });
    });
  }
  return stacks;
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// "function (path/call_stack_test.cc:line)": the path as the line table
// has it (relative or absolute, by how this file was compiled).
bool IsFrame(const std::string& frame, const std::string& function, int line) {
  const std::string head = function + " (";
  const std::string tail = "/call_stack_test.cc:" + std::to_string(line) + ")";
  return frame.size() > head.size() + tail.size() && frame.compare(0, head.size(), head) == 0 &&
         frame.compare(frame.size() - tail.size(), tail.size(), tail) == 0;
}

TEST_CASE("a marker's stack names its callers' functions and lines, innermost first") {
  const XSpace space = testing::CaptureHostPlane([] {
    for (int i = 0; i < 2; ++i) StackTestMiddle();
    NEURONPROF_SCOPE("no_stack");
  });
  const std::vector<std::string> stacks = Stacks(space, "leaf");
  REQUIRE(stacks.size() == 2);
  CHECK(stacks[0] == stacks[1]);
  const std::vector<std::string> frames = absl::StrSplit(stacks[0], '\n');
  INFO(stacks[0]);
  REQUIRE(frames.size() >= 3);
  // The marker's own line comes first: the profiler's frames are left out.
  CHECK(IsFrame(frames[0], "StackTestLeaf()", g_leaf_line));
  CHECK(IsFrame(frames[1], "StackTestMiddle()", g_middle_line));
  CHECK(Contains(frames[2], "/call_stack_test.cc:"));  // The lambda above.
  CHECK(Stacks(space, "no_stack") == std::vector<std::string>{"<none>"});
}

TEST_CASE("a copied marker with kWithStack records its stack too") {
  const XSpace space = testing::CaptureHostPlane([] { StackTestPlain("plain"); });
  const std::vector<std::string> stacks = Stacks(space, "plain");
  REQUIRE(stacks.size() == 1);
  INFO(stacks[0]);
  const std::vector<std::string> frames = absl::StrSplit(stacks[0], '\n');
  CHECK(std::any_of(frames.begin(), frames.end(), [](const std::string& frame) {
    return IsFrame(frame,
                   "StackTestPlain(std::__cxx11::basic_string<char, std::char_traits<char>, "
                   "std::allocator<char> >)",
                   g_plain_line);
  }));
}

}  // namespace
}  // namespace neuronprof
