// Writes the synthetic serving capture (tests/analysis/request_space.h) as
// <dir>/<host>.xplane.pb and <host>.trace.json.gz with the exporter that
// captures use:
//   write_request_xplane DIR HOST [--requests N] [--slow I,J,...] [--delay_us D] [--irregular]
//     [--flows]  (MakeFlowSpace instead: flows, an async span, a counter, instants)
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "src/export/logdir.h"
#include "tests/analysis/request_space.h"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr,
                 "usage: %s DIR HOST [--requests N] [--slow I,J,...] [--delay_us D] "
                 "[--irregular] [--flows]\n",
                 argv[0]);
    return 2;
  }
  int requests = 200;
  std::vector<int> slow;
  int64_t delay_us = 0;
  bool irregular = false;
  bool flows = false;
  for (int i = 3; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--requests" && i + 1 < argc) {
      requests = std::atoi(argv[++i]);
    } else if (arg == "--slow" && i + 1 < argc) {
      for (absl::string_view part : absl::StrSplit(argv[++i], ',')) {
        int index = 0;
        if (!absl::SimpleAtoi(part, &index)) return 2;
        slow.push_back(index);
      }
    } else if (arg == "--delay_us" && i + 1 < argc) {
      delay_us = std::atoll(argv[++i]);
    } else if (arg == "--irregular") {
      irregular = true;
    } else if (arg == "--flows") {
      flows = true;
    } else {
      std::fprintf(stderr, "unknown argument '%s'\n", arg.c_str());
      return 2;
    }
  }
  const auto space =
      flows ? neuronprof::testing::MakeFlowSpace(requests, slow, delay_us)
            : neuronprof::testing::MakeRequestSpace(requests, slow, delay_us, irregular);
  neuronprof::exporter::ExportOptions options;
  auto files = neuronprof::exporter::WriteProfileFiles(space, argv[1], argv[2], options);
  if (!files.ok()) {
    std::fprintf(stderr, "%s\n", std::string(files.status().message()).c_str());
    return 1;
  }
  for (const std::string& file : *files) std::printf("%s\n", file.c_str());
  return 0;
}
