// Writes one ring snapshot (ring_variety.h) twice: built whole as an
// XSpace (DIR/whole/HOST.xplane.pb, .trace.json.gz, .pt.trace.json.gz) and
// from its records as a dump or Stop() of host markers writes it (the
// xplane.pb streamed, the traces from fragments of 1000 events:
// DIR/streamed/...), for the CLI, xprof and the PyTorch plugin to read
// both (tests/cli/cli_streamed_xplane_test.sh,
// tests/interop/test_streamed_xplane.py).
//   write_streamed_xplane DIR HOST
#include <cstdio>
#include <string>

#include "src/collectors/host/host_collector.h"
#include "src/export/atomic_file.h"
#include "src/export/logdir.h"
#include "src/xplane/xplane_builder.h"
#include "tests/export/ring_variety.h"

int main(int argc, char** argv) {
  using namespace neuronprof;  // NOLINT: a test tool.
  if (argc != 3) {
    std::fprintf(stderr, "usage: write_streamed_xplane DIR HOST\n");
    return 2;
  }
  const std::string dir = argv[1], host = argv[2];
  auto capture = testing::RecordVarietyInRing();
  if (!capture.ok()) {
    std::fprintf(stderr, "%s\n", capture.status().ToString().c_str());
    return 1;
  }
  tensorflow::profiler::XSpace space;
  xplane::SetProfileTimes(&space, capture->start_epoch_ns, capture->stop_epoch_ns);
  space.add_hostnames(host);
  tensorflow::profiler::XSpace whole = space;
  collectors::CollectStats stats;
  collectors::AddHostPlane(*capture, &whole, &stats);
  exporter::ExportOptions whole_files;
  whole_files.pytorch_trace_dir = dir + "/whole";
  absl::Status s = exporter::MakeDirectories(dir + "/whole");
  if (s.ok()) s = exporter::WriteProfileFiles(whole, dir + "/whole", host, whole_files).status();
  collectors::SortSnapshotRecords(&*capture);  // As a dump does.
  // As Stop() of host markers alone writes them: the xplane.pb streamed,
  // the traces from fragments of the plane built again.
  tensorflow::profiler::XPlane built;
  exporter::ExportOptions streamed_files;
  streamed_files.pytorch_trace_dir = dir + "/streamed";
  streamed_files.streamed_plane = [&](xplane::XPlaneSink* sink) {
    return collectors::StreamHostPlane(*capture, space, sink, &stats, &built);
  };
  streamed_files.plane_fragments = [&](tensorflow::profiler::XPlane* plane,
                                       const std::function<absl::Status()>& ready) {
    return collectors::FragmentHostPlane(*capture, space, built, plane, 1000, ready);
  };
  if (s.ok()) s = exporter::MakeDirectories(dir + "/streamed");
  if (s.ok()) {
    s = exporter::WriteProfileFiles(space, dir + "/streamed", host, streamed_files).status();
  }
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    return 1;
  }
  return 0;
}
