// Writes the synthetic operator capture (tests/analysis/operator_space.h),
// annotated by AnnotateOperatorEvents, as <dir>/<host>.xplane.pb with the
// exporter that captures use; with --gpu, the GPU capture of
// tests/analysis/device_space.h instead:
//   write_operator_xplane DIR HOST [--steps N] [--device] [--no-annotate] [--gpu]
#include <cstdio>
#include <cstdlib>
#include <string>

#include "src/analysis/ops/operator_annotator.h"
#include "src/export/logdir.h"
#include "tests/analysis/device_space.h"
#include "tests/analysis/operator_space.h"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s DIR HOST [--steps N] [--device] [--no-annotate] [--gpu]\n",
                 argv[0]);
    return 2;
  }
  int steps = 8;
  bool device = false, annotate = true, gpu = false;
  for (int i = 3; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--steps" && i + 1 < argc) {
      steps = std::atoi(argv[++i]);
    } else if (arg == "--device") {
      device = true;
    } else if (arg == "--no-annotate") {
      annotate = false;
    } else if (arg == "--gpu") {
      gpu = true;
    } else {
      std::fprintf(stderr, "unknown argument '%s'\n", arg.c_str());
      return 2;
    }
  }
  auto space = gpu ? neuronprof::testing::MakeGpuCapture()
                   : neuronprof::testing::MakeOperatorSpace(steps, device);
  if (annotate) neuronprof::analysis::AnnotateOperatorEvents(&space);
  neuronprof::exporter::ExportOptions options;
  options.chrome_trace = false;
  auto files = neuronprof::exporter::WriteProfileFiles(space, argv[1], argv[2], options);
  if (!files.ok()) {
    std::fprintf(stderr, "%s\n", std::string(files.status().message()).c_str());
    return 1;
  }
  for (const std::string& file : *files) std::printf("%s\n", file.c_str());
  return 0;
}
