// Where memory goes: per allocator (libtorch's "cpu", "cuda:0", a device
// plug-in's pool), the peak of allocated and reserved bytes, when it
// happened and which operator held it; memory by operator; per step, the
// step's peak and net growth (a leak grows every step). Read from the
// MemoryAllocation / MemoryDeallocation events of the host planes
// (xplane/schema.h).
#ifndef NEURONPROF_SRC_ANALYSIS_MEMORY_MEMORY_REPORT_H_
#define NEURONPROF_SRC_ANALYSIS_MEMORY_MEMORY_REPORT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "proto/xplane.pb.h"
#include "src/analysis/ops/operator_events.h"
#include "src/analysis/ops/step_breakdown.h"
#include "src/xplane/saturating.h"

namespace neuronprof {
namespace analysis {

// Memory by the operator that allocated (the innermost one).
struct OpMemory {
  std::string op;           // "aten::empty"; "(no operator)" outside ops
  int64_t allocations = 0;  // blocks allocated
  int64_t allocated_bytes = 0;
  int64_t freed_bytes = 0;  // of those blocks, freed inside the window
  int64_t net_bytes() const { return SaturatingSub(allocated_bytes, freed_bytes); }  // still held
  int64_t calls = 0;  // operator events of that name
  // Steps in which it allocated blocks still held at the end: a leak holds
  // blocks from every step, a cache or the last step's results from few.
  int64_t steps_holding = 0;
};

struct StepMemory {
  std::string step;          // as in the step breakdown
  int64_t peak_bytes = 0;    // highest bytes allocated during the step
  int64_t growth_bytes = 0;  // allocated at its end minus at its start
};

struct AllocatorMemory {
  std::string allocator;  // "cpu", "cuda:0"
  int64_t allocations = 0, frees = 0;
  int64_t peak_allocated_bytes = 0;
  int64_t peak_reserved_bytes = 0;
  int64_t peak_time_ps = 0;  // from the profile start
  // The operators running at the peak, outermost first after their scope:
  // "MLP/layer:fc1 > aten::linear > aten::addmm".
  std::string peak_op;
  int64_t start_bytes = 0;  // allocated before the first event
  int64_t end_bytes = 0;    // allocated after the last event
  // Ill-formed reports, flagged: frees of blocks never seen allocated that
  // would take the total below zero, out-of-memory reports, and the like.
  int64_t anomalies = 0;
  std::string first_anomaly;
  std::vector<OpMemory> by_op;    // most net bytes first
  std::vector<StepMemory> steps;  // in step order
};

struct MemoryReport {
  std::vector<AllocatorMemory> allocators;  // by name
  bool empty() const { return allocators.empty(); }
};

MemoryReport BuildMemoryReport(const tensorflow::profiler::XSpace& space, const OperatorEvents& ops,
                               const std::vector<StepBreakdown>& steps);

}  // namespace analysis
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_ANALYSIS_MEMORY_MEMORY_REPORT_H_
