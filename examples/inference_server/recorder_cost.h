// What an always-on flight recorder costs the server as it serves
// (--recorder flight --alternate_ms W): a thread starts a FlightRecorder,
// keeps it W ms, destroys it, lets the server run W ms without one, and so
// on until the load ends. Each recording window is compared with the mean
// of the two windows around it, so whatever else moves the server's speed
// (other guests on the host, the clock, the batching's phase) moves both
// sides alike; whole runs in turn cannot cancel that: on a shared 2-vCPU
// VM their throughput moves by up to ±10 % from one run to the next.
#ifndef NEURONPROF_EXAMPLES_INFERENCE_SERVER_RECORDER_COST_H_
#define NEURONPROF_EXAMPLES_INFERENCE_SERVER_RECORDER_COST_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "load_generator.h"
#include "neuronprof/neuronprof.h"

namespace inference_server {

// User + system CPU time of the whole process so far.
double ProcessCpuSeconds();

// The q-quantile of sorted values, nearest rank; 0 for none.
double Quantile(const std::vector<double>& sorted, double q);

// One window of the run, with or without a recorder.
struct Window {
  bool recording = false;
  int64_t begin_ns = 0;  // SteadyNowNs
  int64_t end_ns = 0;
  double cpu_s = 0;  // the process's CPU time within the window
};

// What AlternatingRecorder measured.
struct Alternation {
  std::vector<Window> windows;          // whole windows, in order
  std::chrono::milliseconds window{0};  // as asked
  double max_start_ms = 0;              // the slowest start of a recorder (its ring committed)
};

class AlternatingRecorder {
 public:
  // Starts the first recording window at once.
  AlternatingRecorder(neuronprof::FlightRecorderOptions options, std::chrono::milliseconds window);
  ~AlternatingRecorder();  // Stop() if not called
  AlternatingRecorder(const AlternatingRecorder&) = delete;
  AlternatingRecorder& operator=(const AlternatingRecorder&) = delete;

  // Ends the run: the window under way is dropped (cut short), the
  // recorder destroyed. The whole windows, or why a recorder could not
  // start.
  absl::StatusOr<Alternation> Stop();

 private:
  void Run();
  // Waits out one window; false if Stop() came first.
  bool Measure(bool recording);

  const neuronprof::FlightRecorderOptions options_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  Alternation result_;  // written by thread_ alone until it is joined
  absl::Status status_;
  std::thread thread_;
};

// Prints each figure's median ratio, recording windows to the windows
// around them, with its 95 % confidence interval: throughput, p99 of the
// requests sent and answered in one window, and CPU per request.
void PrintRecorderCost(const Alternation& alternation, const LoadResult& load);

}  // namespace inference_server

#endif  // NEURONPROF_EXAMPLES_INFERENCE_SERVER_RECORDER_COST_H_
