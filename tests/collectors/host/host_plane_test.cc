// The host plane built from recorded markers: operators share one event
// metadata per signature, compact keys become stat names, and
// NEURONPROF_SCOPE call sites carry their file and line.
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <catch2/catch.hpp>
#include <string>

#include "neuronprof/trace.h"
#include "neuronprof/trace_events.h"
#include "proto/xplane.pb.h"
#include "src/analysis/report/summary.h"
#include "src/analysis/report/summary_sections.h"
#include "src/collectors/host/host_collector.h"
#include "src/core/recorder.h"
#include "src/session/mapped_arena.h"
#include "src/xplane/schema.h"
#include "src/xplane/xplane_visitor.h"
#include "tests/export/trace_text.h"
#include "tests/host_plane_capture.h"

namespace neuronprof {
namespace {

// An operator as the libtorch collector records it.
void Op(std::string_view dims, int64_t seq) {
  ScopedTrace op("aten::addmm", {{xplane::kOpFrameworkStat, "torch"},
                                 {xplane::kOpDirectionStat, "fprop"},
                                 {xplane::kOpSequenceStat, seq},
                                 {xplane::kOpInputDimsStat, dims}});
}

// The bytes of `space`, its maps in key order.
std::string DeterministicBytes(const tensorflow::profiler::XSpace& space) {
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    space.SerializeToCodedStream(&coded);
  }
  return bytes;
}

TEST_CASE("a line built in two halves on two threads is the plane one pass builds, ids included") {
  REQUIRE(core::StartRecording(2, uint64_t{4} << 20).ok());
  constexpr int kSteps = 200;
  {
    // Ends last, so its record is the last one but its event the line's
    // first: the index, sorted in halves, is merged.
    ScopedTrace epoch("epoch");
    for (int i = 0; i < kSteps; ++i) {
      // Nested: the records end out of line order (the indexed path).
      ScopedTrace step("step", {{"i", int64_t{i}}, {"ratio", 0.5 * i}});
      // The second half brings signatures, names and strings of its own,
      // a string first seen on a signature's metadata then as an argument,
      // and a stat key first made for a skipped argument.
      const bool late = i >= kSteps / 2;
      Op(late ? "[[9,9]]" : (i % 3 == 0 ? "[[2,3],[3,4]]" : "[[8,3],[3,4]]"), i);
      ScopedTrace tagged(late ? "late marker" : "marker",
                         {{"tag", i % 5 == 0 ? "[[2,3],[3,4]]" : "x"}, {"n", uint64_t{7}}});
      NEURONPROF_SCOPE("site");
      if (i % 10 == 0) TraceInstant(late ? "late instant" : "instant", {{"k", int64_t{i}}});
    }
  }
  auto capture = core::StopRecording();
  REQUIRE(capture.ok());
  tensorflow::profiler::XSpace one, two;
  collectors::CollectStats one_stats, two_stats;
  collectors::AddHostPlane(*capture, &one, &one_stats, collectors::kLocalBufferAdvice, SIZE_MAX);
  collectors::AddHostPlane(*capture, &two, &two_stats, collectors::kLocalBufferAdvice, 2);
  REQUIRE(one.planes(0).lines(0).events_size() > kSteps * 4);
  CHECK(two_stats.events == one_stats.events);
  CHECK(DeterministicBytes(two) == DeterministicBytes(one));
  // On the arena a capture's XSpace is built on: its events move over in
  // place (none under GCC's TSan, where captures go on the heap).
  const auto arena = session::NewMappedArena();
  if (arena == nullptr) return;
  auto* on_arena =
      google::protobuf::Arena::CreateMessage<tensorflow::profiler::XSpace>(arena.get());
  collectors::CollectStats arena_stats;
  collectors::AddHostPlane(*capture, on_arena, &arena_stats, collectors::kLocalBufferAdvice, 2);
  CHECK(DeterministicBytes(*on_arena) == DeterministicBytes(one));
}

TEST_CASE("a long thread's records sorted by kind in two halves give the plane of one pass") {
  // Long enough for several pool blocks: the split cuts at a block start.
  REQUIRE(core::StartRecording(2, uint64_t{16} << 20).ok());
  for (int i = 0; i < 3000; ++i) {
    AsyncTrace request("requests", "request");
    ScopedTrace step("step", {{"i", int64_t{i}}});
    TraceCounter("queue", int64_t{i % 7});
  }
  auto capture = core::StopRecording();
  REQUIRE(capture.ok());
  tensorflow::profiler::XSpace one, two;
  collectors::CollectStats one_stats, two_stats;
  collectors::AddHostPlane(*capture, &one, &one_stats, collectors::kLocalBufferAdvice, SIZE_MAX);
  collectors::AddHostPlane(*capture, &two, &two_stats, collectors::kLocalBufferAdvice, 2);
  REQUIRE(one.planes(0).lines_size() >= 3);  // The thread's, the async track's, the counters'.
  CHECK(two_stats.events == one_stats.events);
  CHECK(DeterministicBytes(two) == DeterministicBytes(one));
}

TEST_CASE("calls with one signature share a metadata; each keeps its own sequence number") {
  auto space = testing::CaptureHostPlane([] {
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

TEST_CASE("inputs that differ only in where one string ends and the next begins differ") {
  // Strings may hold any bytes, even those of a signature's own encoding
  // (a stat id, a kind, a length: three int64s): here the types' stat id
  // with kind 's' and length 0 in the middle of a string.
  auto op = [](std::string_view dims, std::string_view types) {
    ScopedTrace call("aten::mm", {{xplane::kOpFrameworkStat, "torch"},
                                  {xplane::kOpInputDimsStat, dims},
                                  {xplane::kOpInputTypesStat, types}});
  };
  // Ids are numbered in the order first used: the same in both captures.
  auto first = testing::CaptureHostPlane([&] { op("x", "y"); });
  const int64_t parts[] = {xplane::PlaneVisitor(first.planes(0)).StatId(xplane::kOpInputTypesStat),
                           's', 0};
  const std::string part(reinterpret_cast<const char*>(parts), sizeof(parts));
  const std::string joined_types = "Y" + part + "Z", joined_dims = "X" + part + "Y";
  auto space = testing::CaptureHostPlane([&] {
    op("X", joined_types);
    op(joined_dims, "Z");
  });
  const xplane::PlaneVisitor plane(space.planes(0));
  const xplane::LineVisitor line = plane.Line(0);
  REQUIRE(line.NumEvents() == 2);
  CHECK(line.Event(0).MetadataId() != line.Event(1).MetadataId());
  const int64_t types = plane.StatId(xplane::kOpInputTypesStat);
  CHECK(line.Event(0).StrStat(types) == joined_types);
  CHECK(line.Event(1).StrStat(types) == "Z");
}

TEST_CASE("compact keys are stored under the stat names; values are kept as they are") {
  auto space = testing::CaptureHostPlane([] {
    ScopedTrace alloc(xplane::kMemoryAllocationEvent, {{xplane::kCompactAddressKey, int64_t{4096}},
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

// Two call sites of one name, then the forms that record no site.
constexpr int kFirstSiteLine = __LINE__ + 4;
constexpr int kSecondSiteLine = __LINE__ + 5;
void RecordSites() {
  for (int i = 0; i < 3; ++i) {
    NEURONPROF_SCOPE("site");
  }
  { NEURONPROF_SCOPE("site"); }
  {
    NEURONPROF_SCOPE("site", {{"i", 1}});  // Arguments: copied, no site.
  }
  { ScopedTrace copied("site"); }
}

std::string Site(int line) { return std::string(__FILE__) + ":" + std::to_string(line); }

TEST_CASE("NEURONPROF_SCOPE records its file and line once per call site, on the metadata") {
  auto space = testing::CaptureHostPlane(RecordSites);
  const xplane::PlaneVisitor plane(space.planes(0));
  const xplane::LineVisitor line = plane.Line(0);
  REQUIRE(line.NumEvents() == 6);
  const int64_t source = plane.StatId(xplane::kSourceStat);
  REQUIRE(source >= 0);
  std::string scratch;
  auto source_of = [&](int e) {
    const auto stat = line.Event(e).Stat(source);
    return stat ? std::string(stat->TextValue(&scratch)) : std::string("(none)");
  };
  for (int e = 0; e < 6; ++e) CHECK(line.Event(e).Name() == "site");
  // One metadata per site, the loop's three events share theirs; the
  // events themselves hold no stat.
  CHECK(line.Event(0).MetadataId() == line.Event(2).MetadataId());
  CHECK(line.Event(0).MetadataId() != line.Event(3).MetadataId());
  CHECK(line.Event(0).raw().stats_size() == 0);
  CHECK(source_of(0) == Site(kFirstSiteLine));
  CHECK(source_of(2) == Site(kFirstSiteLine));
  CHECK(source_of(3) == Site(kSecondSiteLine));
  CHECK(source_of(4) == "(none)");  // With arguments.
  CHECK(source_of(5) == "(none)");  // ScopedTrace.
  int with_source = 0;
  for (const auto& [id, metadata] : space.planes(0).event_metadata()) {
    for (const auto& stat : metadata.stats()) with_source += stat.metadata_id() == source;
  }
  CHECK(with_source == 2);

  // Both trace files show it in the event's args.
  const std::string arg = "\"source\":\"" + Site(kFirstSiteLine) + "\"";
  CHECK(testing::ChromeTraceText(space).find(arg) != std::string::npos);
  CHECK(testing::KinetoTraceText(space).find(arg) != std::string::npos);
}

TEST_CASE("the summary's markers table has one row per call site, with its short source") {
  auto space = testing::CaptureHostPlane(RecordSites);
  const std::vector<analysis::SpanStats> markers =
      analysis::BuildMarkerStats(analysis::CollectHostSpans(space)).markers;
  // host/host_plane_test.cc:<line>: the last two parts of __FILE__.
  auto short_site = [](int line) { return "host/host_plane_test.cc:" + std::to_string(line); };
  REQUIRE(markers.size() == 3);
  int64_t first = 0, second = 0, none = 0;
  for (const analysis::SpanStats& row : markers) {
    CHECK(row.name == "site");
    if (row.source == short_site(kFirstSiteLine)) first = row.calls();
    if (row.source == short_site(kSecondSiteLine)) second = row.calls();
    if (row.source.empty()) none = row.calls();
  }
  CHECK(first == 3);
  CHECK(second == 1);
  CHECK(none == 2);  // With arguments, and ScopedTrace.
  const std::string text = analysis::FormatSummaryText(analysis::Summarize(space), 0);
  CHECK(text.find("Markers: 3 (name, source)") != std::string::npos);
  CHECK(text.find(short_site(kFirstSiteLine)) != std::string::npos);
}

TEST_CASE("a source is shown as its last two path components") {
  CHECK(analysis::ShortSource("/work/src/core/recorder.cc:12") == "core/recorder.cc:12");
  CHECK(analysis::ShortSource("../../tests/a.cc:3") == "tests/a.cc:3");
  CHECK(analysis::ShortSource("dir/a.cc:3") == "dir/a.cc:3");
  CHECK(analysis::ShortSource("a.cc:3") == "a.cc:3");
  CHECK(analysis::ShortSource("/a.cc:3") == "/a.cc:3");
}

}  // namespace
}  // namespace neuronprof
