// A Profiler driven by a step schedule (ProfilerOptions::schedule): Step()
// starts and stops captures on the training thread; a writer thread writes
// each cycle's run and runs on_trace_ready.
#ifndef NEURONPROF_SRC_API_SCHEDULED_PROFILER_H_
#define NEURONPROF_SRC_API_SCHEDULED_PROFILER_H_

#include <memory>

#include "neuronprof/profiler.h"

namespace neuronprof {
namespace api {

// `options` are valid and have a schedule.
std::unique_ptr<Profiler::Impl> NewScheduledProfiler(const ProfilerOptions& options);

}  // namespace api
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_API_SCHEDULED_PROFILER_H_
