// The multi-rank summary of a distributed job's run: per rank and step,
// compute, communication, their overlap and idle time; the straggler whose
// late arrival at collectives the other ranks waited for; and the
// collectives table. Definitions in docs/ANALYSIS.md ("Multi-rank summary").
#ifndef NEURONPROF_SRC_ANALYSIS_RANKS_RANK_REPORT_H_
#define NEURONPROF_SRC_ANALYSIS_RANKS_RANK_REPORT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "src/analysis/ranks/rank_data.h"

namespace neuronprof {
namespace analysis {

// One step of one rank. Times in ps; start from the run's earliest capture
// start. compute + comm - overlap + idle = duration.
struct RankStepRow {
  int rank = 0;
  int64_t step = 0;
  std::string name;
  int64_t start_ps = 0, duration_ps = 0;
  int64_t compute_ps = 0, comm_ps = 0, overlap_ps = 0, idle_ps = 0;
  // Time this rank waited in the step's collectives for a later rank.
  int64_t waited_ps = 0;
};

struct RankTotals {
  int rank = 0;
  std::string file;
  int64_t steps = 0;
  int64_t step_ps = 0, compute_ps = 0, comm_ps = 0, overlap_ps = 0, idle_ps = 0;  // sums
  int64_t waited_ps = 0;      // in every matched collective, steps or not
  int64_t last_arrivals = 0;  // collectives where the others waited for this rank
  int64_t caused_ps = 0;      // the others' waiting in those
};

struct CollectiveRow {
  std::string op;                         // "gloo:all_reduce"
  std::string collective;                 // "all_reduce"
  int64_t calls = 0;                      // instances (one per collective across the ranks)
  int64_t bytes_per_call = 0;             // mean msg_bytes of a rank
  int64_t total_ps = 0;                   // sum over calls of the ranks' mean span
  int64_t wait_ps = 0;                    // the ranks' waiting in this op, summed
  double algbw_gbps = 0, busbw_gbps = 0;  // over total_ps; 0 without bytes
};

// Ranks first..last, both included.
struct RankRange {
  int first = 0, last = 0;
  bool operator==(const RankRange& other) const {
    return first == other.first && last == other.last;
  }
};

struct RankReport {
  int world_size = 0;
  std::string backend;
  // Ranks of the world without a file, as ranges: a file may claim any world
  // size, and memory follows the files present, not that claim.
  std::vector<RankRange> missing;
  int64_t window_start_ns = 0, window_stop_ns = 0;  // where every capture ran
  std::vector<RankTotals> ranks;                    // by rank
  std::vector<RankStepRow> steps;                   // by step number, then rank
  std::vector<CollectiveRow> collectives;           // longest total first
  int64_t matched = 0;                              // collectives every rank recorded
  int64_t unmatched = 0;  // recorded by some ranks only (window edges, a rank gone)
  int64_t total_wait_ps = 0;
  int straggler = -1;  // the rank that caused the most waiting; -1: none
};

// The ranks of 0..world_size-1 that are not in `present` (sorted), in
// at most present.size() + 1 ranges.
std::vector<RankRange> MissingRanks(int world_size, const std::vector<int>& present);
int64_t RankCount(const std::vector<RankRange>& ranges);
// "0, 1, 3, 5-2147483646": ranges of three or more ranks as first-last.
std::string FormatRanks(const std::vector<RankRange>& ranges);

// InvalidArgument, naming the files or ranks, when the ranks are not of one
// job (different world sizes, one rank twice, a capture without a window)
// or their capture windows have no time in common.
absl::StatusOr<RankReport> BuildRankReport(std::vector<RankData> ranks);

}  // namespace analysis
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_ANALYSIS_RANKS_RANK_REPORT_H_
