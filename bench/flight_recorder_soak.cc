// Flight recorder soak: 8 threads record steps, nested scopes and copied
// names with arguments into a FlightRecorder for --seconds (default 20; the
// issue's soak is --seconds 600) while the main thread samples the
// process's RSS every second; another thread dumps the last second every
// --dump_every seconds after the previous dump returned. The ring is fixed
// memory, so RSS must level off once the ring has been filled: prints every
// sample, min/max RSS after the first quarter of the run, and "flat" when
// those differ by at most 4 MiB + 2 %, else "NOT FLAT" (exit 1). A dump's
// own memory (the copy, the XSpace, the writer's buffers) is transient:
// samples taken while a dump runs are printed and their peak reported but
// left out of the verdict; samples after it count (the recorder gives a
// dump's heap back, so RSS must come back down). Each dump's transient
// memory is measured exactly (the peak RSS during the dump, VmHWM reset
// just before it, minus the RSS before it) and compared with the ring's
// size; --last_ms 0 dumps the whole ring (default: the last second). Each
// dump prints a line (its time, events, drops, RSS before, transient, RSS
// after); the run also fails ("NOT BACK") when RSS after some dump is more
// than 4 MiB + 2 % above the RSS before the first one.
//
//   flight_recorder_soak [--seconds N] [--threads N] [--ring_mb N]
//                        [--dump_every N] [--last_ms N] [--logdir DIR]
//                        [--all_files 1]   (also the Chrome and Kineto traces)
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

#include "bench/process_memory.h"
#include "neuronprof/neuronprof.h"

