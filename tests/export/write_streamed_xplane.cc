// Writes one ring snapshot (ring_variety.h) twice: built whole as an
// XSpace (DIR/whole/HOST.xplane.pb) and with its host plane streamed as a
// flight recorder's dump writes it (DIR/streamed/HOST.xplane.pb), for the
// CLI and xprof to read both (tests/cli/cli_streamed_xplane_test.sh,
// tests/interop/test_streamed_xplane.py).
//   write_streamed_xplane DIR HOST
#include <cstdio>
#include <string>

#include "src/collectors/host/host_collector.h"
#include "src/export/atomic_file.h"
#include "src/export/xplane_stream.h"
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
  absl::Status s = exporter::MakeDirectories(dir + "/whole");
  if (s.ok()) s = exporter::WriteFileAtomically(dir + "/whole/" + host + ".xplane.pb",
                                                whole.SerializeAsString());
  collectors::SortSnapshotRecords(&*capture);  // As a dump does.
  if (s.ok()) s = exporter::MakeDirectories(dir + "/streamed");
  if (s.ok()) {
    s = exporter::WriteXSpaceStreamed(
        space,
        [&](xplane::XPlaneSink* sink) {
          return collectors::StreamHostPlane(*capture, space, sink, &stats);
        },
        dir + "/streamed/" + host + ".xplane.pb");
  }
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    return 1;
  }
  return 0;
}
