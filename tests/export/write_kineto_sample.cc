// Writes the Kineto test sample (kineto_sample_space.h) the way a capture
// does, for tests/interop/test_pytorch_plugin.py:
//   write_kineto_sample LOGDIR RUN [WORLD_SIZE]
// -> LOGDIR/plugins/profile/RUN/testhost.xplane.pb and
//    LOGDIR/RUN/testhost.pt.trace.json.gz; prints every path written.
// With WORLD_SIZE > 1: the sample once per rank of a Gloo job, as
// testhost_rank<r>.* (the names a Profiler of that rank writes).
#include <cstdio>
#include <cstdlib>
#include <string>

#include "src/export/atomic_file.h"
#include "src/export/logdir.h"
#include "src/xplane/job_identity.h"
#include "tests/export/kineto_sample_space.h"

int main(int argc, char** argv) {
  if (argc != 3 && argc != 4) {
    std::fprintf(stderr, "usage: write_kineto_sample LOGDIR RUN [WORLD_SIZE]\n");
    return 2;
  }
  const int world_size = argc == 4 ? std::atoi(argv[3]) : 1;
  if (world_size < 1) {
    std::fprintf(stderr, "WORLD_SIZE must be a positive number\n");
    return 2;
  }
  using namespace neuronprof;
  const std::string logdir = argv[1];
  const std::string run = argv[2];
  const std::string run_dir = exporter::ProfileRoot(logdir) + "/" + run;
  if (auto s = exporter::MakeDirectories(run_dir); !s.ok()) {
    std::fprintf(stderr, "%s\n", std::string(s.message()).c_str());
    return 1;
  }
  exporter::ExportOptions options;
  options.pytorch_trace_dir = logdir + "/" + run;
  for (int rank = 0; rank < world_size; ++rank) {
    auto space = testing::KinetoSampleSpace();
    xplane::JobIdentity identity;
    if (world_size > 1) {
      identity.rank = rank;
      identity.local_rank = rank;
      identity.world_size = world_size;
      identity.backend = "gloo";
      xplane::AddJobIdentity(identity, &space);
    }
    auto files = exporter::WriteProfileFiles(space, run_dir,
                                             xplane::RankedHostName("testhost", identity), options);
    if (!files.ok()) {
      std::fprintf(stderr, "%s\n", std::string(files.status().message()).c_str());
      return 1;
    }
    for (const std::string& path : *files) std::printf("%s\n", path.c_str());
  }
  return 0;
}
