// What the multi-rank summary needs of one rank's capture, read in one pass
// so that a run's XSpaces need not stay in memory together: the rank
// identity, the capture window, the steps, the time the rank computed and
// communicated, and its collectives. Definitions in docs/ANALYSIS.md
// ("Multi-rank summary").
#ifndef NEURONPROF_SRC_ANALYSIS_RANKS_RANK_DATA_H_
#define NEURONPROF_SRC_ANALYSIS_RANKS_RANK_DATA_H_

#include <cstdint>
#include <string>
#include <vector>

#include "proto/xplane.pb.h"
#include "src/xplane/job_identity.h"

namespace neuronprof {
namespace analysis {

// Times are picoseconds from the rank's own capture start.
struct Span {
  int64_t start_ps = 0, end_ps = 0;
};
// Sorted, disjoint, non-empty spans: a union of intervals.
using SpanUnion = std::vector<Span>;

struct RankStep {
  int64_t number = 0;  // step_num, else the step's index in the capture
  std::string name;    // the step event's name ("train")
  int64_t start_ps = 0, end_ps = 0;
};

// One collective's work on this rank (a c10d Work span, "gloo:all_reduce").
struct RankCollective {
  std::string op;          // the span's name, "gloo:all_reduce"
  std::string collective;  // its collective stat, "all_reduce"
  bool has_seq = false;
  int64_t seq = 0;    // comm_seq
  int64_t bytes = 0;  // msg_bytes
  // When the rank got to the collective: its dispatcher enqueue's start
  // (linked by comm_id) when recorded, else the work span's start.
  int64_t arrival_ps = 0;
  int64_t start_ps = 0, end_ps = 0;  // the work span
};

struct RankData {
  std::string file;
  xplane::JobIdentity identity;
  int64_t start_ns = 0, stop_ns = 0;  // capture window, ns since the epoch; 0 unknown
  std::vector<RankStep> steps;        // start order
  // Host time in operators and markers other than steps and communication,
  // on any thread; and time in collectives (work spans, dispatcher
  // enqueues, record_param_comms, and what nests in them).
  SpanUnion compute, comm;
  std::vector<RankCollective> collectives;  // start order
};

RankData ReadRankData(const tensorflow::profiler::XSpace& space, std::string file);

// The union of possibly overlapping spans.
SpanUnion MergeSpans(std::vector<Span> spans);
// Where both unions hold.
SpanUnion IntersectSpans(const SpanUnion& a, const SpanUnion& b);
// (The time of a union inside a window: coverage.h, O(log n) per window.)

}  // namespace analysis
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_ANALYSIS_RANKS_RANK_DATA_H_
