// The one interface every collector implements (host markers, libtorch
// operators, CUPTI, device plug-ins). A session owns one instance of each
// registered collector per capture window.
#ifndef NEURONPROF_SRC_COLLECTORS_COLLECTOR_H_
#define NEURONPROF_SRC_COLLECTORS_COLLECTOR_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "neuronprof/export.h"
#include "proto/xplane.pb.h"

namespace neuronprof {
namespace collectors {

// What the owner of a local Profiler changes when its event buffer fills.
inline constexpr char kLocalBufferAdvice[] =
    "raise ProfilerOptions::max_buffer_bytes or shorten ms_duration";

// What a capture asks of the collectors.
struct CaptureOptions {
  int host_tracer_level = 2;    // 0 = off, 1..3 as in ProfileOptions.
  int device_tracer_level = 1;  // 0 = off.
  // Record framework operators when an operator collector is enabled
  // (neuronprof::torch); with require_operators, a capture without one is
  // refused (profile_type kOperator asks for them explicitly).
  bool operators = false;
  bool require_operators = false;
  uint64_t max_buffer_bytes = uint64_t{256} << 20;
  // Ends the warning when events were dropped: the settings that whoever
  // reads it (a local user, a remote capture client) can change.
  std::string buffer_advice = kLocalBufferAdvice;
};

// What a collector reports beyond its planes.
struct CollectStats {
  int64_t events = 0;
  int64_t threads = 0;
  int64_t dropped = 0;
  // Warnings for the capture's reader; the session adds them to the XSpace,
  // so a collector that owns no plane never touches it.
  std::vector<std::string> warnings;
};

class NEURONPROF_API Collector {
 public:
  virtual ~Collector() = default;
  // Short name for messages ("host", "cupti").
  virtual std::string name() const = 0;
  // True for collectors of framework operators (profile_type kOperator).
  virtual bool records_operators() const { return false; }
  virtual absl::Status Start() = 0;
  virtual absl::Status Stop() = 0;
  // Adds this collector's planes (and warnings) to `space`.
  virtual absl::Status Collect(tensorflow::profiler::XSpace* space,
                               CollectStats* stats) = 0;
};

// Returns nullptr when the collector has nothing to do for these options.
using CollectorFactory =
    std::function<std::unique_ptr<Collector>(const CaptureOptions&)>;

// Adds a factory used by every later capture. Thread-safe. Exported from
// libneuronprof for neuronprof::torch (not public API).
NEURONPROF_API void RegisterCollectorFactory(CollectorFactory factory);
// Instantiates every registered collector for one capture.
std::vector<std::unique_ptr<Collector>> CreateCollectors(
    const CaptureOptions& options);

}  // namespace collectors
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_COLLECTORS_COLLECTOR_H_
