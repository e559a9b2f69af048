// The client side: sends `requests` requests with Poisson arrivals (a
// fixed seed, so the schedule repeats) at `rate` per second, or in a
// closed loop, over a connection, reads the answers and measures each request's latency from
// its send to its answer.
#ifndef NEURONPROF_EXAMPLES_INFERENCE_SERVER_LOAD_GENERATOR_H_
#define NEURONPROF_EXAMPLES_INFERENCE_SERVER_LOAD_GENERATOR_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace inference_server {

// What travels over the connection.
struct RequestMessage {
  int64_t id;
};
struct ResponseMessage {
  int64_t id;
  float score;
};

// Reads or writes exactly `size` bytes; false on EOF or error.
bool ReadFull(int fd, void* data, size_t size);
bool WriteFull(int fd, const void* data, size_t size);

// Nanoseconds of std::chrono::steady_clock: the times LoadResult holds.
int64_t SteadyNowNs();

struct LoadResult {
  double seconds = 0;              // first send to last answer
  std::vector<double> latency_ms;  // per request, by id
  // Per request, by id: when it was sent and answered (SteadyNowNs; 0 if
  // it never was), which place each answer in a window of the run.
  std::vector<int64_t> sent_ns;
  std::vector<int64_t> answered_ns;
  int64_t answered = 0;
};

// Runs the client on `fd` (its end of the connection) and returns once
// every request is answered or the server hung up. Closes its writing
// side after the last request, which tells the server no more will come.
// `concurrency` > 0: a closed loop instead, `concurrency` requests in
// flight at all times (a new one as each answer arrives), `rate` unused:
// the server runs at saturation and its latency is its queue's.
LoadResult GenerateLoad(int fd, int64_t requests, double rate, uint32_t seed, int concurrency = 0);

}  // namespace inference_server

#endif  // NEURONPROF_EXAMPLES_INFERENCE_SERVER_LOAD_GENERATOR_H_
