#include "recorder_cost.h"

#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>

namespace inference_server {

double ProcessCpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

double Quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const auto rank = static_cast<size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  return sorted[std::min(sorted.size() - 1, rank == 0 ? 0 : rank - 1)];
}

AlternatingRecorder::AlternatingRecorder(neuronprof::FlightRecorderOptions options,
                                         std::chrono::milliseconds window)
    : options_(std::move(options)) {
  result_.window = window;
  thread_ = std::thread([this] { Run(); });
}

AlternatingRecorder::~AlternatingRecorder() {
  if (thread_.joinable()) (void)Stop();
}

absl::StatusOr<Alternation> AlternatingRecorder::Stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (!status_.ok()) return status_;
  return result_;
}

void AlternatingRecorder::Run() {
  for (;;) {
    const int64_t start_ns = SteadyNowNs();
    auto recorder = std::make_unique<neuronprof::FlightRecorder>(options_);
    result_.max_start_ms = std::max(result_.max_start_ms, (SteadyNowNs() - start_ns) / 1e6);
    if (absl::Status status = recorder->status(); !status.ok()) {
      status_ = status;
      return;
    }
    const bool go_on = Measure(/*recording=*/true);
    recorder.reset();
    if (!go_on || !Measure(/*recording=*/false)) return;
  }
}

bool AlternatingRecorder::Measure(bool recording) {
  Window window;
  window.recording = recording;
  window.begin_ns = SteadyNowNs();
  const double cpu_begin_s = ProcessCpuSeconds();
  std::unique_lock<std::mutex> lock(mutex_);
  if (wake_.wait_for(lock, result_.window, [this] { return stopping_; })) return false;
  window.cpu_s = ProcessCpuSeconds() - cpu_begin_s;
  window.end_ns = SteadyNowNs();
  result_.windows.push_back(window);
  return true;
}

namespace {

// A window's figures from the requests answered in it.
struct Figures {
  double requests_per_s = 0;
  double p99_ms = 0;  // of the requests both sent and answered in it
  double cpu_us_per_request = 0;
};

// (answered_ns, sent_ns) of every answered request, by answer time.
std::vector<std::pair<int64_t, int64_t>> ByAnswer(const LoadResult& load) {
  std::vector<std::pair<int64_t, int64_t>> answers;
  answers.reserve(load.answered_ns.size());
  for (size_t id = 0; id < load.answered_ns.size(); ++id) {
    if (load.answered_ns[id] != 0) answers.emplace_back(load.answered_ns[id], load.sent_ns[id]);
  }
  std::sort(answers.begin(), answers.end());
  return answers;
}

Figures FiguresOf(const Window& window, const std::vector<std::pair<int64_t, int64_t>>& answers) {
  const auto first =
      std::lower_bound(answers.begin(), answers.end(), std::make_pair(window.begin_ns, int64_t{0}));
  const auto last =
      std::lower_bound(first, answers.end(), std::make_pair(window.end_ns, int64_t{0}));
  std::vector<double> latency_ms;
  for (auto it = first; it != last; ++it) {
    if (it->second >= window.begin_ns) latency_ms.push_back((it->first - it->second) / 1e6);
  }
  Figures figures;
  const auto count = static_cast<double>(last - first);
  figures.requests_per_s = count * 1e9 / static_cast<double>(window.end_ns - window.begin_ns);
  figures.cpu_us_per_request = count > 0 ? window.cpu_s * 1e6 / count : 0;
  std::sort(latency_ms.begin(), latency_ms.end());
  figures.p99_ms = Quantile(latency_ms, 0.99);
  return figures;
}

// The median of `values` with a distribution-free 95 % confidence interval
// (the order statistics n/2 -+ 0.98 sqrt(n)).
struct Median {
  double value = 0, low = 0, high = 0;
};
Median MedianOf(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const double n = static_cast<double>(values.size());
  const auto at = [&](double rank) {  // 1-based, clamped
    return values[static_cast<size_t>(std::clamp(rank, 1.0, n)) - 1];
  };
  const double middle =
      values.size() % 2 ? values[values.size() / 2] : (at(n / 2) + at(n / 2 + 1)) / 2;
  return {middle, at(std::floor(n / 2 - 0.98 * std::sqrt(n))),
          at(std::ceil(n / 2 + 1 + 0.98 * std::sqrt(n)))};
}

}  // namespace

void PrintRecorderCost(const Alternation& alternation, const LoadResult& load) {
  const std::vector<Window>& windows = alternation.windows;
  const std::vector<std::pair<int64_t, int64_t>> answers = ByAnswer(load);
  std::vector<Figures> figures;
  for (const Window& window : windows) figures.push_back(FiguresOf(window, answers));
  // Each recording window against the mean of the windows on both sides.
  std::vector<double> throughput, p99, cpu, none_rps, flight_rps;
  for (size_t i = 1; i + 1 < windows.size(); ++i) {
    if (!windows[i].recording || windows[i - 1].recording || windows[i + 1].recording) continue;
    const Figures& f = figures[i];
    const Figures &before = figures[i - 1], &after = figures[i + 1];
    const auto around = [&](double Figures::*field) { return (before.*field + after.*field) / 2; };
    const auto empty = [](const Figures& g) { return g.requests_per_s <= 0 || g.p99_ms <= 0; };
    if (empty(f) || empty(before) || empty(after)) continue;
    throughput.push_back(f.requests_per_s / around(&Figures::requests_per_s));
    p99.push_back(f.p99_ms / around(&Figures::p99_ms));
    cpu.push_back(f.cpu_us_per_request / around(&Figures::cpu_us_per_request));
    flight_rps.push_back(f.requests_per_s);
    none_rps.push_back(around(&Figures::requests_per_s));
  }
  std::printf(
      "flight recorder on and off in turn: %zu recording windows of %lld ms, each against the "
      "windows around it (a recorder started in at most %.0f ms between windows)\n",
      throughput.size(), static_cast<long long>(alternation.window.count()),
      alternation.max_start_ms);
  if (throughput.size() < 3) {
    std::printf("too few windows to compare: run longer or with a shorter --alternate_ms\n");
    return;
  }
  std::printf("requests/s: none %.0f, flight %.0f (medians of the windows)\n",
              MedianOf(none_rps).value, MedianOf(flight_rps).value);
  const auto print = [](const char* what, const std::vector<double>& ratios) {
    const Median m = MedianOf(ratios);
    std::printf("%s flight/none: median %.4f, 95%% CI %.4f-%.4f\n", what, m.value, m.low, m.high);
  };
  print("throughput", throughput);
  print("p99", p99);
  print("CPU per request", cpu);
}

}  // namespace inference_server
