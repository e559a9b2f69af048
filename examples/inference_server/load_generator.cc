#include "load_generator.h"

#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <random>
#include <thread>

namespace inference_server {

bool ReadFull(int fd, void* data, size_t size) {
  auto* bytes = static_cast<char*>(data);
  while (size > 0) {
    const ssize_t n = read(fd, bytes, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool WriteFull(int fd, const void* data, size_t size) {
  const auto* bytes = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = write(fd, bytes, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

int64_t SteadyNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

LoadResult GenerateLoad(int fd, int64_t requests, double rate, uint32_t seed, int concurrency) {
  // Send times by id, written by the sender before the request leaves and
  // read by the receiver after its answer arrives.
  auto sent = std::make_unique<std::atomic<int64_t>[]>(static_cast<size_t>(requests));
  const int64_t begin_ns = SteadyNowNs();
  const auto begin = std::chrono::steady_clock::time_point(std::chrono::nanoseconds(begin_ns));
  // Closed loop: answers received so far, which let the sender go on.
  std::mutex mutex;
  std::condition_variable answered;
  int64_t received = 0;
  std::thread sender([&] {
    std::mt19937 random(seed);
    std::exponential_distribution<double> gap(rate);  // Poisson arrivals
    double arrival_s = 0;
    for (int64_t id = 0; id < requests; ++id) {
      if (concurrency > 0) {
        std::unique_lock<std::mutex> lock(mutex);
        answered.wait(lock, [&] { return id - received < concurrency; });
      } else {
        arrival_s += gap(random);
        std::this_thread::sleep_until(begin + std::chrono::duration<double>(arrival_s));
      }
      sent[id].store(SteadyNowNs());
      const RequestMessage message{id};
      if (!WriteFull(fd, &message, sizeof(message))) break;
    }
    shutdown(fd, SHUT_WR);
  });
  LoadResult result;
  result.latency_ms.assign(static_cast<size_t>(requests), 0);
  result.answered_ns.assign(static_cast<size_t>(requests), 0);
  ResponseMessage answer;
  while (result.answered < requests && ReadFull(fd, &answer, sizeof(answer))) {
    if (answer.id < 0 || answer.id >= requests) continue;
    const int64_t now_ns = SteadyNowNs();
    result.answered_ns[answer.id] = now_ns;
    result.latency_ms[answer.id] = (now_ns - sent[answer.id].load()) / 1e6;
    ++result.answered;
    if (concurrency > 0) {
      {
        std::lock_guard<std::mutex> lock(mutex);
        received = result.answered;
      }
      answered.notify_one();
    }
  }
  result.seconds = (SteadyNowNs() - begin_ns) / 1e9;
  {
    std::lock_guard<std::mutex> lock(mutex);
    received = requests;  // The server hung up: a waiting sender stops waiting.
  }
  answered.notify_one();
  sender.join();
  result.sent_ns.resize(static_cast<size_t>(requests));
  for (int64_t id = 0; id < requests; ++id) result.sent_ns[id] = sent[id].load();
  return result;
}

}  // namespace inference_server
