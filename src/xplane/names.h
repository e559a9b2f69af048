// Plane, line and stat names that profile viewers (xprof, TensorBoard's
// profile plugin) look for. Every other module takes names from here.
#ifndef NEURONPROF_SRC_XPLANE_NAMES_H_
#define NEURONPROF_SRC_XPLANE_NAMES_H_

namespace neuronprof {
namespace xplane {

inline constexpr char kHostPlaneName[] = "/host:CPU";
inline constexpr char kTaskEnvironmentPlaneName[] = "Task Environment";

// Stats on host events.
inline constexpr char kStepNumStat[] = "step_num";
inline constexpr char kIterNumStat[] = "iter_num";
inline constexpr char kRootLevelStat[] = "_r";
inline constexpr char kGroupIdStat[] = "group_id";
inline constexpr char kStepNameStat[] = "step_name";
inline constexpr char kTfOpStat[] = "tf_op";
inline constexpr char kFlopsStat[] = "flops";
inline constexpr char kBytesAccessedStat[] = "bytes_accessed";
inline constexpr char kCorrelationIdStat[] = "correlation_id";

// Stats of the "Task Environment" plane (uint64, ns since the epoch).
inline constexpr char kProfileStartTimeStat[] = "profile_start_time";
inline constexpr char kProfileStopTimeStat[] = "profile_stop_time";

// Plane-level stats written by neuronprof.
inline constexpr char kDroppedEventsStat[] = "neuronprof_dropped_events";

}  // namespace xplane
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_XPLANE_NAMES_H_
