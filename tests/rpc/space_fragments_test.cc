// The capture client's traces come from fragments of the received bytes
// (rpc::ForEachSpaceFragment): every fragment carries the whole space but
// the events, each event comes once, in order, whatever the slices, and
// the traces written from them hold the whole writers' events.
#include "src/rpc/space_fragments.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "src/export/byte_sink.h"
#include "src/export/trace_stream.h"
#include "src/xplane/schema.h"
#include "src/xplane/xplane_builder.h"
#include "src/xplane/xplane_visitor.h"
#include "tests/export/kineto_sample_space.h"
#include "tests/export/memory_space.h"
#include "tests/export/trace_text.h"
#include "tests/rpc/byte_pieces.h"

namespace neuronprof {
namespace {

using rpc::BytePieces;
using tensorflow::profiler::XEvent;
using tensorflow::profiler::XSpace;
using testing::Cut;

// Two planes with metadata and stats, lines of 0 to 13 events with stats,
// a plane without lines, host names, warnings and errors.
XSpace VarietySpace() {
  XSpace space;
  for (int p = 0; p < 2; ++p) {
    xplane::XPlaneBuilder plane(space.add_planes());
    plane.plane()->set_id(p + 1);
    plane.plane()->set_name("/host:CPU" + std::to_string(p));
    plane.AddPlaneStat("device", int64_t{p});
    const int64_t kernel = plane.EventMetadataId("kernel");
    for (int l = 0; l < 4; ++l) {
      auto* line = plane.AddLine(10 * p + l, "thread " + std::to_string(l), 1000 + l);
      line->set_display_name("shown " + std::to_string(l));
      for (int e = 0; e < (l == 2 ? 0 : 5 + 4 * l + p); ++e) {
        auto* event = plane.AddEvent(line, kernel, e * 1000, 500);
        plane.AddStat(event, "step", int64_t{e});
      }
    }
  }
  space.add_planes()->set_name(xplane::kTaskEnvironmentPlaneName);
  space.add_hostnames("worker0");
  space.add_warnings("42 events dropped");
  space.add_errors("an error");
  return space;
}

// The bytes of `message` with its maps in key order: a map parsed from
// bytes and one built may iterate in different orders.
std::string Bytes(const google::protobuf::MessageLite& message) {
  std::string bytes;
  google::protobuf::io::StringOutputStream stream(&bytes);
  google::protobuf::io::CodedOutputStream out(&stream);
  out.SetSerializationDeterministic(true);
  message.SerializeToCodedStream(&out);
  return bytes;
}

// `space` without its events.
XSpace Skeleton(XSpace space) {
  for (auto& plane : *space.mutable_planes()) {
    for (auto& line : *plane.mutable_lines()) line.clear_events();
  }
  return space;
}

std::vector<XSpace> Fragments(const BytePieces& pieces, int max_events) {
  std::vector<XSpace> fragments;
  const absl::Status status = rpc::ForEachSpaceFragment(pieces, max_events, [&](const XSpace& f) {
    fragments.push_back(f);
    return absl::OkStatus();
  });
  REQUIRE(status.ok());
  return fragments;
}

TEST_CASE("fragments carry the whole space but its events, and each event once, in order") {
  const XSpace space = VarietySpace();
  const std::string bytes = space.SerializeAsString();
  const XSpace skeleton = Skeleton(space);
  const int64_t total = xplane::NumEvents(space);
  for (size_t slice : {size_t{1}, size_t{7}, bytes.size()}) {
    for (int max_events : {1, 5, 1000}) {
      INFO("slices of " << slice << " bytes, fragments of " << max_events << " events");
      const std::vector<XSpace> fragments = Fragments(Cut(bytes, slice), max_events);
      CHECK(static_cast<int64_t>(fragments.size()) == (total + max_events - 1) / max_events);
      // Each event of each line, in the order the fragments give them.
      std::map<std::pair<int, int>, std::vector<std::string>> events;
      for (const XSpace& fragment : fragments) {
        CHECK(xplane::NumEvents(fragment) <= max_events);
        CHECK(Bytes(Skeleton(fragment)) == Bytes(skeleton));
        for (int p = 0; p < fragment.planes_size(); ++p) {
          for (int l = 0; l < fragment.planes(p).lines_size(); ++l) {
            for (const XEvent& event : fragment.planes(p).lines(l).events()) {
              events[{p, l}].push_back(event.SerializeAsString());
            }
          }
        }
      }
      for (int p = 0; p < space.planes_size(); ++p) {
        for (int l = 0; l < space.planes(p).lines_size(); ++l) {
          std::vector<std::string> expected;
          for (const XEvent& event : space.planes(p).lines(l).events()) {
            expected.push_back(event.SerializeAsString());
          }
          CHECK(events[{p, l}] == expected);
        }
      }
    }
  }
}

TEST_CASE("a space without events is one fragment with every plane and line") {
  const XSpace skeleton = Skeleton(VarietySpace());
  const std::string bytes = skeleton.SerializeAsString();
  const std::vector<XSpace> fragments = Fragments(Cut(bytes, 3), 8);
  REQUIRE(fragments.size() == 1);
  CHECK(Bytes(fragments[0]) == Bytes(skeleton));
}

std::string Streamed(exporter::TraceFormat format, const std::string& bytes, int max_events) {
  exporter::StringSink sink;
  const auto stream = exporter::NewTraceStream(format, &sink);
  const absl::Status status =
      rpc::ForEachSpaceFragment(Cut(bytes, 4096), max_events,
                                [&](const XSpace& fragment) { return stream->Append(fragment); });
  REQUIRE(status.ok());
  REQUIRE(stream->Finish().ok());
  return sink.text();
}

TEST_CASE("the traces written from fragments hold the whole writers' events") {
  // Operators, steps, runtime calls and GPU work past one job of spans,
  // and memory events.
  for (const XSpace& space : {testing::ManyStepsSpace(1500), testing::MemorySpace()}) {
    const std::string bytes = space.SerializeAsString();
    const std::string chrome = testing::ChromeTraceText(space);
    const std::string kineto = testing::KinetoTraceText(space);
    for (int max_events : {7, rpc::kCaptureFragmentEvents}) {
      INFO("fragments of " << max_events << " events");
      const std::string chrome_streamed =
          Streamed(exporter::TraceFormat::kChrome, bytes, max_events);
      const std::string kineto_streamed =
          Streamed(exporter::TraceFormat::kKineto, bytes, max_events);
      CHECK(testing::SortedTraceLines(chrome_streamed) == testing::SortedTraceLines(chrome));
      CHECK(testing::SortedTraceLines(kineto_streamed) == testing::SortedTraceLines(kineto));
      if (xplane::NumEvents(space) <= max_events) {  // One fragment: the whole writers'.
        CHECK(chrome_streamed == chrome);
        CHECK(kineto_streamed == kineto);
      }
    }
  }
}

TEST_CASE("bytes that are not an XSpace, or an event that is not an XEvent, are refused") {
  int calls = 0;
  const auto count = [&](const XSpace&) {
    ++calls;
    return absl::OkStatus();
  };
  const std::string garbage = "\x0a\x05\x12\xff\xff";  // A plane whose name overruns it.
  CHECK(rpc::ForEachSpaceFragment({garbage}, 8, count).code() == absl::StatusCode::kDataLoss);
  CHECK(calls == 0);

  // Events 0..9 well-formed, then one whose duration_ps is a bad varint.
  XSpace space;
  xplane::XPlaneBuilder plane(space.add_planes());
  auto* line = plane.AddLine(1, "main", 0);
  for (int e = 0; e < 10; ++e) plane.AddEvent(line, plane.EventMetadataId("zone"), e, 1);
  std::string bytes = space.SerializeAsString();
  const std::string line_bytes = space.planes(0).lines(0).SerializeAsString();
  // Append "events { \x18 <unterminated varint> }" to the line, growing the
  // line's and the plane's lengths (both one-byte varints here).
  REQUIRE(bytes.size() < 120);
  const std::string bad_event = std::string("\x22\x02\x18\xff", 4);
  std::string grown_line = line_bytes + bad_event;
  std::string plane_bytes = space.planes(0).SerializeAsString();
  const size_t at = plane_bytes.find(line_bytes);
  REQUIRE(at != std::string::npos);
  plane_bytes.replace(at - 1, 1 + line_bytes.size(),
                      std::string(1, static_cast<char>(grown_line.size())) + grown_line);
  const std::string broken =
      std::string("\x0a") + static_cast<char>(plane_bytes.size()) + plane_bytes;
  for (int max_events : {4, 100}) {
    calls = 0;
    CHECK(rpc::ForEachSpaceFragment({broken}, max_events, count).code() ==
          absl::StatusCode::kDataLoss);
    CHECK(calls == (max_events == 4 ? 2 : 0));  // The fragments before the bad one.
  }
}

TEST_CASE("the first error of the writer ends the fragments") {
  const std::string bytes = VarietySpace().SerializeAsString();
  int calls = 0;
  const absl::Status status = rpc::ForEachSpaceFragment({bytes}, 3, [&](const XSpace&) {
    return ++calls == 2 ? absl::ResourceExhaustedError("disk full") : absl::OkStatus();
  });
  CHECK(status.code() == absl::StatusCode::kResourceExhausted);
  CHECK(calls == 2);
}

}  // namespace
}  // namespace neuronprof
