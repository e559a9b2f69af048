// Where each step's time goes: forward, backward and other operators, time
// in user markers only, idle; and device busy time in the step's window.
#ifndef NEURONPROF_SRC_ANALYSIS_OPS_STEP_BREAKDOWN_H_
#define NEURONPROF_SRC_ANALYSIS_OPS_STEP_BREAKDOWN_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "proto/xplane.pb.h"
#include "src/analysis/ops/device_attribution.h"
#include "src/analysis/ops/operator_events.h"
#include "src/xplane/xplane_visitor.h"

namespace neuronprof {
namespace analysis {

// Every instant of a step is counted once, in the first category that
// applies: backward (a bprop op runs on any thread of the step's plane),
// optimizer, loss, forward (an op with that direction: docs/OPERATORS.md),
// other ops (an op without a direction), markers (a marker nested in the
// step, on the step's thread), idle. The seven add up to duration_ps.
struct StepBreakdown {
  std::string name;  // "<event name> <step_num>", as xprof names steps
  int64_t start_ps = 0, duration_ps = 0;
  int64_t backward_ps = 0, forward_ps = 0, loss_ps = 0, optimizer_ps = 0, other_ops_ps = 0,
          markers_ps = 0, idle_ps = 0;
  // "/device:*" planes: time any device event runs inside the window, and
  // the same per kind (device_event_kind stat, else "other").
  bool has_device = false;
  int64_t device_busy_ps = 0;
  std::map<std::string, int64_t> device_kind_ps;
  int64_t thread = -1;  // the step's line id (the OS thread id)
  // Device time of the work launched inside the step, on its thread
  // (DeviceOpEvent's launch), wherever it ran: unlike device_busy_ps, not
  // the work other threads' steps launched into the same window.
  int64_t launched_device_ps = 0;
};

// Steps in start order.
std::vector<StepBreakdown> BuildStepBreakdown(const tensorflow::profiler::XSpace& space,
                                              const OperatorEvents& ops);

// Sets each step's launched_device_ps from the device events' launches.
void AddLaunchedDeviceTime(const DeviceEvents& device, std::vector<StepBreakdown>& steps);

}  // namespace analysis
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_ANALYSIS_OPS_STEP_BREAKDOWN_H_
