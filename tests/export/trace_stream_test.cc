// The streaming trace writers (trace_stream.h) fed a capture cut into
// fragments write the same text as the whole-XSpace writers.
#include "src/export/trace_stream.h"

#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "src/export/gzip.h"
#include "src/export/atomic_file.h"
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

std::string Streamed(exporter::TraceFormat format, const std::vector<XSpace>& fragments) {
  exporter::StringSink sink;
  exporter::TraceStream stream(format, &sink);
  for (const XSpace& fragment : fragments) REQUIRE(stream.Append(fragment).ok());
  REQUIRE(stream.Finish().ok());
  return sink.text();
}

TEST_CASE("trace stream: fragments of 1, 7 and 64K events write the whole writer's text") {
  // Operators, steps and GPU work past one job of spans; memory events.
  for (const XSpace& space : {testing::ManyStepsSpace(1500), testing::MemorySpace()}) {
    const std::string chrome = testing::ChromeTraceText(space);
    const std::string kineto = testing::KinetoTraceText(space);
    for (int events : {1, 7, 65536}) {
      INFO("fragments of " << events);
      const std::vector<XSpace> fragments = Cut(space, events);
      CHECK(Streamed(exporter::TraceFormat::kChrome, fragments) == chrome);
      CHECK(Streamed(exporter::TraceFormat::kKineto, fragments) == kineto);
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
