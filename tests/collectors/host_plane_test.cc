// The host plane built from recorded markers: operators share one event
// metadata per signature, and compact keys become stat names.
#include <string>

#include <catch2/catch.hpp>

#include "neuronprof/trace.h"
#include "proto/xplane.pb.h"
#include "src/collectors/host/host_collector.h"
#include "src/core/recorder.h"
#include "src/xplane/names.h"
#include "src/xplane/xplane_visitor.h"

namespace neuronprof {
namespace {

tensorflow::profiler::XSpace CaptureHostPlane(void (*record)()) {
  REQUIRE(core::StartRecording(2, uint64_t{4} << 20).ok());
  record();
  auto capture = core::StopRecording();
  REQUIRE(capture.ok());
  tensorflow::profiler::XSpace space;
  collectors::CollectStats stats;
  collectors::AddHostPlane(*capture, &space, &stats);
  return space;
}

// An operator as the libtorch collector records it.
void Op(std::string_view dims, int64_t seq) {
  ScopedTrace op("aten::addmm", {{xplane::kOpFrameworkStat, "torch"},
                                 {xplane::kOpDirectionStat, "fprop"},
                                 {xplane::kOpSequenceStat, seq},
                                 {xplane::kOpInputDimsStat, dims}});
}

TEST_CASE("calls with one signature share a metadata; each keeps its own sequence number") {
  auto space = CaptureHostPlane([] {
    Op("[[2,3],[3,4]]", 1);
    Op("[[2,3],[3,4]]", 2);
    Op("[[8,3],[3,4]]", 3);
    ScopedTrace marker("aten::addmm");  // A user marker with an op's name.
  });
  const xplane::PlaneVisitor plane(space.planes(0));
  const xplane::LineVisitor line = plane.Line(0);
  REQUIRE(line.NumEvents() == 4);
  const int64_t dims = plane.StatId(xplane::kOpInputDimsStat);
  const int64_t seq = plane.StatId(xplane::kOpSequenceStat);
  const int64_t framework = plane.StatId(xplane::kOpFrameworkStat);
  CHECK(line.Event(0).MetadataId() == line.Event(1).MetadataId());
  CHECK(line.Event(0).MetadataId() != line.Event(2).MetadataId());
  CHECK(line.Event(0).StrStat(dims) == "[[2,3],[3,4]]");
  CHECK(line.Event(2).StrStat(dims) == "[[8,3],[3,4]]");
  CHECK(line.Event(1).IntStat(seq) == 2);
  CHECK(line.Event(0).raw().stats_size() == 1);  // seq; the rest is the metadata's
  // The marker is no operator: its metadata carries none of the op stats.
  CHECK(line.Event(3).Name() == "aten::addmm");
  CHECK_FALSE(line.Event(3).Stat(framework).has_value());
  CHECK(line.Event(3).MetadataId() != line.Event(0).MetadataId());
}

TEST_CASE("compact keys are stored under the stat names; values are kept as they are") {
  auto space = CaptureHostPlane([] {
    ScopedTrace alloc(xplane::kMemoryAllocationEvent,
                      {{xplane::kCompactAddressKey, int64_t{4096}},
                       {xplane::kCompactAllocatorNameKey, "cpu"},
                       {"user_key", xplane::kCompactTfOpKey}});
  });
  const xplane::PlaneVisitor plane(space.planes(0));
  const xplane::EventVisitor event = plane.Line(0).Event(0);
  CHECK(event.IntStatNamed(xplane::kAddressStat) == 4096);
  CHECK(event.StrStatNamed(xplane::kAllocatorNameStat) == "cpu");
  CHECK(event.StrStatNamed("user_key") == std::string_view(xplane::kCompactTfOpKey));
  CHECK(plane.StatId(std::string(xplane::kCompactAddressKey)) < 0);
}

}  // namespace
}  // namespace neuronprof
