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
struct CollectorOptions {
  int host_tracer_level = 2;    // 0 = off, 1..3 as in ProfileOptions.
  int device_tracer_level = 1;  // 0 = off.
  // Record framework operators when an operator collector is enabled
  // (neuronprof::torch); with require_operators, a capture without one is
  // refused (profile_type kOperator asks for them explicitly).
  bool operators = false;
  bool require_operators = false;
  // The job's world size (rank identity), for collectives' bus bandwidth.
  int world_size = 1;
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
  // Sentences for the reader of the capture (events lost, limits hit). The
  // session moves them into XSpace::warnings after each Collect, so a
  // collector can report without touching the XSpace (or linking protobuf).
  std::vector<std::string> warnings;
};

// One collector instance serves exactly one capture window. The contract
// between a collector and the session (src/session/capture_session.cc):
//
// Call order. The session creates the instances through the registered
// factories, then calls Start on each in registration order (the host
// collector first), later Stop on each, then Collect on each whose Stop
// succeeded: every method at most once per instance, always in that order
// (all Stops before the first Collect), and the instance is
// destroyed after Collect (or earlier on failure). A collector whose Start
// succeeded is always stopped. If collector k's Start fails, collectors
// k-1..0 are stopped (in reverse order), none is collected, and the capture
// fails with an error naming collector k. The destructor may therefore run
// without Stop (the failed collector itself, or ones never started) and
// must release whatever a partial Start acquired.
//
// Threading. Start, Stop, Collect and the destructor of one instance run on
// one thread at a time (the thread that starts or stops the capture, which
// may differ between Start and Stop), never concurrently with each other.
// At most one capture window is open per process, so at most one set of
// instances is started at any time. Callbacks the collector installs (op
// hooks, device buffers) run on any thread and are the collector's own
// business between Start and Stop.
//
// What Collect may touch. Collect adds this collector's own planes to
// `space` and nothing else: it must not read or rewrite the planes of other
// collectors (post-processing across planes, such as operator annotation,
// is a session step). Counts and warnings go into `stats`; a collector may
// also ignore `space` altogether.
//
// Errors. A failed Start refuses the capture. A failed Stop or Collect loses
// only this collector's data: the session records "<name> collector ..."
// with the status in XSpace::errors, keeps every other plane, and the
// capture still succeeds. A collector with nothing to record for the
// capture's options is not an error: its factory returns nullptr.
class NEURONPROF_API Collector {
 public:
  virtual ~Collector() = default;
  // Short name for messages ("host", "cupti").
  virtual std::string name() const = 0;
  // True for collectors of framework operators (profile_type kOperator).
  // When any collector of a capture says so, the session annotates the
  // operator events of the host plane after every collector has collected.
  virtual bool records_operators() const { return false; }
  virtual absl::Status Start() = 0;
  virtual absl::Status Stop() = 0;
  // Adds this collector's planes to `space` and its counts and warnings to
  // `stats` (which accumulates over every collector of the capture).
  virtual absl::Status Collect(tensorflow::profiler::XSpace* space, CollectStats* stats) = 0;
};

// Called once per capture, under the registry's lock (a factory must not
// register or unregister factories). Returns nullptr when the collector has
// nothing to do for these options.
using CollectorFactory = std::function<std::unique_ptr<Collector>(const CollectorOptions&)>;

// Adds a factory used by every later capture, for the process's life.
// Thread-safe. Exported from libneuronprof for neuronprof::torch (not
// public API).
NEURONPROF_API void RegisterCollectorFactory(CollectorFactory factory);

// Registers a factory for as long as this object lives (tests, plug-ins that
// can be unloaded). Thread-safe; captures already started keep their
// instances, later captures no longer create one.
class ScopedCollectorFactory {
 public:
  explicit ScopedCollectorFactory(CollectorFactory factory);
  ~ScopedCollectorFactory();
  ScopedCollectorFactory(const ScopedCollectorFactory&) = delete;
  ScopedCollectorFactory& operator=(const ScopedCollectorFactory&) = delete;

 private:
  uint64_t id_;
};

// Instantiates every registered collector for one capture, in registration
// order.
std::vector<std::unique_ptr<Collector>> CreateCollectors(const CollectorOptions& options);

}  // namespace collectors
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_COLLECTORS_COLLECTOR_H_
