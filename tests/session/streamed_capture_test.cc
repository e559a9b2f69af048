// A capture of host markers alone is written from its records (Stop()'s
// streamed path): the xplane.pb streamed, the Chrome and Kineto traces
// from host-plane fragments. Its files must mean what the XSpace path's
// mean: the same XSpace read back, the same JSON events.
#include <catch2/catch.hpp>
#include <string>

#include "src/collectors/host/host_collector.h"
#include "src/export/atomic_file.h"
#include "src/export/gzip.h"
#include "src/export/logdir.h"
#include "src/export/trace_stream.h"
#include "src/session/capture_session.h"
#include "src/xplane/xplane_builder.h"
#include "tests/export/map_churn.h"
#include "tests/export/ring_variety.h"
#include "tests/export/trace_text.h"
#include "tests/test_util.h"

namespace neuronprof {
namespace {

using tensorflow::profiler::XEvent;
using tensorflow::profiler::XLine;
using tensorflow::profiler::XPlane;
using tensorflow::profiler::XSpace;
using testing::DeterministicBytes;

// Takes a streamed plane's pieces and keeps nothing.
class DiscardingSink : public xplane::XPlaneSink {
 public:
  absl::Status AddEvents(const google::protobuf::RepeatedPtrField<XEvent>&) override {
    return absl::OkStatus();
  }
  absl::Status EndLine(const XLine&) override { return absl::OkStatus(); }
  absl::Status EndPlane(const XPlane&) override { return absl::OkStatus(); }
};

std::string Gunzipped(const std::string& path) {
  auto bytes = exporter::ReadFile(path);
  REQUIRE(bytes.ok());
  auto text = exporter::GzipDecompress(*bytes);
  REQUIRE(text.ok());
  return *text;
}

TEST_CASE("host-plane fragments of 1, 7, 512 and 64K events write the whole plane's traces") {
  auto capture = testing::RecordVarietyInRing();
  REQUIRE(capture.ok());
  XSpace skeleton;
  xplane::SetProfileTimes(&skeleton, capture->start_epoch_ns, capture->stop_epoch_ns);
  skeleton.add_hostnames("fragment_host");
  XSpace whole = skeleton;
  collectors::CollectStats stats;
  collectors::AddHostPlane(*capture, &whole, &stats, "advice");
  REQUIRE(stats.events > 8 * collectors::kStreamChunkEvents);
  const auto chrome = testing::SortedTraceLines(testing::ChromeTraceText(whole));
  const auto kineto = testing::SortedTraceLines(testing::KinetoTraceText(whole));

  XPlane built;
  DiscardingSink discard;
  collectors::CollectStats streamed_stats;
  REQUIRE(collectors::StreamHostPlane(*capture, skeleton, &discard, &streamed_stats, &built).ok());
  CHECK(built.lines_size() == 0);
  CHECK(streamed_stats.events == stats.events);
  for (const int events : {1, 7, 512, 64 * 1024}) {
    INFO("fragments of " << events << " events");
    XSpace fragment = skeleton;
    XPlane* plane = fragment.add_planes();
    exporter::StringSink chrome_text, kineto_text;
    const auto chrome_stream =
        exporter::NewTraceStream(exporter::TraceFormat::kChrome, &chrome_text);
    const auto kineto_stream =
        exporter::NewTraceStream(exporter::TraceFormat::kKineto, &kineto_text);
    int fragments = 0, largest = 0;
    int64_t handed = 0;
    REQUIRE(collectors::FragmentHostPlane(
                *capture, skeleton, built, plane, events,
                [&]() -> absl::Status {
                  int in_fragment = 0;
                  for (const XLine& line : plane->lines()) in_fragment += line.events_size();
                  largest = std::max(largest, in_fragment);
                  handed += in_fragment;
                  ++fragments;
                  // Every fragment carries the whole plane's metadata.
                  if (plane->event_metadata_size() != built.event_metadata_size()) {
                    return absl::InternalError("metadata missing");
                  }
                  if (absl::Status s = chrome_stream->Append(fragment); !s.ok()) return s;
                  return kineto_stream->Append(fragment);
                })
                .ok());
    REQUIRE(chrome_stream->Finish().ok());
    REQUIRE(kineto_stream->Finish().ok());
    CHECK(handed == stats.events);
    CHECK(largest <= events);
    CHECK(fragments >= (stats.events + events - 1) / events);
    // The same events; a trace cut into fragments lists them in its order.
    CHECK(testing::SortedTraceLines(chrome_text.text()) == chrome);
    CHECK(testing::SortedTraceLines(kineto_text.text()) == kineto);
  }
}

TEST_CASE("a window of host markers alone writes from its records the files its XSpace gives") {
  collectors::CollectorOptions options;
  options.host_tracer_level = 2;
  options.max_buffer_bytes = uint64_t{16} << 20;
  auto session = session::CaptureSession::Start(options);
  REQUIRE(session.ok());
  REQUIRE((*session)->CanStreamHostPlane());
  testing::RecordVariety();
  auto streamed = (*session)->StopForStreaming();
  REQUIRE(streamed.ok());
  CHECK_FALSE((*session)->CanStreamHostPlane());  // Stopped.

  // The XSpace path's plane, from the same records.
  XSpace whole = streamed->result.space;
  collectors::CollectStats whole_stats;
  collectors::AddHostPlane(streamed->records, &whole, &whole_stats);
  REQUIRE(whole_stats.events > 8 * collectors::kStreamChunkEvents);

  testing::TempDir dir;
  auto write = [&](const std::string& name, bool from_records) {
    exporter::ExportOptions export_options;
    export_options.pytorch_trace_dir = dir.path() + "/" + name;
    if (from_records) {
      export_options.streamed_plane = [&](xplane::XPlaneSink* sink) {
        return streamed->WriteHostPlane(sink);
      };
      export_options.plane_fragments = [&](XPlane* plane,
                                           const std::function<absl::Status()>& ready) {
        return streamed->WriteHostFragments(plane, ready);
      };
    }
    REQUIRE(exporter::MakeDirectories(dir.path() + "/" + name).ok());
    auto files = exporter::WriteProfileFiles(from_records ? streamed->result.space : whole,
                                             dir.path() + "/" + name, "host", export_options);
    REQUIRE(files.ok());
    CHECK(files->size() == 3);
  };
  write("whole", false);
  write("streamed", true);
  CHECK(streamed->result.stats.events == whole_stats.events);
  CHECK(streamed->result.stats.threads == whole_stats.threads);
  CHECK(DeterministicBytes(testing::ReadXSpace(dir.path() + "/streamed/host.xplane.pb")) ==
        DeterministicBytes(testing::ReadXSpace(dir.path() + "/whole/host.xplane.pb")));
  for (const char* file : {"/host.trace.json.gz", "/host.pt.trace.json.gz"}) {
    INFO(file);
    CHECK(testing::SortedTraceLines(Gunzipped(dir.path() + "/streamed" + file)) ==
          testing::SortedTraceLines(Gunzipped(dir.path() + "/whole" + file)));
  }
}

TEST_CASE("the traces of a streamed plane need its fragments, and come after its xplane.pb") {
  session::StreamedCapture streamed;
  XPlane plane;
  CHECK(absl::IsFailedPrecondition(
      streamed.WriteHostFragments(&plane, [] { return absl::OkStatus(); })));
  testing::TempDir dir;
  exporter::ExportOptions export_options;
  export_options.streamed_plane = [&](xplane::XPlaneSink* sink) {
    return streamed.WriteHostPlane(sink);
  };
  auto files =
      exporter::WriteProfileFiles(streamed.result.space, dir.path(), "host", export_options);
  CHECK(absl::IsInvalidArgument(files.status()));
  CHECK(testing::ListDir(dir.path()).empty());  // Nothing half-written stays.
}

}  // namespace
}  // namespace neuronprof
