// Writes a crafted capture as an .xplane.pb:
//   write_worst_capture SHAPE N FILE
// SHAPE is one of tests/analysis/worst_shapes.h (nested_steps,
// nested_markers, runtime_calls, memory_steps, stat_keys) of N events, or "escapes": a
// small capture whose host, plane, thread, event and stat names, stat
// values and warnings hold terminal escape sequences (N is ignored).
#include <cstdio>
#include <cstdlib>
#include <string>

#include "src/export/atomic_file.h"
#include "tests/analysis/worst_shapes.h"

namespace {

using neuronprof::xplane::XPlaneBuilder;

// ESC ] 0 ; title BEL (retitles the terminal), ESC [ 2 J (clears it), a
// carriage return over a fake line, a C1 CSI (U+009B), DEL and a newline.
constexpr char kForged[] =
    "\x1b]0;owned\x07\x1b[2J\rall good\xc2\x9b"
    "31m\x7f\nfake";

tensorflow::profiler::XSpace Escapes() {
  using namespace neuronprof;
  const std::string forged(kForged);
  tensorflow::profiler::XSpace space;
  space.add_hostnames("host" + forged);
  xplane::AddWarning(&space, "warning" + forged);
  XPlaneBuilder host(xplane::FindOrAddPlane(&space, xplane::kHostPlaneName));
  auto* line = host.AddLine(1, "thread" + forged, 0);
  auto* step = host.AddEvent(line, host.EventMetadataId("step" + forged), 0, 100000000);
  host.AddStat(step, xplane::kRootLevelStat, int64_t{1});
  auto* marker = host.AddEvent(line, host.EventMetadataId("marker" + forged), 1000, 50000000);
  host.AddStat(marker, xplane::kSourceStat, std::string_view("src/" + forged + ":1"));
  auto* op = host.AddEvent(line, host.EventMetadataId("aten::op" + forged), 2000, 10000000);
  host.AddStat(op, xplane::kOpFrameworkStat, std::string_view("torch"));
  host.AddStat(op, xplane::kOpDirectionStat, std::string_view("fprop" + forged));
  XPlaneBuilder odd(xplane::FindOrAddPlane(&space, "/host:plane" + forged));
  odd.AddLine(2, "line" + forged, 0);
  return space;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s SHAPE N FILE\n", argv[0]);
    return 2;
  }
  const std::string shape = argv[1];
  const int n = std::atoi(argv[2]);
  tensorflow::profiler::XSpace space;
  if (shape == "nested_steps") {
    space = neuronprof::testing::NestedSteps(n);
  } else if (shape == "nested_markers") {
    space = neuronprof::testing::NestedMarkers(n);
  } else if (shape == "runtime_calls") {
    space = neuronprof::testing::UnmatchedRuntimeCalls(n);
  } else if (shape == "memory_steps") {
    space = neuronprof::testing::MemoryPerStep(n);
  } else if (shape == "stat_keys") {
    space = neuronprof::testing::ManyStatKeys(n);
  } else if (shape == "escapes") {
    space = Escapes();
  } else {
    std::fprintf(stderr, "unknown shape '%s'\n", shape.c_str());
    return 2;
  }
  const auto status = neuronprof::exporter::WriteFileAtomically(argv[3], space.SerializeAsString());
  if (!status.ok()) {
    std::fprintf(stderr, "%s\n", std::string(status.message()).c_str());
    return 1;
  }
  return 0;
}
