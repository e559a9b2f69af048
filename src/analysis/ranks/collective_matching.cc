#include "src/analysis/ranks/collective_matching.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <string_view>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "src/xplane/saturating.h"

namespace neuronprof {
namespace analysis {
namespace {

// Collectives of the reference compared per other rank: enough to outvote
// a few at a window's edge, few enough to cost nothing.
constexpr size_t kVotes = 64;
// Beyond any real count (crafted files: keeps llabs and sums defined).
constexpr int64_t kMaxOffset = int64_t{1} << 40;

}  // namespace

int64_t SeqOffset(const std::vector<RankCollective>& reference,
                  const std::vector<RankCollective>& other) {
  // Collectives are in start order; spans of one op do not nest, so the
  // ones overlapping [start, end] are just before the first starting after.
  std::map<int64_t, int> votes;
  size_t counted = 0;
  for (const RankCollective& mine : other) {
    if (counted == kVotes) break;
    if (!mine.has_seq) continue;
    ++counted;
    auto it = std::upper_bound(reference.begin(), reference.end(), mine.end_ps,
                               [](int64_t t, const RankCollective& c) { return t < c.start_ps; });
    for (int back = 0; back < 8 && it != reference.begin(); ++back) {
      --it;
      if (it->end_ps < mine.start_ps) continue;
      if (!it->has_seq || it->op != mine.op) continue;
      const int64_t offset = SaturatingSub(it->seq, mine.seq);
      if (offset > -kMaxOffset && offset < kMaxOffset) ++votes[offset];
    }
  }
  int64_t best = 0;
  int best_votes = 0;
  for (const auto& [offset, count] : votes) {
    if (count > best_votes || (count == best_votes && std::llabs(offset) < std::llabs(best))) {
      best = offset;
      best_votes = count;
    }
  }
  return best;
}

std::vector<CollectiveInstance> MatchCollectives(
    const std::vector<const std::vector<RankCollective>*>& ranks) {
  std::vector<CollectiveInstance> instances;
  if (ranks.empty()) return instances;
  const size_t n = ranks.size();
  absl::flat_hash_map<std::pair<std::string_view, int64_t>, size_t> by_key;
  for (size_t r = 0; r < n; ++r) {
    const int64_t offset = r == 0 ? 0 : SeqOffset(*ranks[0], *ranks[r]);
    const std::vector<RankCollective>& mine = *ranks[r];
    for (size_t i = 0; i < mine.size(); ++i) {
      size_t at = instances.size();
      if (mine[i].has_seq) {
        auto [it, added] = by_key.try_emplace(
            std::make_pair(std::string_view(mine[i].op), SaturatingAdd(mine[i].seq, offset)), at);
        // A key seen twice on one rank (two threads issuing collectives)
        // starts a new instance rather than overwrite the first.
        if (!added && instances[it->second].member[r] < 0) {
          at = it->second;
        } else if (!added) {
          it->second = at;
        }
      }
      if (at == instances.size()) instances.push_back({std::vector<int>(n, -1), false});
      instances[at].member[r] = static_cast<int>(i);
    }
  }
  for (CollectiveInstance& instance : instances) {
    instance.complete =
        std::all_of(instance.member.begin(), instance.member.end(), [](int m) { return m >= 0; });
  }
  return instances;
}

}  // namespace analysis
}  // namespace neuronprof
