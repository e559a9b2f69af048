// nccl-tests' bandwidth definitions for c10d collectives: the one copy that
// the torch collector (recording algbw/busbw per event) and the multi-rank
// summary (bandwidth per collective) both use.
#ifndef NEURONPROF_SRC_XPLANE_COLLECTIVE_BANDWIDTH_H_
#define NEURONPROF_SRC_XPLANE_COLLECTIVE_BANDWIDTH_H_

#include <string_view>

namespace neuronprof {
namespace xplane {

// The bus bandwidth factor of a collective ("all_reduce", "allreduce",
// "all_gather", "reduce_scatter", "broadcast", ...) over n ranks:
// 2(n-1)/n for all_reduce, (n-1)/n for all_gather, reduce_scatter and
// all_to_all, 1 for the rest.
double BusBandwidthFactor(std::string_view collective, int n);
// The bytes the algorithm bandwidth counts given the bytes of the inputs
// (all_gather: the gathered output, n times the input).
double AlgorithmBytes(std::string_view collective, double input_bytes, int n);

}  // namespace xplane
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_XPLANE_COLLECTIVE_BANDWIDTH_H_
