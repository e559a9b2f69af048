// Peak memory of the streaming trace writers (src/export/trace_stream.h)
// for a large capture of host markers: N markers are recorded for real
// (their records held, as at Profiler::Stop()), then N markers are written
// in fragments of 64K events through TraceFileStream into a gzipped Chrome
// trace and a gzipped Kineto trace, each fragment to both, as Stop() feeds
// them. The fragments here are built, not read from the records (that is
// the host collector's part); each is built once and shifted in time.
//
//   neuronprof_trace_stream_bench [--markers N] [--dir DIR]
//
// Prints one line: markers, fragments, records_mb (what recording added to
// the RSS), fragment_mb (one fragment's XSpace), peak_rss_mb (VmHWM while
// streaming), rss_before_mb, peak_over_records (the peak over the RSS
// before less the records plus the records: stop_bench's figure), stream_ms,
// and each file's size.
#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "bench/process_memory.h"
#include "neuronprof/trace.h"
#include "proto/xplane.pb.h"
#include "src/collectors/core_status.h"
#include "src/core/recorder.h"
#include "src/export/trace_stream.h"
#include "src/xplane/schema.h"
#include "src/xplane/xplane_builder.h"

namespace {

using neuronprof::bench::ProcStatusMb;
using neuronprof::bench::ResetPeakRss;
using neuronprof::exporter::TraceFileStream;
using neuronprof::exporter::TraceFormat;

constexpr int kFragmentEvents = 65536;

// One thread's next kFragmentEvents markers (1 us apart, 0.5 us long).
tensorflow::profiler::XSpace MarkerFragment() {
  tensorflow::profiler::XSpace space;
  neuronprof::xplane::XPlaneBuilder host(
      neuronprof::xplane::FindOrAddPlane(&space, neuronprof::xplane::kHostPlaneName));
  const int64_t marker = host.EventMetadataId("marker");
  auto* line = host.AddLine(1, "main", 0);
  for (int e = 0; e < kFragmentEvents; ++e) {
    host.AddEvent(line, marker, int64_t{e} * 1'000'000, 500'000);
  }
  // After the host plane: planes(0) stays the host's.
  neuronprof::xplane::SetProfileTimes(&space, 1'700'000'000'000'000'000, 0);
  return space;
}

long FileBytes(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 ? static_cast<long>(st.st_size) : -1;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t markers = 10'000'000;
  std::string dir = "/tmp";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--markers") == 0) markers = std::atoll(argv[i + 1]);
    if (std::strcmp(argv[i], "--dir") == 0) dir = argv[i + 1];
  }
  const double rss_start = ProcStatusMb("VmRSS:");
  if (auto s = neuronprof::core::StartRecording(2, uint64_t{40} * markers + (uint64_t{64} << 20));
      !s.ok()) {
    std::fprintf(stderr, "%s\n", neuronprof::collectors::ToStatus(s).ToString().c_str());
    return 1;
  }
  for (int64_t i = 0; i < markers; ++i) {
    NEURONPROF_SCOPE("marker");
  }
  auto capture = neuronprof::core::StopRecording();  // Held until the end.
  if (!capture.ok()) {
    std::fprintf(stderr, "%s\n",
                 neuronprof::collectors::ToStatus(capture.status()).ToString().c_str());
    return 1;
  }
  const double records = ProcStatusMb("VmRSS:") - rss_start;

  tensorflow::profiler::XSpace fragment = MarkerFragment();
  const std::string chrome_path = dir + "/stream_bench.trace.json.gz";
  const std::string kineto_path = dir + "/stream_bench.pt.trace.json.gz";
  const double rss_before = ProcStatusMb("VmRSS:");
  ResetPeakRss();
  const auto t0 = std::chrono::steady_clock::now();
  auto chrome = TraceFileStream::Open(TraceFormat::kChrome, chrome_path);
  auto kineto = TraceFileStream::Open(TraceFormat::kKineto, kineto_path);
  if (!chrome.ok() || !kineto.ok()) {
    std::fprintf(stderr, "cannot open the files under %s\n", dir.c_str());
    return 1;
  }
  int64_t fragments = 0;
  for (int64_t done = 0; done < markers; done += kFragmentEvents, ++fragments) {
    auto* line = fragment.mutable_planes(0)->mutable_lines(0);
    line->set_timestamp_ns(done * 1000);
    if (markers - done < kFragmentEvents) {
      line->mutable_events()->DeleteSubrange(static_cast<int>(markers - done),
                                             kFragmentEvents - static_cast<int>(markers - done));
    }
    for (auto* stream : {chrome->get(), kineto->get()}) {
      if (auto s = stream->Append(fragment); !s.ok()) {
        std::fprintf(stderr, "%s\n", s.ToString().c_str());
        return 1;
      }
    }
  }
  for (auto* stream : {chrome->get(), kineto->get()}) {
    if (auto s = stream->Finish(); !s.ok()) {
      std::fprintf(stderr, "%s\n", s.ToString().c_str());
      return 1;
    }
  }
  const auto t1 = std::chrono::steady_clock::now();
  const double peak = ProcStatusMb("VmHWM:");
  std::printf(
      "markers=%lld fragments=%lld records_mb=%.0f fragment_mb=%.1f peak_rss_mb=%.0f "
      "rss_before_mb=%.0f peak_over_records=%.2f stream_ms=%.0f chrome_gz=%ld kineto_gz=%ld\n",
      static_cast<long long>(markers), static_cast<long long>(fragments), records,
      static_cast<double>(fragment.SpaceUsedLong()) / 1e6, peak, rss_before,
      (peak - rss_before + records) / records,
      std::chrono::duration<double, std::milli>(t1 - t0).count(), FileBytes(chrome_path),
      FileBytes(kineto_path));
  return 0;
}
