// An inference server profiled as it serves: an acceptor thread reads
// requests off a connection, a dynamic batching queue (maximum batch size
// and timeout) hands batches to a pool of workers, each running an MLP
// (plain C++, optionally "on" a fake accelerator reporting through the
// device plug-in API) and answering every request of its batch. A load
// generator sends a fixed number of requests with Poisson arrivals at a
// chosen rate (or keeps C requests in flight: a closed loop, the server
// at saturation) and measures each one's latency.
//
//   inference_server [--logdir DIR] [--requests N] [--rate R | --concurrency C]
//                    [--workers W]
//                    [--max_batch B] [--batch_timeout_us T] [--accelerator]
//                    [--recorder profiler|flight|none] [--alternate_ms W] [--seed S]
//
// Prints throughput and p50 / p99 / max latency, then the capture's run
// folder ("capture: DIR"): a Profiler (or a FlightRecorder, dumped at the
// end) records the whole run. In it: "accept" markers (with the request
// id) on the acceptor thread, a StepTrace "batch" per batch on the worker
// threads with "assemble" (consuming every request of the batch: the
// arrows from their accepts), "forward" (fc1..fc3) and a "respond" marker
// per request, and the workers' "wait_for_batch". With --accelerator and the
// Profiler (a flight recorder keeps host events only), the NPU's kernels
// and copies, attributed by `neuronprof summary` to the layer markers that
// launched them, with their FLOPs in the MFU (a flight recorder's dump has
// no device planes: docs/ARCHITECTURE.md, "Flight recorder: ring mode").
//
// --recorder flight --alternate_ms W (closed loop only) measures what the
// flight recorder costs instead: it is started and destroyed every W ms
// while the server serves, and the recording windows are compared with
// the windows around them (recorder_cost.h). Nothing is written.
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "batching_queue.h"
#include "fake_accelerator.h"
#include "instrumentation.h"
#include "load_generator.h"
#include "mlp_model.h"
#include "neuronprof/neuronprof.h"
#include "recorder_cost.h"

namespace inference_server {
namespace {

struct Flags {
  std::string logdir = "logs";
  int64_t requests = 400;
  double rate = 2000;   // requests per second
  int concurrency = 0;  // > 0: a closed loop, that many requests in flight
  int workers = 2;
  int max_batch = 8;
  int batch_timeout_us = 2000;
  bool accelerator = false;
  double accelerator_peak_gflops = 50;
  std::string recorder = "profiler";
  int alternate_ms = 0;  // > 0: the flight recorder on and off in turn
  uint32_t seed = 1;
};

int Usage(const char* error) {
  std::fprintf(stderr,
               "inference_server: %s\nusage: inference_server [--logdir DIR] [--requests N] "
               "[--rate R | --concurrency C] [--workers W] [--max_batch B] [--batch_timeout_us T] "
               "[--accelerator] [--accelerator_peak_gflops G] "
               "[--recorder profiler|flight|none] [--alternate_ms W] [--seed S]\n",
               error);
  return 2;
}

std::optional<Flags> ParseFlags(int argc, char** argv) {
  Flags flags;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--accelerator") {
      flags.accelerator = true;
      continue;
    }
    if (i + 1 >= argc) return std::nullopt;
    const char* value = argv[++i];
    if (flag == "--logdir")
      flags.logdir = value;
    else if (flag == "--requests")
      flags.requests = std::atoll(value);
    else if (flag == "--rate")
      flags.rate = std::atof(value);
    else if (flag == "--concurrency")
      flags.concurrency = std::atoi(value);
    else if (flag == "--workers")
      flags.workers = std::atoi(value);
    else if (flag == "--max_batch")
      flags.max_batch = std::atoi(value);
    else if (flag == "--batch_timeout_us")
      flags.batch_timeout_us = std::atoi(value);
    else if (flag == "--accelerator_peak_gflops")
      flags.accelerator_peak_gflops = std::atof(value);
    else if (flag == "--recorder")
      flags.recorder = value;
    else if (flag == "--alternate_ms")
      flags.alternate_ms = std::atoi(value);
    else if (flag == "--seed")
      flags.seed = static_cast<uint32_t>(std::atoll(value));
    else
      return std::nullopt;
  }
  const bool recorder_ok =
      flags.recorder == "profiler" || flags.recorder == "flight" || flags.recorder == "none";
  if (flags.requests <= 0 || !(flags.rate > 0) || flags.concurrency < 0 || flags.workers <= 0 ||
      flags.max_batch <= 0 || flags.batch_timeout_us < 0 || !(flags.accelerator_peak_gflops > 0) ||
      !recorder_ok) {
    return std::nullopt;
  }
  // Windows compare throughput, which only a closed loop makes the server's.
  if (flags.alternate_ms < 0 ||
      (flags.alternate_ms > 0 && (flags.recorder != "flight" || flags.concurrency == 0))) {
    return std::nullopt;
  }
  return flags;
}

