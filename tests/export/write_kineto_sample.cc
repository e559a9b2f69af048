// Writes the Kineto test sample (kineto_sample_space.h) the way a capture
// does, for tests/interop/test_pytorch_plugin.py:
//   write_kineto_sample LOGDIR RUN
// -> LOGDIR/plugins/profile/RUN/testhost.xplane.pb and
//    LOGDIR/RUN/testhost.pt.trace.json.gz; prints every path written.
#include <cstdio>
#include <string>

#include "src/export/atomic_file.h"
#include "src/export/logdir.h"
#include "tests/export/kineto_sample_space.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: write_kineto_sample LOGDIR RUN\n");
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
  auto files = exporter::WriteProfileFiles(testing::KinetoSampleSpace(), run_dir,
                                           "testhost", options);
  if (!files.ok()) {
    std::fprintf(stderr, "%s\n", std::string(files.status().message()).c_str());
    return 1;
  }
  for (const std::string& path : *files) std::printf("%s\n", path.c_str());
  return 0;
}
