// The streaming trace writers (trace_stream.h) fed a capture cut into
// fragments write the same events as the whole-XSpace writers (which write
// the capture as one fragment), each fragment's in its own place.
#include "src/export/trace_stream.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <thread>
#include <vector>

#include "neuronprof/trace.h"
#include "src/export/atomic_file.h"
#include "src/export/gzip.h"
#include "src/xplane/schema.h"
#include "src/xplane/xplane_builder.h"
#include "tests/export/kineto_sample_space.h"
#include "tests/export/memory_space.h"
#include "tests/export/trace_text.h"
#include "tests/host_plane_capture.h"
#include "tests/live_heap.h"
#include "tests/test_util.h"

namespace neuronprof {
namespace {

using tensorflow::profiler::XSpace;

// `space` cut into fragments of at most `events` events each, taken line
// after line: every fragment has every plane with its metadata; a line is
// there from the fragment of its first event on (from the first, if it has
// none), holding the next of its events. After the first fragment come an
// empty one and one with planes but no lines.
std::vector<XSpace> Cut(const XSpace& space, int events) {
  XSpace empty = space;
  for (auto& plane : *empty.mutable_planes()) plane.clear_lines();
  XSpace first = empty;
  for (int p = 0; p < space.planes_size(); ++p) {
    for (const auto& line : space.planes(p).lines()) {
      if (line.events_size() == 0) *first.mutable_planes(p)->add_lines() = line;
    }
  }
  std::vector<XSpace> fragments = {first};
  int in_fragment = 0;
  for (int p = 0; p < space.planes_size(); ++p) {
    for (int l = 0; l < space.planes(p).lines_size(); ++l) {
      const auto& whole = space.planes(p).lines(l);
      tensorflow::profiler::XLine* line = nullptr;
      for (const auto& event : whole.events()) {
        if (in_fragment == events) {
          fragments.push_back(empty);
          in_fragment = 0;
          line = nullptr;
        }
        if (line == nullptr) {
          line = fragments.back().mutable_planes(p)->add_lines();
          line->set_id(whole.id());
          line->set_display_id(whole.display_id());
          line->set_name(whole.name());
          line->set_display_name(whole.display_name());
          // Each fragment's lines start a little later (as a collector's
          // may): its offsets are from its own line's timestamp.
          const int64_t shift_ns = static_cast<int64_t>(fragments.size() % 3);
          line->set_timestamp_ns(whole.timestamp_ns() + shift_ns);
        }
        const int64_t shift_ns = line->timestamp_ns() - whole.timestamp_ns();
        auto* copy = line->add_events();
        *copy = event;
        copy->set_offset_ps(event.offset_ps() - shift_ns * 1000);
        ++in_fragment;
      }
    }
  }
  fragments.insert(fragments.begin() + 1, {XSpace(), empty});
  return fragments;
}

// Steps, flows whose producer and consumer are on two threads, an async
// span across them, counters and instants: a fragment cut line after line
// leaves each flow's ends, and the async span's, in different fragments.
XSpace ServingSpace() {
  return testing::CaptureHostPlane([] {
    uint64_t request = 0;
    AsyncTrace life("requests", "request");
    for (int step = 0; step < 20; ++step) {
      StepTrace step_trace("train", step);
      ScopedTrace op("op", {{"i", step}});
      if (step == 3) {
        TraceProducer producer("accept");
        request = producer.context_id();
        TraceCounter("queue_depth", 2);
      }
    }
    std::thread([&] {
      SetCurrentThreadName("worker");
      for (int i = 0; i < 10; ++i) NEURONPROF_SCOPE("work");
      { TraceConsumer infer("infer", ContextType::kGeneric, request); }
      { TraceConsumer reply("reply", ContextType::kGeneric, request); }
      TraceInstant("cache_miss", {{"key", "k7"}});
      life.End();
    }).join();
  });
}

// Host markers only, as a capture of NEURONPROF_SCOPE writes them: on
// `threads` lines of `per_line` events each, every 16th a step marker
// without a number (the Kineto writer numbers it by the steps before it),
// starting `at_ns` after the capture start.
XSpace MarkerSpace(int threads, int per_line, int64_t at_ns) {
  XSpace space;
  xplane::XPlaneBuilder host(xplane::FindOrAddPlane(&space, xplane::kHostPlaneName));
  const int64_t zone = host.EventMetadataId("zone");
  const int64_t step = host.EventMetadataId("step");
  for (int t = 0; t < threads; ++t) {
    auto* line = host.AddLine(100 + t, "thread_" + std::to_string(t), at_ns);
    for (int e = 0; e < per_line; ++e) {
      const bool is_step = e % 16 == 0;
      auto* event = host.AddEvent(line, is_step ? step : zone, int64_t{e} * 10'000, 5'000);
      if (is_step) host.AddStat(event, xplane::kRootLevelStat, int64_t{1});
      host.AddStat(event, "batch", int64_t{e});
    }
  }
  return space;
}

// "" when both texts have the same events, else the first event (sorted)
// where they differ: a short message, not two whole traces.
std::string EventDifference(const std::string& a, const std::string& b) {
  const std::vector<std::string> x = testing::SortedTraceLines(a), y = testing::SortedTraceLines(b);
  for (size_t i = 0; i < std::max(x.size(), y.size()); ++i) {
    const std::string left = i < x.size() ? x[i] : "(none)";
    const std::string right = i < y.size() ? y[i] : "(none)";
    if (left != right) return left + "\n  vs\n" + right;
  }
  return "";
}

std::string Streamed(exporter::TraceFormat format, const std::vector<XSpace>& fragments) {
  exporter::StringSink sink;
  const auto stream = exporter::NewTraceStream(format, &sink);
  for (const XSpace& fragment : fragments) REQUIRE(stream->Append(fragment).ok());
  REQUIRE(stream->Finish().ok());
  return sink.text();
}

TEST_CASE("trace stream: fragments of 1, 7 and 64K events write the whole writer's events") {
  // Operators, steps and GPU work past one job of spans; memory events;
  // flows, async spans, counters and instants of a real capture.
  for (const XSpace& space : {testing::ManyStepsSpace(1500), testing::MemorySpace(), ServingSpace(),
                              MarkerSpace(3, 100, 0)}) {
    const std::string chrome = testing::ChromeTraceText(space);
    const std::string kineto = testing::KinetoTraceText(space);
    for (int events : {1, 7, 65536}) {
      INFO("fragments of " << events);
      const std::vector<XSpace> fragments = Cut(space, events);
      const std::string chrome_streamed = Streamed(exporter::TraceFormat::kChrome, fragments);
      const std::string kineto_streamed = Streamed(exporter::TraceFormat::kKineto, fragments);
      CHECK(EventDifference(chrome_streamed, chrome) == "");
      CHECK(EventDifference(kineto_streamed, kineto) == "");
      if (fragments.size() == 3) {  // The whole writers write one fragment.
        CHECK(chrome_streamed == chrome);
        CHECK(kineto_streamed == kineto);
      }
    }
  }
}

TEST_CASE("trace stream: what a stream holds does not grow with host markers") {
  // 4 threads x 4096 markers a fragment: past one job of each writer.
  XSpace fragment = MarkerSpace(4, 4096, 0);
  for (const auto format : {exporter::TraceFormat::kChrome, exporter::TraceFormat::kKineto}) {
    INFO("format " << static_cast<int>(format));
    exporter::CountingSink sink;
    const auto stream = exporter::NewTraceStream(format, &sink);
    size_t held = 0;
    int64_t live = 0;
    for (int i = 0; i < 200; ++i) {
      // The next 16384 markers: the same lines, later.
      for (auto& line : *fragment.mutable_planes(0)->mutable_lines()) {
        line.set_timestamp_ns(int64_t{i} * 50'000'000);
      }
      REQUIRE(stream->Append(fragment).ok());
      if (i == 9) {
        held = stream->HeldItems();
        live = testing::LiveHeapBytes();
      }
    }
    // 190 more fragments (3.1M markers) add no held item and no heap byte
    // that stays (a byte per 40 markers would be 78 KB).
    // The 4 threads named, and the Chrome writer's plane.
    CHECK(held == (format == exporter::TraceFormat::kChrome ? 5u : 4u));
    CHECK(stream->HeldItems() == held);
    INFO("heap bytes kept by 190 fragments: " << testing::LiveHeapBytes() - live);
    CHECK(testing::LiveHeapBytes() - live < 16 * 1024);
    REQUIRE(stream->Finish().ok());
    CHECK(sink.bytes() > size_t{200} * 16384 * 40);
  }
}

TEST_CASE("trace stream: a file is there only after Finish, gzipped by its name") {
  const XSpace space = testing::KinetoSampleSpace();
  const testing::TempDir temp;
  const std::string& dir = temp.path();
  const std::string path = dir + "/run.pt.trace.json.gz";
  {
    auto file = exporter::TraceFileStream::Open(exporter::TraceFormat::kKineto, path);
    REQUIRE(file.ok());
    for (const XSpace& fragment : Cut(space, 3)) REQUIRE((*file)->Append(fragment).ok());
    CHECK_FALSE(exporter::ReadFile(path).ok());  // Not there before Finish.
    REQUIRE((*file)->Finish().ok());
  }
  auto bytes = exporter::ReadFile(path);
  REQUIRE(bytes.ok());
  auto text = exporter::GzipDecompress(*bytes);
  REQUIRE(text.ok());
  CHECK(EventDifference(*text, testing::KinetoTraceText(space)) == "");
  {
    auto file = exporter::TraceFileStream::Open(exporter::TraceFormat::kChrome, dir + "/gone.json");
    REQUIRE(file.ok());
    REQUIRE((*file)->Append(space).ok());
  }  // Dropped without Finish: nothing left.
  CHECK_FALSE(exporter::ReadFile(dir + "/gone.json").ok());
}

}  // namespace
}  // namespace neuronprof