// A request's input, made from its id (what parsing a real payload gives).
std::vector<float> InputFor(int64_t id) {
  std::vector<float> input(MlpModel::kInputs);
  for (size_t i = 0; i < input.size(); ++i) {
    input[i] = std::sin(static_cast<float>(id * 31 + static_cast<int64_t>(i)) * 0.01f);
  }
  return input;
}

class Server {
 public:
  Server(const Flags& flags, int fd, FakeAccelerator* accelerator)
      : fd_(fd),
        accelerator_(accelerator),
        model_(flags.seed),
        queue_(static_cast<size_t>(flags.max_batch),
               std::chrono::microseconds(flags.batch_timeout_us)) {
    // Named threads: the trace's lines and the summary's thread groups.
    threads_.emplace_back([this] {
      pthread_setname_np(pthread_self(), "acceptor");
      Accept();
    });
    for (int w = 0; w < flags.workers; ++w) {
      threads_.emplace_back([this, w] {
        pthread_setname_np(pthread_self(), ("worker-" + std::to_string(w)).c_str());
        Work();
      });
    }
  }
  // Returns once the connection is closed and every request answered.
  void Join() {
    for (std::thread& thread : threads_) thread.join();
  }
  int64_t batches() const { return batches_.load(); }

 private:
  // The acceptor: one request at a time off the connection into the queue.
  void Accept() {
    RequestMessage message;
    while (ReadFull(fd_, &message, sizeof(message))) {
      Request request;
      request.id = message.id;
      Accepted accepted(request.id, request.trace);
      request.input = InputFor(request.id);
      queue_.Push(std::move(request));
    }
    queue_.Close();
  }

  // A worker: batch after batch until the queue is closed and drained.
  void Work() {
    for (;;) {
      std::vector<Request> batch = queue_.PopBatch();
      if (batch.empty()) return;
      const int64_t number = batches_.fetch_add(1);
      neuronprof::StepTrace step("batch", number);
      std::vector<float> input;
      {
        std::vector<uint64_t> ids;
        ids.reserve(batch.size());
        for (const Request& request : batch) ids.push_back(request.trace.context_id);
        Assembling assembling(std::move(ids));
        input.reserve(batch.size() * MlpModel::kInputs);
        for (const Request& request : batch) {
          input.insert(input.end(), request.input.begin(), request.input.end());
        }
      }
      const std::vector<float> output =
          model_.Forward(std::move(input), static_cast<int>(batch.size()), accelerator_);
      for (size_t r = 0; r < batch.size(); ++r) {
        Responded responded(batch[r].id, batch[r].trace);
        const ResponseMessage answer{batch[r].id, output[r * MlpModel::kOutputs]};
        std::lock_guard<std::mutex> lock(write_mutex_);
        WriteFull(fd_, &answer, sizeof(answer));
      }
    }
  }

  const int fd_;
  FakeAccelerator* const accelerator_;
  const MlpModel model_;
  BatchingQueue queue_;
  std::mutex write_mutex_;
  std::atomic<int64_t> batches_{0};
  std::vector<std::thread> threads_;
};

// Whichever recorder --recorder asks for, started before the server
// (none with --alternate_ms, which starts its own).
class Recording {
 public:
  explicit Recording(const Flags& flags) {
    if (flags.alternate_ms > 0) return;
    if (flags.recorder == "profiler") {
      neuronprof::ProfilerOptions options;
      options.logdir = flags.logdir;
      options.ms_duration = 3600 * 1000;
      profiler_ = std::make_unique<neuronprof::Profiler>(options);
    } else if (flags.recorder == "flight") {
      neuronprof::FlightRecorderOptions options;
      options.logdir = flags.logdir;
      flight_ = std::make_unique<neuronprof::FlightRecorder>(options);
    }
  }
  // Writes the capture; its run folder, or "" with --recorder none.
  absl::StatusOr<std::string> Finish() {
    absl::StatusOr<neuronprof::ProfileResult> result = neuronprof::ProfileResult();
    if (profiler_) result = profiler_->Stop();
    if (flight_) result = flight_->Dump("end_of_load");
    if (!result.ok()) return result.status();
    return profiler_ || flight_ ? result->run_dir : std::string();
  }

