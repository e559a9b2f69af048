// nccl-tests' bandwidth definitions (src/xplane/collective_bandwidth.h).
#include "src/xplane/collective_bandwidth.h"

#include <catch2/catch.hpp>

namespace neuronprof {
namespace {

using xplane::AlgorithmBytes;
using xplane::BusBandwidthFactor;

TEST_CASE("bus bandwidth factors are nccl-tests'") {
  CHECK(BusBandwidthFactor("all_reduce", 4) == Approx(1.5));
  CHECK(BusBandwidthFactor("allreduce", 2) == Approx(1.0));
  CHECK(BusBandwidthFactor("all_gather", 4) == Approx(0.75));
  CHECK(BusBandwidthFactor("reduce_scatter", 8) == Approx(0.875));
  CHECK(BusBandwidthFactor("broadcast", 8) == Approx(1.0));
  CHECK(BusBandwidthFactor("reduce", 8) == Approx(1.0));
  CHECK(BusBandwidthFactor("all_reduce", 1) == Approx(0.0));
  CHECK(AlgorithmBytes("all_gather", 100, 4) == Approx(400));
  CHECK(AlgorithmBytes("all_reduce", 100, 4) == Approx(100));
}

}  // namespace
}  // namespace neuronprof
