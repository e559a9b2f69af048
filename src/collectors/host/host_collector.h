// Collects ScopedTrace / StepTrace markers into the "/host:CPU" plane: one
// line per thread, events sorted by start so viewers nest them.
#ifndef NEURONPROF_SRC_COLLECTORS_HOST_HOST_COLLECTOR_H_
#define NEURONPROF_SRC_COLLECTORS_HOST_HOST_COLLECTOR_H_

#include <memory>
#include <string>

#include "src/collectors/collector.h"
#include "src/core/recorder.h"

namespace neuronprof {
namespace collectors {

// Builds the host plane from one recorded capture; adds a warning to the
// space when events were dropped, ending with `buffer_advice`.
void AddHostPlane(const core::RecordedCapture& capture,
                  tensorflow::profiler::XSpace* space, CollectStats* stats,
                  const std::string& buffer_advice = kLocalBufferAdvice);

std::unique_ptr<Collector> CreateHostCollector(const CaptureOptions& options);

}  // namespace collectors
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_COLLECTORS_HOST_HOST_COLLECTOR_H_