namespace {

using neuronprof::bench::ResetPeakRss;

// VmHWM (peak RSS since the last reset), in bytes.
int64_t PeakRssBytes() {
  return static_cast<int64_t>(neuronprof::bench::ProcStatusMb("VmHWM:") * 1024.0 * 1024.0);
}

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
  int seconds = 20, threads = 8, ring_mb = 64, dump_every = 5, last_ms = 1000;
  bool all_files = false;  // The xplane.pb only, unless --all_files 1.
  std::string logdir = "/tmp/neuronprof_soak_logs";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--seconds")
      seconds = std::atoi(argv[i + 1]);
    else if (flag == "--threads")
      threads = std::atoi(argv[i + 1]);
    else if (flag == "--ring_mb")
      ring_mb = std::atoi(argv[i + 1]);
    else if (flag == "--dump_every")
      dump_every = std::atoi(argv[i + 1]);
    else if (flag == "--last_ms")
      last_ms = std::atoi(argv[i + 1]);
    else if (flag == "--logdir")
      logdir = argv[i + 1];
    else if (flag == "--all_files")
      all_files = std::atoi(argv[i + 1]) != 0;
    else {
      std::fprintf(stderr, "unknown flag %s\n", argv[i]);
      return 2;
    }
  }
  if (seconds < 4 || threads < 1 || ring_mb < 1 || dump_every < 1 || last_ms < 0) {
    std::fprintf(stderr, "need --seconds >= 4, --threads, --ring_mb, --dump_every >= 1\n");
    return 2;
  }
  neuronprof::FlightRecorderOptions options;
  options.ring_bytes = int64_t{ring_mb} << 20;
  options.logdir = logdir;
  options.write_chrome_trace = all_files;
  options.write_pytorch_trace = all_files;
  neuronprof::FlightRecorder recorder(options);
  if (!recorder.status().ok()) {
    std::fprintf(stderr, "%s\n", recorder.status().ToString().c_str());
    return 1;
  }
  std::atomic<bool> stop{false};
  std::atomic<int64_t> steps{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) workers.emplace_back(Record, t, std::cref(stop), &steps);

  // Dumps run on a thread of their own, every dump_every seconds after the
  // previous one returned, so sampling never waits for them.
  std::atomic<bool> dumping{false};
  std::atomic<int> dumps{0}, failed_dumps{0};
  // Read after dumper.join(): the RSS before the first dump (the ring is
  // full by then), and the largest transient and after-dump RSS.
  int64_t max_transient = 0, recording_rss = 0, max_after = 0, last_dropped = 0;
  std::thread dumper([&] {
    while (!stop.load()) {
      const auto next = std::chrono::steady_clock::now() + std::chrono::seconds(dump_every);
      while (!stop.load() && std::chrono::steady_clock::now() < next) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      if (stop.load()) break;
      dumping.store(true);
      const int64_t before = RssBytes();
      if (recording_rss == 0) recording_rss = before;
      ResetPeakRss();
      const auto dump_start = std::chrono::steady_clock::now();
      auto dump = recorder.Dump("soak", last_ms);
      const double dump_ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - dump_start)
              .count();
      const int64_t transient = PeakRssBytes() - before;
      const int64_t after = RssBytes();
      max_transient = std::max(max_transient, transient);
      max_after = std::max(max_after, after);
      dump.ok() ? ++dumps : ++failed_dumps;
      // dropped_events counts since each thread began: this dump's share
      // is the growth since the previous one.
      const int64_t dropped = dump.ok() ? dump->dropped_events : last_dropped;
      std::printf(
          "dump %d: %.0f ms, %lld events, %lld more dropped; rss before %.1f MiB, "
          "transient +%.1f MiB, after %.1f MiB (%+.1f MiB vs recording)\n",
          dumps.load() + failed_dumps.load(), dump_ms,
          dump.ok() ? static_cast<long long>(dump->events) : 0LL,
          static_cast<long long>(dropped - last_dropped), before / 1048576.0, transient / 1048576.0,
          after / 1048576.0, (after - recording_rss) / 1048576.0);
      std::fflush(stdout);
      last_dropped = dropped;
      dumping.store(false);
    }
  });

  std::vector<int64_t> rss;
  int64_t during_dump_peak = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int s = 1; s <= seconds; ++s) {
    std::this_thread::sleep_until(start + std::chrono::seconds(s));
    const bool in_dump = dumping.load();
    const int64_t now_rss = RssBytes();
    if (in_dump) {
      during_dump_peak = std::max(during_dump_peak, now_rss);
    } else if (s > seconds / 4) {
      rss.push_back(now_rss);
    }
    std::printf("t=%3ds rss=%7.1f MiB steps=%lld dumps=%d%s\n", s, now_rss / 1048576.0,
                static_cast<long long>(steps.load()), dumps.load(),
                in_dump ? " (a dump is running)" : "");
    std::fflush(stdout);
  }
  stop.store(true);
  dumper.join();
  for (std::thread& worker : workers) worker.join();

  if (rss.empty()) {
    std::fprintf(stderr, "no sample outside the first quarter and the running dumps\n");
    return 1;
  }
  // The ring fills during the first quarter: only later samples count.
  const auto [lo, hi] = std::minmax_element(rss.begin(), rss.end());
  const bool flat = *hi - *lo <= (int64_t{4} << 20) + *lo / 50;
  std::printf("threads=%d ring=%d MiB seconds=%d steps=%lld dumps=%d failed_dumps=%d\n", threads,
              ring_mb, seconds, static_cast<long long>(steps.load()), dumps.load(),
              failed_dumps.load());
  std::printf("rss after t=%ds (%zu samples): min %.1f MiB, max %.1f MiB, growth %.1f MiB: %s\n",
              seconds / 4, rss.size(), *lo / 1048576.0, *hi / 1048576.0, (*hi - *lo) / 1048576.0,
              flat ? "flat" : "NOT FLAT");
  std::printf(
      "largest dump transient (peak during a dump - RSS before it): %.1f MiB, "
      "%s the ring's %d MiB\n",
      max_transient / 1048576.0, max_transient <= (int64_t{ring_mb} << 20) ? "within" : "OVER",
      ring_mb);
  std::printf("peak while a dump ran: %.1f MiB (transient)\n", during_dump_peak / 1048576.0);
  // The criterion: after every dump RSS is back at the recording
  // level, within 4 MiB + 2 %.
  const bool back = max_after - recording_rss <= (int64_t{4} << 20) + recording_rss / 50;
  std::printf("rss after each dump vs recording (%.1f MiB): at most %+.1f MiB: %s\n",
              recording_rss / 1048576.0, (max_after - recording_rss) / 1048576.0,
              back ? "back to recording level" : "NOT BACK");
  return flat && back ? 0 : 1;
}
