// Umbrella header of neuronprof: include this one.
//   markers:  neuronprof::ScopedTrace, neuronprof::StepTrace  (trace.h)
//   sessions: neuronprof::Profiler, neuronprof::ProfilerOptions (profiler.h)
//   remote capture client: neuronprof::Capture, neuronprof::CaptureOptions
//                          (capture.h)
//   capture server: neuronprof::ProfilerServer, ProfilerServerOptions
//                   (server.h)
//   marker and step statistics, tails: neuronprof::SummarizeMarkers
//                   (summary.h)
//   FLOP/byte formulas of custom ops: neuronprof::RegisterOpCost (op_costs.h)
// Included on their own: device plug-ins (device.h), and the separately
// linked CUPTI collector (cupti.h, neuronprof::cupti) and libtorch
// operators (torch.h, neuronprof::torch).
#ifndef NEURONPROF_NEURONPROF_H_
#define NEURONPROF_NEURONPROF_H_

#include "neuronprof/capture.h"
#include "neuronprof/flight_recorder.h"
#include "neuronprof/op_costs.h"
#include "neuronprof/profiler.h"
#include "neuronprof/server.h"
#include "neuronprof/summary.h"
#include "neuronprof/trace.h"

#endif  // NEURONPROF_NEURONPROF_H_