 private:
  std::unique_ptr<neuronprof::Profiler> profiler_;
  std::unique_ptr<neuronprof::FlightRecorder> flight_;
};

int Main(const Flags& flags) {
  std::unique_ptr<FakeAccelerator> accelerator;
  if (flags.accelerator) {
    accelerator = std::make_unique<FakeAccelerator>(flags.accelerator_peak_gflops);
    if (absl::Status s = accelerator->Register(); !s.ok()) {
      std::fprintf(stderr, "inference_server: %s\n", std::string(s.message()).c_str());
      return 1;
    }
  }
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) {
    std::perror("inference_server: socketpair");
    return 1;
  }
  Recording recording(flags);
  Server server(flags, fds[1], accelerator.get());
  std::optional<AlternatingRecorder> alternating;
  if (flags.alternate_ms > 0) {
    neuronprof::FlightRecorderOptions options;
    options.logdir = flags.logdir;
    alternating.emplace(options, std::chrono::milliseconds(flags.alternate_ms));
  }
  // The serving's CPU time: not the recorder's start (its ring committed)
  // before it, nor the capture written after it.
  const double cpu_before_s = ProcessCpuSeconds();
  const LoadResult load =
      GenerateLoad(fds[0], flags.requests, flags.rate, flags.seed, flags.concurrency);
  server.Join();
  const double load_cpu_s = ProcessCpuSeconds() - cpu_before_s;
  absl::StatusOr<Alternation> alternation;
  if (alternating) alternation = alternating->Stop();
  close(fds[0]);
  close(fds[1]);
  const absl::StatusOr<std::string> run = recording.Finish();

  std::vector<double> sorted = load.latency_ms;
  std::sort(sorted.begin(), sorted.end());
  const std::string load_kind =
      flags.concurrency > 0 ? "closed loop, " + std::to_string(flags.concurrency) + " in flight"
                            : "at " + std::to_string(std::lround(flags.rate)) + "/s";
  std::printf("inference_server: %lld requests %s, %d workers, max batch %d, timeout %d us%s\n",
              static_cast<long long>(flags.requests), load_kind.c_str(), flags.workers,
              flags.max_batch, flags.batch_timeout_us,
              flags.accelerator ? ", on the fake NPU" : "");
  std::printf("served %lld requests in %.3f s: %.0f requests/s, %lld batches (mean %.1f)\n",
              static_cast<long long>(load.answered), load.seconds,
              load.seconds > 0 ? load.answered / load.seconds : 0.0,
              static_cast<long long>(server.batches()),
              server.batches() > 0 ? static_cast<double>(load.answered) / server.batches() : 0.0);
  std::printf("latency: p50 %.3f ms, p99 %.3f ms, max %.3f ms\n", Quantile(sorted, 0.5),
              Quantile(sorted, 0.99), sorted.empty() ? 0.0 : sorted.back());
  std::printf("process CPU while serving: %.3f s (%.1f us per request)\n", load_cpu_s,
              load_cpu_s * 1e6 / static_cast<double>(flags.requests));
  if (alternating) {
    if (!alternation.ok()) {
      std::fprintf(stderr, "inference_server: flight recorder: %s\n",
                   std::string(alternation.status().message()).c_str());
      return 1;
    }
    PrintRecorderCost(*alternation, load);
  }
  if (!run.ok()) {
    std::fprintf(stderr, "inference_server: capture failed: %s\n",
                 std::string(run.status().message()).c_str());
    return 1;
  }
  if (!run->empty()) std::printf("capture: %s\n", run->c_str());
  return load.answered == flags.requests ? 0 : 1;
}

}  // namespace
}  // namespace inference_server

int main(int argc, char** argv) {
  const std::optional<inference_server::Flags> flags = inference_server::ParseFlags(argc, argv);
  if (!flags) return inference_server::Usage("bad or missing flag value");
  return inference_server::Main(*flags);
}
