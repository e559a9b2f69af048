// Flight recorder soak: 8 threads record steps, nested scopes and copied
// names with arguments into a FlightRecorder for --seconds (default 20; the
// issue's soak is --seconds 600) while the main thread samples the
// process's RSS every second and dumps every --dump_every seconds. The ring
// is fixed memory, so RSS must level off once the ring has been filled:
// prints every sample, min/max RSS after the first quarter of the run, and
// "flat" when those differ by at most 4 MiB + 2 %, else "NOT FLAT" (exit 1).
// A dump's own memory (the XSpace it builds, the writer's buffers) is
// transient: samples taken less than 2 s after a dump returned are
// printed and their peak reported, but left out of the verdict.
//
//   flight_recorder_soak [--seconds N] [--threads N] [--ring_mb N]
//                        [--dump_every N] [--logdir DIR]
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "neuronprof/neuronprof.h"

namespace {

int64_t RssBytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * sysconf(_SC_PAGESIZE);
}

void Record(int thread, const std::atomic<bool>& stop, std::atomic<int64_t>* steps) {
  neuronprof::SetCurrentThreadName("soak_" + std::to_string(thread));
  char layer[32];
  for (int64_t n = 0; !stop.load(std::memory_order_relaxed); ++n) {
    neuronprof::StepTrace step("soak_step", n, {{"thread", thread}});
    for (int i = 0; i < 16; ++i) {
      NEURONPROF_SCOPE("op");
      std::snprintf(layer, sizeof(layer), "layer_%d", i);
      neuronprof::ScopedTrace copied(layer, {{"i", i}, {"dtype", "bf16"}});
    }
    steps->fetch_add(1, std::memory_order_relaxed);
  }
}

}  // namespace

int main(int argc, char** argv) {
  int seconds = 20, threads = 8, ring_mb = 64, dump_every = 5;
  std::string logdir = "/tmp/neuronprof_soak_logs";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--seconds") seconds = std::atoi(argv[i + 1]);
    else if (flag == "--threads") threads = std::atoi(argv[i + 1]);
    else if (flag == "--ring_mb") ring_mb = std::atoi(argv[i + 1]);
    else if (flag == "--dump_every") dump_every = std::atoi(argv[i + 1]);
    else if (flag == "--logdir") logdir = argv[i + 1];
    else {
      std::fprintf(stderr, "unknown flag %s\n", argv[i]);
      return 2;
    }
  }
  if (seconds < 4 || threads < 1 || ring_mb < 1 || dump_every < 1) {
    std::fprintf(stderr, "need --seconds >= 4, --threads, --ring_mb, --dump_every >= 1\n");
    return 2;
  }
  neuronprof::FlightRecorderOptions options;
  options.ring_bytes = int64_t{ring_mb} << 20;
  options.logdir = logdir;
  options.write_chrome_trace = false;
  options.write_pytorch_trace = false;
  neuronprof::FlightRecorder recorder(options);
  if (!recorder.status().ok()) {
    std::fprintf(stderr, "%s\n", recorder.status().ToString().c_str());
    return 1;
  }
  std::atomic<bool> stop{false};
  std::atomic<int64_t> steps{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) workers.emplace_back(Record, t, std::cref(stop), &steps);

  std::vector<int64_t> rss;
  int64_t after_dump_peak = 0;
  int dumps = 0, failed_dumps = 0;
  const auto start = std::chrono::steady_clock::now();
  auto last_dump_end = start - std::chrono::hours(1);  // No dump yet.
  for (int s = 1; s <= seconds; ++s) {
    std::this_thread::sleep_until(start + std::chrono::seconds(s));
    const int64_t now_rss = RssBytes();
    const bool after_dump =
        std::chrono::steady_clock::now() - last_dump_end < std::chrono::seconds(2);
    if (after_dump) {
      after_dump_peak = std::max(after_dump_peak, now_rss);
    } else if (s > seconds / 4) {
      rss.push_back(now_rss);
    }
    std::printf("t=%3ds rss=%7.1f MiB steps=%lld%s\n", s, now_rss / 1048576.0,
                static_cast<long long>(steps.load()), after_dump ? " (just after a dump)" : "");
    std::fflush(stdout);
    if (s % dump_every == 0) {
      auto dump = recorder.Dump("soak", /*last_ms=*/1000);
      dump.ok() ? ++dumps : ++failed_dumps;
      last_dump_end = std::chrono::steady_clock::now();
    }
  }
  stop.store(true);
  for (std::thread& worker : workers) worker.join();

  if (rss.empty()) {
    std::fprintf(stderr, "no sample outside the first quarter and the dumps\n");
    return 1;
  }
  // The ring fills during the first quarter: only later samples count.
  const auto [lo, hi] = std::minmax_element(rss.begin(), rss.end());
  const bool flat = *hi - *lo <= (int64_t{4} << 20) + *lo / 50;
  std::printf("threads=%d ring=%d MiB seconds=%d steps=%lld dumps=%d failed_dumps=%d\n",
              threads, ring_mb, seconds, static_cast<long long>(steps.load()), dumps,
              failed_dumps);
  std::printf("rss after t=%ds (%zu samples): min %.1f MiB, max %.1f MiB, growth %.1f MiB: %s\n",
              seconds / 4, rss.size(), *lo / 1048576.0, *hi / 1048576.0,
              (*hi - *lo) / 1048576.0, flat ? "flat" : "NOT FLAT");
  std::printf("peak right after a dump: %.1f MiB (transient)\n", after_dump_peak / 1048576.0);
  return flat ? 0 : 1;
}
