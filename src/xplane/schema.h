// Plane, line and stat names that profile viewers (xprof, TensorBoard's
// profile plugin) look for. Every other module takes names from here.
#ifndef NEURONPROF_SRC_XPLANE_SCHEMA_H_
#define NEURONPROF_SRC_XPLANE_SCHEMA_H_

#include <cstdint>
#include <string_view>

namespace neuronprof {
namespace xplane {

inline constexpr char kHostPlaneName[] = "/host:CPU";
inline constexpr char kTaskEnvironmentPlaneName[] = "Task Environment";
// Host-plane line ids from here on are device memory pools, not threads:
// far above OS thread ids.
inline constexpr int64_t kMemoryLineIdBase = int64_t{1} << 48;
// Serving events (neuronprof/trace_events.h) have lines of their own, above
// the memory pools' (so "id >= kMemoryLineIdBase" still means "not a
// thread"): one per async track and overlap lane from kAsyncLineIdBase,
// named after the track, and one counter line.
inline constexpr int64_t kAsyncLineIdBase = int64_t{1} << 49;
inline constexpr int64_t kCounterLineId = int64_t{1} << 50;
// TSL's kCounterEventsLineName: xprof's trace viewer draws the events of a
// line so named as counter tracks, one per event name.
inline constexpr char kCounterLineName[] = "_counters_";
// Line display ids (xprof shows them as the thread id, truncated to 32
// bits) of the async lines, above any Linux thread id (pid_max <= 2^22).
inline constexpr int64_t kAsyncLineDisplayIdBase = int64_t{1} << 30;
inline bool IsThreadLineId(int64_t line_id) { return line_id < kMemoryLineIdBase; }
// The counter line, by name as xprof finds it (TSL writes its own id).
inline bool IsCounterLine(std::string_view line_name) { return line_name == kCounterLineName; }
inline bool IsAsyncLineId(int64_t line_id) {
  return line_id >= kAsyncLineIdBase && line_id < kCounterLineId;
}

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
// Flows between threads (TraceProducer / TraceConsumer), TSL's names:
// int64 context type (TSL's ContextType numbers) and uint64 context id.
// xprof links every producer of a (type, id) to every consumer of it.
inline constexpr char kProducerTypeStat[] = "_pt";
inline constexpr char kProducerIdStat[] = "_p";
inline constexpr char kConsumerTypeStat[] = "_ct";
inline constexpr char kConsumerIdStat[] = "_c";
// uint64 on an async span's event (neuronprof::AsyncTrace::id()).
inline constexpr char kAsyncIdStat[] = "async_id";
// int64, double or uint64 on a counter line's event: the sample.
inline constexpr char kCounterValueStat[] = "value";
// int64 1 on the event metadata of an instant (TraceInstant): a
// zero-length event on its thread's line that is a point, not a scope.
inline constexpr char kInstantStat[] = "instant";
// TSL's kSourceInfo: "file:line" of the code that made the event. On the
// metadata of a NEURONPROF_SCOPE call site; xprof reads it from metadata
// and events alike.
inline constexpr char kSourceStat[] = "source";
// str: the call stack of a marker (NEURONPROF_SCOPE_STACK) or an operator
// (TorchOperatorOptions::record_stacks), one frame a line, innermost
// first: "function (file:line)". On the event.
inline constexpr char kStackStat[] = "stack";

// Framework operators on host lines (written by collectors/torch; read by
// analysis, the exporters and xprof's framework_op_stats).
// tf_op: "<scope path>/<op>:<type>", the form xprof parses into operation
// and type. The event's own name is the framework op name ("aten::addmm",
// "AddmmBackward0").
inline constexpr char kOpSequenceStat[] = "seq";                 // int64, autograd sequence nr
inline constexpr char kOpForwardThreadStat[] = "fwd_thread_id";  // uint64, bprop only
inline constexpr char kOpDirectionStat[] = "direction";          // str "fprop" | "bprop"
inline constexpr char kOpInputDimsStat[] = "input_dims";         // str "[[64,784],[],[128]]"
inline constexpr char kOpInputTypesStat[] = "input_types";       // str "Float,Scalar,Float"
// str: JSON array of strings, the values of non-tensor inputs ("" for
// tensors), e.g. ["","","[1, 1]","false","1"].
inline constexpr char kOpInputValuesStat[] = "input_values";
inline constexpr char kOpScopeStat[] = "scope";          // str "MLP/fc1" (enclosing markers)
inline constexpr char kOpLayerStat[] = "layer";          // str "fc1:relu" (PyProf layer:)
inline constexpr char kOpFrameworkStat[] = "framework";  // str "torch": marks an operator
// c10d collectives (collectors/torch/collectives.h): on the events named
// after a Work's title ("gloo:all_reduce"), and on record_param_comms ops.
inline constexpr char kCollectiveStat[] = "collective";     // str "all_reduce"
inline constexpr char kCommBackendStat[] = "comm_backend";  // str "gloo"
// int64, the same on a dispatcher enqueue ("c10d::allreduce_" operator on
// the calling thread) and the work it started: the link between them.
inline constexpr char kCommIdStat[] = "comm_id";
// int64: the n-th collective the calling thread enqueued through the
// dispatcher (without one: the n-th this process started). libtorch 1.13
// gives profilers no group sequence number; with one thread issuing one
// group's collectives, as DDP, it is the group's order on every rank.
inline constexpr char kCommSeqStat[] = "comm_seq";
inline constexpr char kCommBytesStat[] = "msg_bytes";           // int64, sum of input tensors
inline constexpr char kCommOutBytesStat[] = "out_msg_bytes";    // int64 (record_param_comms)
inline constexpr char kCommNelemsStat[] = "msg_nelems";         // int64, elements of the inputs
inline constexpr char kCommOutNelemsStat[] = "out_msg_nelems";  // int64 (record_param_comms)
inline constexpr char kCommDtypeStat[] = "dtype";               // str "Float"
inline constexpr char kCommRankStat[] = "comm_rank";            // int64 (record_param_comms)
// double, GB/s (1e9 bytes), nccl-tests definitions, over the event's span.
inline constexpr char kAlgBandwidthStat[] = "algbw_gbps";
inline constexpr char kBusBandwidthStat[] = "busbw_gbps";
// Operator costs (xprof names): int64, absent when the op's cost is unknown.
inline constexpr char kModelFlopsStat[] = "model_flops";

// Device planes ("/device:<TYPE>:<N>", one line per stream/queue) and the
// host-side runtime plane ("/host:<runtime>", one line per thread) that holds
// the launch calls. A launch and the device events it caused share
// correlation_id.
inline constexpr char kDevicePlanePrefix[] = "/device:";
inline constexpr char kGpuPlanePrefix[] = "/device:GPU:";
// xprof's trace viewer shows only /device:GPU:*, /device:TPU:* and
// /device:CUSTOM:* planes: other plug-in types get "/device:CUSTOM:<TYPE>:<N>".
// It shows host planes by the prefix "/host:CPU" only, so device plug-ins'
// runtime calls go on "/host:CPU-<TYPE>-runtime" (e.g. "/host:CPU-GPU-runtime"
// for CUPTI), one line per calling thread; "/host:CUPTI" is not written.
inline constexpr char kCustomDevicePlanePrefix[] = "/device:CUSTOM:";
inline constexpr char kRuntimePlaneSuffix[] = "-runtime";
inline constexpr char kDeviceTypeStat[] = "device_type";  // str, plane stat
inline constexpr char kDeviceDetailsStat[] = "details";   // str, kind other
inline constexpr char kCuptiPlaneName[] = "/host:CUPTI";
inline constexpr char kDeviceIdStat[] = "device_id";            // int64
inline constexpr char kStreamIdStat[] = "stream_id";            // int64
inline constexpr char kKernelDetailsStat[] = "kernel_details";  // str
inline constexpr char kMemcpyDetailsStat[] = "memcpy_details";  // str
inline constexpr char kMemsetDetailsStat[] = "memset_details";  // str
inline constexpr char kBytesStat[] = "bytes";                   // int64 (memcpy/memset)
inline constexpr char kDeviceEventKindStat[] =
    "device_event_kind";  // str kernel|memcpy|memset|other
// Kernel occupancy, double percent (written by collectors/cupti, which
// spells them itself: it may not include xplane).
inline constexpr char kTheoreticalOccupancyStat[] = "theoretical_occupancy_pct";
inline constexpr char kEstAchievedOccupancyStat[] = "est_achieved_occupancy_pct";

// Device plane stats (device properties) the analysis reads for peaks.
// TSL's GPU names, written by collectors/cupti: clock_rate in kHz,
// core_count = SMs, memory_bandwidth in bytes/s.
inline constexpr char kClockRateStat[] = "clock_rate";
inline constexpr char kCoreCountStat[] = "core_count";
inline constexpr char kMemoryBandwidthStat[] = "memory_bandwidth";
// TSL's device-capability names, for plug-ins that know their peaks
// (numbers or decimal strings).
inline constexpr char kPeakTeraflopsStat[] = "peak_teraflops_per_second";
inline constexpr char kPeakHbmBandwidthStat[] = "peak_hbm_bw_gigabytes_per_second";

// Memory activity on host lines (TSL's names, read by xprof's
// memory_profile): one zero-duration event per allocation or free, on the
// thread that made it. Written by collectors/torch (libtorch's allocators)
// and collectors/device (device plug-ins); read by analysis and export.
inline constexpr char kMemoryAllocationEvent[] = "MemoryAllocation";
inline constexpr char kMemoryDeallocationEvent[] = "MemoryDeallocation";
// A device pool's bytes in use at one instant (device plug-ins that sample
// rather than report each allocation): bytes_allocated, bytes_reserved.
inline constexpr char kMemoryUsageEvent[] = "MemoryUsage";
inline constexpr char kAllocatorNameStat[] = "allocator_name";      // str "cpu", "cuda:0"
inline constexpr char kAddressStat[] = "addr";                      // int64 (xprof reads no uint64)
inline constexpr char kRequestedBytesStat[] = "requested_bytes";    // int64, > 0
inline constexpr char kAllocationBytesStat[] = "allocation_bytes";  // int64, > 0
inline constexpr char kBytesAllocatedStat[] = "bytes_allocated";    // int64 in use after
// The pool's size after the event (libtorch's "reserved": allocated plus
// cached), int64. Not TSL's bytes_reserved, which xprof adds to the bytes
// in use (stack memory on TPUs).
inline constexpr char kPoolReservedStat[] = "pool_reserved_bytes";
// Reserved but not allocated (xprof's free memory), int64, when known.
inline constexpr char kBytesAvailableStat[] = "bytes_available";
inline constexpr char kPeakBytesInUseStat[] = "peak_bytes_in_use";     // int64 so far
inline constexpr char kMemoryDeviceTypeStat[] = "memory_device_type";  // str "CPU", "CUDA"
// Ill-formed activity the allocator or plug-in reported ("free of unknown
// address", "out of memory", "free larger than the pool"): str.
inline constexpr char kMemoryAnomalyStat[] = "memory_anomaly";
// Compact keys: the libtorch memory reporter records these two-byte keys
// instead of the stat names above (an allocation event takes ~70 bytes
// less of the event buffer, which is most of its cost after the copy), and
// the host plane stores them under the stat names, resolved once per
// distinct key. Marker keys that start with byte 0x01 are reserved for this (lower
// case letters) and for the serving records' keys (upper case letters,
// internal::k*Key in neuronprof/internal/recorder.h).
struct CompactKey {
  std::string_view key, stat;
};
inline constexpr CompactKey kCompactKeys[] = {
    {"\x01"
     "a",
     kAddressStat},
    {"\x01"
     "r",
     kRequestedBytesStat},
    {"\x01"
     "t",
     kBytesAllocatedStat},
    {"\x01"
     "p",
     kPoolReservedStat},
    {"\x01"
     "n",
     kAllocatorNameStat},
    {"\x01"
     "o",
     kTfOpStat},
    {"\x01"
     "x",
     kMemoryAnomalyStat},
};
inline constexpr std::string_view kCompactAddressKey = kCompactKeys[0].key;
inline constexpr std::string_view kCompactRequestedBytesKey = kCompactKeys[1].key;
inline constexpr std::string_view kCompactBytesAllocatedKey = kCompactKeys[2].key;
inline constexpr std::string_view kCompactPoolReservedKey = kCompactKeys[3].key;
inline constexpr std::string_view kCompactAllocatorNameKey = kCompactKeys[4].key;
inline constexpr std::string_view kCompactTfOpKey = kCompactKeys[5].key;
inline constexpr std::string_view kCompactMemoryAnomalyKey = kCompactKeys[6].key;
// The stat name a recorded key stands for: itself unless a compact key.
inline std::string_view ExpandCompactKey(std::string_view key) {
  if (key.size() != 2 || key[0] != '\x01') return key;
  for (const CompactKey& compact : kCompactKeys) {
    if (compact.key == key) return compact.stat;
  }
  return key;
}

// Memory events are instants, never scopes that enclose other events.
inline bool IsMemoryEventName(std::string_view name) {
  return name == kMemoryAllocationEvent || name == kMemoryDeallocationEvent ||
         name == kMemoryUsageEvent;
}

// Stats of the "Task Environment" plane (uint64, ns since the epoch).
inline constexpr char kProfileStartTimeStat[] = "profile_start_time";
inline constexpr char kProfileStopTimeStat[] = "profile_stop_time";
// The job's rank identity on the Task Environment plane (xplane/job_identity):
// int64 rank, local_rank, world_size, master_port; str backend, master_addr.
// Names as torch.distributed's (and the Kineto trace's distributedInfo).
inline constexpr char kRankStat[] = "rank";
inline constexpr char kLocalRankStat[] = "local_rank";
inline constexpr char kWorldSizeStat[] = "world_size";
inline constexpr char kBackendStat[] = "backend";
inline constexpr char kMasterAddrStat[] = "master_addr";
inline constexpr char kMasterPortStat[] = "master_port";
// How the capture client put a remote host on its clock (rpc/clock_probe,
// xplane/clock_offset), on that host's Task Environment plane:
// clock_alignment (str) is "capture_client" when its times were shifted
// onto the capture client's clock, "unmeasured" when its server did not
// answer the clock probe (other ProfilerServices) and its times are its
// own clock's; then clock_offset_ns (int64, the host's clock minus the
// client's, subtracted from every time) and clock_offset_uncertainty_ns
// (int64, half the round trip of the sample it came from) when measured.
inline constexpr char kClockAlignmentStat[] = "clock_alignment";
inline constexpr char kClockOffsetStat[] = "clock_offset_ns";
inline constexpr char kClockOffsetUncertaintyStat[] = "clock_offset_uncertainty_ns";
inline constexpr char kClockAlignedToClient[] = "capture_client";
inline constexpr char kClockUnmeasured[] = "unmeasured";

// Plane-level stats written by neuronprof.
inline constexpr char kProcessIdStat[] = "pid";  // int64, on the host plane
inline constexpr char kDroppedEventsStat[] = "neuronprof_dropped_events";

}  // namespace xplane
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_XPLANE_SCHEMA_H_
