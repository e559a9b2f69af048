// Call stacks folded from what a file holds: work and output bounded by the
// file's size whatever its stacks' depth, nesting or width (no recursion on
// a file's depth, no path rebuilt or stack copied per event).
#include "src/analysis/markers/call_stacks.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>
#include <string>

#include "src/xplane/schema.h"
#include "src/xplane/work_count.h"
#include "src/xplane/xplane_builder.h"

namespace neuronprof {
namespace {

using tensorflow::profiler::XSpace;
constexpr int64_t kUs = 1000 * 1000;  // ps
constexpr size_t kAll = std::numeric_limits<size_t>::max();

// "f<n-1>\n...\nf0": n frames, innermost (f<n-1>) first, as recorded.
std::string Stack(int frames, const std::string& prefix = "f") {
  std::string stack;
  for (int i = frames - 1; i >= 0; --i) {
    stack += prefix + std::to_string(i);
    if (i > 0) stack += '\n';
  }
  return stack;
}

size_t Count(const std::string& text, char c) { return std::count(text.begin(), text.end(), c); }

TEST_CASE("a recorded stack deeper than the cap keeps its innermost frames") {
  XSpace space;
  xplane::XPlaneBuilder host(space.add_planes());
  host.plane()->set_name(xplane::kHostPlaneName);
  auto* line = host.AddLine(1, "main", 0);
  auto* event = host.AddEvent(line, host.EventMetadataId("deep"), 0, 10 * kUs);
  host.AddStat(event, xplane::kStackStat, Stack(400000));
  const analysis::FoldedStacks folded = analysis::FoldCallStacks(space);
  CHECK(folded.cut_stacks == 1);
  const std::string lines = analysis::FormatFolded(folded);
  REQUIRE(Count(lines, '\n') == 1);
  // The cut frame, 509 recorded frames, the scope: room for one more.
  CHECK(Count(lines, ';') == analysis::kMaxFoldedFrames - 2);
  CHECK(lines.rfind("[outer frames cut];f399491;", 0) == 0);
  CHECK(lines.find(";f399998;f399999;deep 10000\n") != std::string::npos);  // the innermost
  const std::string tree = analysis::FormatStackTree(folded, kAll);
  CHECK(Count(tree, '\n') == 3 + (analysis::kMaxFoldedFrames - 1) + 1);  // header, rows, note
  CHECK(tree.find("Paths are cut at 512 frames: 1 recorded stacks") != std::string::npos);
}

TEST_CASE("scopes nested past the cap give their time to one cut path") {
  const int depth = 100000;
  XSpace space;
  xplane::XPlaneBuilder host(space.add_planes());
  host.plane()->set_name(xplane::kHostPlaneName);
  auto* line = host.AddLine(1, "main", 0);
  for (int i = 0; i < depth; ++i) {  // each 1 us inside the one before
    auto* event = host.AddEvent(line, host.EventMetadataId("scope" + std::to_string(i)),
                                int64_t{i} * kUs, int64_t{depth - i} * 2 * kUs);
    host.AddRefStat(event, xplane::kStackStat, Stack(3));
  }
  xplane::ResetWorkCount();
  const analysis::FoldedStacks folded = analysis::FoldCallStacks(space);
  CHECK(xplane::WorkCount() <= 4 * static_cast<uint64_t>(depth));  // linear, not quadratic
  CHECK(folded.nodes.size() == analysis::kMaxFoldedFrames);
  CHECK(folded.cut_scopes == depth - (analysis::kMaxFoldedFrames - 4));
  const std::string lines = analysis::FormatFolded(folded);
  CHECK(Count(lines, '\n') == analysis::kMaxFoldedFrames - 3);  // one per scope path kept
  CHECK(lines.size() < 8u * analysis::kMaxFoldedFrames * analysis::kMaxFoldedFrames);
  // Every scope's self time is somewhere: 2 us each.
  int64_t ns = 0;
  for (size_t at = 0; at < lines.size();) {
    const size_t end = lines.find('\n', at);
    ns += std::stoll(lines.substr(lines.rfind(' ', end) + 1, end));
    at = end + 1;
  }
  CHECK(ns == depth * int64_t{2000});
}

TEST_CASE("one interned stack shared by many events is walked once") {
  XSpace space;
  xplane::XPlaneBuilder host(space.add_planes());
  host.plane()->set_name(xplane::kHostPlaneName);
  auto* line = host.AddLine(1, "main", 0);
  const std::string stack = Stack(20000, "frame_with_a_long_name_");
  for (int i = 0; i < 4000; ++i) {
    auto* event = host.AddEvent(line, host.EventMetadataId("op"), int64_t{i} * 2 * kUs, kUs);
    host.AddRefStat(event, xplane::kStackStat, stack);
  }
  xplane::ResetWorkCount();
  const analysis::FoldedStacks folded = analysis::FoldCallStacks(space);
  CHECK(xplane::WorkCount() <= analysis::kMaxFoldedFrames + 3 * 4000);
  CHECK(folded.cut_stacks == 4000);
  CHECK(analysis::FormatFolded(folded).find(";op 4000000\n") != std::string::npos);
}

TEST_CASE("hundreds of thousands of frames under one caller stay linear") {
  XSpace space;
  xplane::XPlaneBuilder host(space.add_planes());
  host.plane()->set_name(xplane::kHostPlaneName);
  auto* line = host.AddLine(1, "main", 0);
  const int width = 300000;
  for (int i = 0; i < width; ++i) {
    auto* event = host.AddEvent(line, host.EventMetadataId("op"), int64_t{i} * 2 * kUs, kUs);
    host.AddStat(event, xplane::kStackStat, "leaf" + std::to_string(i) + "\nmain");
  }
  xplane::ResetWorkCount();
  const analysis::FoldedStacks folded = analysis::FoldCallStacks(space);
  CHECK(xplane::WorkCount() <= 8 * static_cast<uint64_t>(width));
  CHECK(folded.nodes.size() == 1 + 2 * static_cast<size_t>(width));
  const std::string tree = analysis::FormatStackTree(folded, 5);
  CHECK(Count(tree, '\n') == 3 + 5);
  CHECK(tree.find("\n   300.000      0.000  main\n") != std::string::npos);
}

}  // namespace
}  // namespace neuronprof
