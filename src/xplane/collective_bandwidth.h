// nccl-tests' bandwidth definitions for c10d collectives: the one copy that
// the torch collector (recording algbw/busbw per event) and the multi-rank
// summary (bandwidth per collective) both use. Inline: libneuronprof_torch
// cannot call libneuronprof's hidden xplane symbols.
#ifndef NEURONPROF_SRC_XPLANE_COLLECTIVE_BANDWIDTH_H_
#define NEURONPROF_SRC_XPLANE_COLLECTIVE_BANDWIDTH_H_

#include <string_view>

namespace neuronprof {
namespace xplane {

// all_gather under its c10d spellings.
inline bool IsAllGatherCollective(std::string_view c) {
  return c == "all_gather" || c == "allgather" || c == "_allgather_base" || c == "allgather_base";
}

// The bus bandwidth factor of a collective ("all_reduce", "allreduce",
// "all_gather", "reduce_scatter", "broadcast", ...) over n ranks:
// 2(n-1)/n for all_reduce, (n-1)/n for all_gather, reduce_scatter and
// all_to_all, 1 for the rest.
inline double BusBandwidthFactor(std::string_view collective, int n) {
  if (n < 1) n = 1;
  const double ratio = static_cast<double>(n - 1) / n;
  if (collective == "all_reduce" || collective == "allreduce" ||
      collective == "allreduce_coalesced") {
    return 2.0 * ratio;
  }
  if (IsAllGatherCollective(collective) || collective == "reduce_scatter" ||
      collective == "_reduce_scatter_base" || collective == "reduce_scatter_base" ||
      collective == "all_to_all" || collective == "alltoall" || collective == "alltoall_base") {
    return ratio;
  }
  return 1.0;  // broadcast, reduce, send, recv, gather, scatter.
}

// The bytes the algorithm bandwidth counts given the bytes of the inputs
// (all_gather: the gathered output, n times the input).
inline double AlgorithmBytes(std::string_view collective, double input_bytes, int n) {
  return IsAllGatherCollective(collective) ? input_bytes * (n < 1 ? 1 : n) : input_bytes;
}

}  // namespace xplane
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_XPLANE_COLLECTIVE_BANDWIDTH_H_
