// The streaming trace writers (trace_stream.h) fed a capture cut into
// fragments write the same events as the whole-XSpace writers (which write
// the capture as one fragment), each fragment's in its own place.
#include "src/export/trace_stream.h"

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "neuronprof/trace.h"
#include "src/export/gzip.h"
#include "src/export/atomic_file.h"
#include "tests/host_plane_capture.h"
#include "tests/export/kineto_sample_space.h"
#include "tests/export/memory_space.h"
#include "tests/export/trace_text.h"
#include "tests/test_util.h"

namespace neuronprof {
namespace {

using tensorflow::profiler::XSpace;

// `space` cut into fragments of at most `events` events each: every
// fragment has every plane with its metadata and lines, each line holding
// the next of its events, taken line after line.
std::vector<XSpace> Cut(const XSpace& space, int events) {
  XSpace empty = space;
  for (auto& plane : *empty.mutable_planes()) {
    for (auto& line : *plane.mutable_lines()) line.clear_events();
  }
  std::vector<XSpace> fragments(1, empty);
  int in_fragment = 0;
  for (int p = 0; p < space.planes_size(); ++p) {
    for (int l = 0; l < space.planes(p).lines_size(); ++l) {
      for (const auto& event : space.planes(p).lines(l).events()) {
        if (in_fragment == events) {
          fragments.push_back(empty);
          in_fragment = 0;
        }
        // Each fragment's lines start a little later (as a collector's
        // may): its offsets are from its own line's timestamp.
        const int64_t shift_ns = static_cast<int64_t>(fragments.size() % 3);
        auto* line = fragments.back().mutable_planes(p)->mutable_lines(l);
        line->set_timestamp_ns(space.planes(p).lines(l).timestamp_ns() + shift_ns);
        auto* copy = line->add_events();
        *copy = event;
        copy->set_offset_ps(event.offset_ps() - shift_ns * 1000);
        ++in_fragment;
      }
    }
  }
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

// The text's lines (one event each in both writers), sorted, each without
// its separating comma: the same events whatever their order.
std::vector<std::string> SortedEvents(const std::string& text) {
  std::vector<std::string> lines;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(at, end - at);
    if (!line.empty() && line.back() == ',') line.pop_back();
    lines.push_back(std::move(line));
    at = end + 1;
  }
  std::sort(lines.begin(), lines.end());
  return lines;
}

std::string Streamed(exporter::TraceFormat format, const std::vector<XSpace>& fragments) {
  exporter::StringSink sink;
  exporter::TraceStream stream(format, &sink);
  for (const XSpace& fragment : fragments) REQUIRE(stream.Append(fragment).ok());
  REQUIRE(stream.Finish().ok());
  return sink.text();
}

TEST_CASE("trace stream: fragments of 1, 7 and 64K events write the whole writer's events") {
  // Operators, steps and GPU work past one job of spans; memory events;
  // flows, async spans, counters and instants of a real capture.
  for (const XSpace& space :
       {testing::ManyStepsSpace(1500), testing::MemorySpace(), ServingSpace()}) {
    const std::string chrome = testing::ChromeTraceText(space);
    const std::string kineto = testing::KinetoTraceText(space);
    for (int events : {1, 7, 65536}) {
      INFO("fragments of " << events);
      const std::vector<XSpace> fragments = Cut(space, events);
      const std::string chrome_streamed = Streamed(exporter::TraceFormat::kChrome, fragments);
      const std::string kineto_streamed = Streamed(exporter::TraceFormat::kKineto, fragments);
      CHECK(SortedEvents(chrome_streamed) == SortedEvents(chrome));
      CHECK(SortedEvents(kineto_streamed) == SortedEvents(kineto));
      if (fragments.size() == 1) {  // The whole writers write one fragment.
        CHECK(chrome_streamed == chrome);
        CHECK(kineto_streamed == kineto);
      }
    }
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
  CHECK(*text == testing::KinetoTraceText(space));
  {
    auto file = exporter::TraceFileStream::Open(exporter::TraceFormat::kChrome, dir + "/gone.json");
    REQUIRE(file.ok());
    REQUIRE((*file)->Append(space).ok());
  }  // Dropped without Finish: nothing left.
  CHECK_FALSE(exporter::ReadFile(dir + "/gone.json").ok());
}

}  // namespace
}  // namespace neuronprof
