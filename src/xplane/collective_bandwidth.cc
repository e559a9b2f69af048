#include "src/xplane/collective_bandwidth.h"

namespace neuronprof {
namespace xplane {
namespace {

bool IsAllGather(std::string_view c) {
  return c == "all_gather" || c == "allgather" || c == "_allgather_base" ||
         c == "allgather_base";
}

}  // namespace

double BusBandwidthFactor(std::string_view collective, int n) {
  if (n < 1) n = 1;
  const double ratio = static_cast<double>(n - 1) / n;
  if (collective == "all_reduce" || collective == "allreduce" ||
      collective == "allreduce_coalesced") {
    return 2.0 * ratio;
  }
  if (IsAllGather(collective) || collective == "reduce_scatter" ||
      collective == "_reduce_scatter_base" || collective == "reduce_scatter_base" ||
      collective == "all_to_all" || collective == "alltoall" || collective == "alltoall_base") {
    return ratio;
  }
  return 1.0;  // broadcast, reduce, send, recv, gather, scatter.
}

double AlgorithmBytes(std::string_view collective, double input_bytes, int n) {
  // nccl-tests count all_gather's size as the gathered buffer.
  if (IsAllGather(collective)) return input_bytes * (n < 1 ? 1 : n);
  return input_bytes;
}

}  // namespace xplane
}  // namespace neuronprof
