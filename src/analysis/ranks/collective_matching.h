// One collective across the ranks of a run: the same (op, comm_seq) on each
// rank. comm_seq counts a thread's collectives from its first recorded one,
// so ranks whose captures began at different collectives number them from
// different points; the difference is found from the spans' times (a
// collective's spans overlap on every rank: none can finish before the last
// rank has started).
#ifndef NEURONPROF_SRC_ANALYSIS_RANKS_COLLECTIVE_MATCHING_H_
#define NEURONPROF_SRC_ANALYSIS_RANKS_COLLECTIVE_MATCHING_H_

#include <cstdint>
#include <vector>

#include "src/analysis/ranks/rank_data.h"

namespace neuronprof {
namespace analysis {

struct CollectiveInstance {
  // Per rank (position in the run): index of its RankCollective, -1 absent.
  std::vector<int> member;
  bool complete = false;  // every rank recorded it
};

// `ranks`: each rank's collectives, times on one time base. Instances in
// the order of the first rank that has them; collectives without comm_seq
// are instances of their own.
std::vector<CollectiveInstance> MatchCollectives(
    const std::vector<const std::vector<RankCollective>*>& ranks);

// What to add to `other`'s comm_seq to get `reference`'s numbering: the
// difference most of other's first collectives show against the reference's
// collectives of the same op that overlap them in time; 0 when none do.
int64_t SeqOffset(const std::vector<RankCollective>& reference,
                  const std::vector<RankCollective>& other);

}  // namespace analysis
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_ANALYSIS_RANKS_COLLECTIVE_MATCHING_H_
