// Writes the ranks of a synthetic distributed job (tests/analysis/rank_space.h)
// into one run folder, <dir>/node_rank<R>.xplane.pb, as a capture of every
// rank would: for the CLI tests of the multi-rank summary, its faults, and
// the scale measurement (docs/PERFORMANCE.md, "Multi-rank summary").
//   write_rank_xplanes DIR [--ranks 0,1,3] [--world_size W] [--steps N]
//       [--straggler R] [--late_us US] [--extra_ops N] [--shift R:SECONDS]
//       [--world_size_of R:W] [--duplicate R] [--warning R]
// --ranks defaults to every rank of the world; --extra_ops adds 1 us ops in
// each forward (101 + N events per step); --shift starts rank R's capture
// SECONDS later; --world_size_of gives rank R another world size;
// --duplicate also writes rank R as other_rank<R>; --warning gives rank R's
// capture a warning (what it lost), as a window cut short would.
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "src/export/logdir.h"
#include "src/xplane/job_identity.h"
#include "tests/analysis/rank_space.h"

namespace {

using neuronprof::testing::RankSpaceOptions;

bool Pair(const char* text, int* key, long long* value) {
  return std::sscanf(text, "%d:%lld", key, value) == 2;
}

int Write(const RankSpaceOptions& options, const std::string& dir, const std::string& host,
          bool warning) {
  auto space = neuronprof::testing::MakeRankSpace(options);
  if (warning) space.add_warnings("ms_duration=50 ended the window at 50 ms");
  neuronprof::xplane::JobIdentity identity;
  identity.rank = options.rank;
  identity.world_size = options.world_size;
  neuronprof::exporter::ExportOptions export_options;
  export_options.chrome_trace = false;
  auto files = neuronprof::exporter::WriteProfileFiles(
      space, dir, neuronprof::xplane::RankedHostName(host, identity), export_options);
  if (!files.ok()) {
    std::fprintf(stderr, "%s\n", std::string(files.status().message()).c_str());
    return 1;
  }
  for (const std::string& file : *files) std::printf("%s\n", file.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s DIR [options] (see the source)\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  RankSpaceOptions base;
  std::vector<int> ranks;
  std::map<int, long long> shift_s, world_size_of;
  int duplicate = -1, warning = -1;
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : nullptr;
    int key = 0;
    long long number = 0;
    if (value == nullptr) {
      std::fprintf(stderr, "'%s' needs a value\n", arg.c_str());
      return 2;
    }
    ++i;
    if (arg == "--ranks") {
      for (const char* p = value; *p != '\0';) {
        char* end = nullptr;
        ranks.push_back(static_cast<int>(std::strtol(p, &end, 10)));
        p = *end == ',' ? end + 1 : end;
        if (end == p && *p != '\0') break;
      }
    } else if (arg == "--world_size") {
      base.world_size = std::atoi(value);
    } else if (arg == "--steps") {
      base.steps = std::atoi(value);
    } else if (arg == "--straggler") {
      base.straggler = std::atoi(value);
    } else if (arg == "--late_us") {
      base.late_us = std::atoll(value);
    } else if (arg == "--extra_ops") {
      base.extra_ops = std::atoi(value);
    } else if (arg == "--shift" && Pair(value, &key, &number)) {
      shift_s[key] = number;
    } else if (arg == "--world_size_of" && Pair(value, &key, &number)) {
      world_size_of[key] = number;
    } else if (arg == "--duplicate") {
      duplicate = std::atoi(value);
    } else if (arg == "--warning") {
      warning = std::atoi(value);
    } else {
      std::fprintf(stderr, "unknown argument '%s %s'\n", arg.c_str(), value);
      return 2;
    }
  }
  if (ranks.empty()) {
    for (int r = 0; r < base.world_size; ++r) ranks.push_back(r);
  }
  for (int r : ranks) {
    RankSpaceOptions options = base;
    options.rank = r;
    if (shift_s.count(r)) options.start_epoch_ns += shift_s[r] * 1'000'000'000;
    if (world_size_of.count(r)) options.world_size = static_cast<int>(world_size_of[r]);
    if (Write(options, dir, "node", r == warning) != 0) return 1;
    if (r == duplicate && Write(options, dir, "other", false) != 0) return 1;
  }
  return 0;
}
