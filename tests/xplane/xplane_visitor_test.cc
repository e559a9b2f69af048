// The one XPlane reader: names, times and stats as analysis and the
// exporters see them, including what a crafted file can hold.
#include "src/xplane/xplane_visitor.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "src/xplane/xplane_builder.h"

namespace neuronprof {
namespace {

using tensorflow::profiler::XPlane;
using tensorflow::profiler::XSpace;

struct Sample {
  XSpace space;
  XPlane* plane = nullptr;
  Sample() {
    plane = xplane::FindOrAddPlane(&space, "/host:CPU");
    xplane::XPlaneBuilder builder(plane);
    auto* line = builder.AddLine(7, "worker", 1000);
    line->set_display_name("worker (7)");
    auto* op = builder.AddEvent(line, builder.EventMetadataId("aten::addmm"), 2'500, 4'000);
    builder.AddStat(op, "flops", int64_t{4096});
    builder.AddStat(op, "scope", std::string_view("MLP/fc1"));
    builder.AddStat(op, "big", uint64_t{1} << 63);  // Above INT64_MAX.
    // A stat on the metadata, which the event overrides, and one it does not.
    const int64_t addmm = builder.EventMetadataId("aten::addmm");
    auto& metadata = (*plane->mutable_event_metadata())[addmm];
    metadata.set_display_name("addmm");
    auto* shared = metadata.add_stats();
    shared->set_metadata_id(builder.StatMetadataId("flops"));
    shared->set_int64_value(1);
    auto* kind = metadata.add_stats();
    kind->set_metadata_id(builder.StatMetadataId("kind"));
    kind->set_str_value("matmul");
    builder.AddEvent(line, builder.EventMetadataId("step"), 0, 10'000);
  }
};

TEST_CASE("visitor: names, times and counts of a plane") {
  Sample sample;
  xplane::PlaneVisitor plane(*sample.plane);
  CHECK(plane.Name() == "/host:CPU");
  CHECK(plane.NumLines() == 1);
  CHECK(plane.NumEvents() == 2);
  CHECK(xplane::NumEvents(sample.space) == 2);
  CHECK(xplane::IsHostPlane(*sample.plane));
  CHECK_FALSE(xplane::IsDevicePlane(*sample.plane));
  std::vector<std::string> seen;
  plane.ForEachLine([&](const xplane::LineVisitor& line) {
    CHECK(line.Id() == 7);
    CHECK(line.DisplayName() == "worker (7)");
    line.ForEachEvent([&](const xplane::EventVisitor& event) {
      seen.push_back(std::string(event.Name()) + "|" + std::string(event.DisplayName()));
    });
  });
  CHECK(seen == std::vector<std::string>{"aten::addmm|addmm", "step|step"});
  const auto time = plane.Line(0).Event(0).Time();
  REQUIRE(time);
  CHECK(time->start_ns == 1002);  // line 1000 ns + 2500 ps
  CHECK(time->duration_ns == 4);
}

TEST_CASE("visitor: stats by id, the event's own winning over its metadata's") {
  Sample sample;
  xplane::PlaneVisitor plane(*sample.plane);
  const xplane::EventVisitor op = plane.Line(0).Event(0);
  CHECK(op.IntStat(plane.StatId("flops")) == 4096);  // Not the metadata's 1.
  CHECK(op.StrStat(plane.StatId("scope")) == "MLP/fc1");
  CHECK(op.StrStat(plane.StatId("kind")) == "matmul");  // From the metadata.
  CHECK_FALSE(op.IntStat(plane.StatId("big")));         // Never wrapped negative.
  CHECK_FALSE(op.Stat(plane.StatId("absent")));
  CHECK(op.StatNamed("scope")->StrValue() == "MLP/fc1");
  CHECK_FALSE(op.StatNamed("absent"));
  CHECK(plane.StatId("absent") == -1);
  std::vector<std::string> names;
  op.ForEachStat([&](const xplane::StatVisitor& stat) { names.emplace_back(stat.Name()); });
  CHECK(names == std::vector<std::string>{"flops", "scope", "big", "kind"});
  std::string scratch;
  CHECK(op.Stat(plane.StatId("flops"))->TextValue(&scratch) == "4096");
}

TEST_CASE("visitor: a crafted plane with dangling ids and impossible times") {
  XSpace space;
  XPlane* raw = space.add_planes();
  raw->set_name("/device:GPU:0");
  auto* line = raw->add_lines();
  line->set_timestamp_ns(INT64_MAX);
  auto* event = line->add_events();
  event->set_metadata_id(99);  // No such metadata.
  event->set_offset_ps(5'000);
  auto* stat = event->add_stats();
  stat->set_metadata_id(42);  // No such stat metadata.
  stat->set_ref_value(1234);  // Points nowhere.
  // Two stat metadata with one name: the smallest id, whatever the map order.
  (*raw->mutable_stat_metadata())[9].set_name("dup");
  (*raw->mutable_stat_metadata())[3].set_name("dup");
  xplane::PlaneVisitor plane(*raw);
  CHECK(xplane::IsDevicePlane(*raw));
  CHECK(plane.StatId("dup") == 3);
  const xplane::EventVisitor visited = plane.Line(0).Event(0);
  CHECK(visited.Name().empty());
  CHECK_FALSE(visited.Time());  // INT64_MAX ns + 5 ns overflows.
  const auto dangling = visited.Stat(42);
  REQUIRE(dangling);
  CHECK(dangling->Name().empty());
  CHECK(dangling->StrValue() == "");
}

TEST_CASE("visitor: stats by name follow the same rule as stats by id") {
  Sample sample;
  xplane::PlaneVisitor plane(*sample.plane);
  const xplane::EventVisitor op = plane.Line(0).Event(0);
  CHECK(op.IntStatNamed("flops") == 4096);  // The event's own wins.
  CHECK(op.StrStatNamed("kind") == std::optional<std::string_view>("matmul"));  // Metadata's.
  CHECK(op.StrStatNamed("scope") == std::optional<std::string_view>("MLP/fc1"));
  CHECK_FALSE(op.IntStatNamed("big").has_value());  // Above INT64_MAX.
  CHECK_FALSE(op.StatNamed("absent").has_value());
  CHECK(op.StatNamed("scope")->Name() == "scope");
  const xplane::EventVisitor step = plane.Line(0).Event(1);
  CHECK_FALSE(step.IntStatNamed("flops").has_value());
}

}  // namespace
}  // namespace neuronprof
