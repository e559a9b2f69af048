// A streamed xplane.pb (a flight recorder's dump) holds what the XSpace
// built whole holds, read back through the one XSpace reader, and the plane
// is handed over a chunk of events at a time, never whole.
#include "src/export/xplane_stream.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <string>

#include "src/collectors/host/host_collector.h"
#include "src/export/atomic_file.h"
#include "src/export/xspace_file.h"
#include "src/xplane/xplane_builder.h"
#include "tests/export/map_churn.h"
#include "tests/export/ring_variety.h"
#include "tests/test_util.h"

namespace neuronprof {
namespace {

using tensorflow::profiler::XEvent;
using tensorflow::profiler::XLine;
using tensorflow::profiler::XPlane;
using tensorflow::profiler::XSpace;
using testing::DeterministicBytes;

// The space a dump starts from: profile times, the host plane's warnings
// (none here: nothing was dropped), a host name.
XSpace Skeleton(const core::RecordedCapture& capture) {
  XSpace space;
  xplane::SetProfileTimes(&space, capture.start_epoch_ns, capture.stop_epoch_ns);
  collectors::AddHostWarnings(capture, &space, "advice");
  space.add_hostnames("stream_host");
  return space;
}

// Puts the pieces back together, and counts the most events it held.
class AssemblingSink : public xplane::XPlaneSink {
 public:
  absl::Status AddEvents(const google::protobuf::RepeatedPtrField<XEvent>& events) override {
    largest_piece = std::max(largest_piece, events.size());
    for (const XEvent& event : events) *line_.add_events() = event;
    return absl::OkStatus();
  }
  absl::Status EndLine(const XLine& line) override {
    CHECK(line.events_size() == 0);  // Its events came in pieces.
    XLine* done = plane.add_lines();
    *done = line;
    *done->mutable_events() = line_.events();
    line_.Clear();
    return absl::OkStatus();
  }
  absl::Status EndPlane(const XPlane& whole) override {
    CHECK(whole.lines_size() == 0);
    auto lines = plane.lines();
    plane = whole;
    *plane.mutable_lines() = lines;
    return absl::OkStatus();
  }

  XPlane plane;
  int largest_piece = 0;

 private:
  XLine line_;
};

TEST_CASE("a streamed xplane.pb reads back as the XSpace built whole from the same records") {
  auto capture = testing::RecordVarietyInRing();
  REQUIRE(capture.ok());
  XSpace whole = Skeleton(*capture);
  collectors::CollectStats whole_stats;
  collectors::AddHostPlane(*capture, &whole, &whole_stats, "advice");
  REQUIRE(whole.planes_size() == 2);
  // Every kind of line, one of more than two chunks.
  CHECK(whole.planes(1).lines_size() >= 4);
  CHECK(whole_stats.events > 8 * collectors::kStreamChunkEvents);

  // As a dump streams it: each thread's records sorted in the copy first.
  collectors::SortSnapshotRecords(&*capture);
  const XSpace skeleton = Skeleton(*capture);
  collectors::CollectStats streamed_stats;
  testing::TempDir dir;
  const std::string path = dir.path() + "/stream_host.xplane.pb";
  REQUIRE(exporter::WriteXSpaceStreamed(
              skeleton,
              [&](xplane::XPlaneSink* sink) {
                return collectors::StreamHostPlane(*capture, skeleton, sink, &streamed_stats);
              },
              path)
              .ok());
  auto read = exporter::ReadXSpaceFile(path);
  REQUIRE(read.ok());
  // Compared as deterministic bytes: MessageDifferencer's map reflection
  // crashes in protobuf 3.21 under GCC's TSan.
  CHECK(DeterministicBytes(whole) == DeterministicBytes(*read));
  CHECK(streamed_stats.events == whole_stats.events);
  CHECK(streamed_stats.threads == whole_stats.threads);
  // The lengths are fixed-width placeholders: a few bytes more per line.
  const auto bytes = exporter::ReadFile(path);
  REQUIRE(bytes.ok());
  CHECK(bytes->size() > whole.ByteSizeLong());
  CHECK(bytes->size() < whole.ByteSizeLong() + 8 * (whole.planes(1).lines_size() + 1));
}

TEST_CASE("a streamed host plane is handed over one bounded chunk of events at a time") {
  auto capture = testing::RecordVarietyInRing();
  REQUIRE(capture.ok());
  XSpace whole = Skeleton(*capture);
  collectors::CollectStats stats;
  collectors::AddHostPlane(*capture, &whole, &stats, "advice");
  const XSpace skeleton = Skeleton(*capture);
  AssemblingSink sink;
  REQUIRE(collectors::StreamHostPlane(*capture, skeleton, &sink, &stats).ok());
  CHECK(sink.largest_piece == collectors::kStreamChunkEvents);
  CHECK(DeterministicBytes(sink.plane) == DeterministicBytes(whole.planes(1)));
}

}  // namespace
}  // namespace neuronprof
