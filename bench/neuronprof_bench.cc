// neuronprof microbenchmarks: marker cost (disabled, enabled, threads), the
// raw clock floor, memory per recorded event and the export of 1M events.
// See docs/PERFORMANCE.md for the commands and the latest figures.
//
// Marker names: NEURONPROF_SCOPE("literal") and ScopedTrace(StaticName) are
// stored by pointer; every other ScopedTrace copies its name (the old-style
// ScopedTrace("literal") included). BM_Marker_* compare those paths against
// the clock floor; run them with --benchmark_enable_random_interleaving.
//
// Enabled benchmarks run inside a capture started before the timed loop and
// stopped after it (thread 0 does both; Google Benchmark's start/stop
// barriers keep the other threads inside). Each run records at most ~40M
// events into a 1.5 GiB buffer, so nothing is dropped; the `drops` counter
// proves it, and `bytes_per_event` / `minflt_per_kevent` (minor page faults
// per 1000 events: the buffer is committed lazily) come from the same run.
#include <benchmark/benchmark.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "bench/floor_bench.h"
#include "neuronprof/flight_recorder.h"
#include "neuronprof/profiler.h"
#include "neuronprof/trace.h"
#include "proto/xplane.pb.h"
#include "src/collectors/host/host_collector.h"
#include "src/core/clock.h"
#include "src/core/event_pool.h"
#include "src/core/recorder.h"
#include "src/export/atomic_file.h"
#include "src/export/chrome_trace.h"
#include "src/export/gzip.h"
#include "src/export/logdir.h"
#include "src/session/slow_step_trigger.h"

namespace {

using neuronprof::ScopedTrace;
using neuronprof::StepTrace;
namespace core = neuronprof::core;
namespace exporter = neuronprof::exporter;
namespace session = neuronprof::session;
namespace collectors = neuronprof::collectors;
using tensorflow::profiler::XSpace;

constexpr uint64_t kCaptureBytes = uint64_t{1536} << 20;  // 1.5 GiB.
constexpr int kLevel = 2;

int64_t MinorFaults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

// Starts a capture in thread 0 before the timed loop.
class CaptureForRun {
 public:
  explicit CaptureForRun(benchmark::State& state) : state_(state) {
    if (state_.thread_index() != 0) return;
    faults_before_ = MinorFaults();
    auto status = core::StartRecording(kLevel, kCaptureBytes);
    if (!status.ok()) state_.SkipWithError(status.message().c_str());
  }
  // Call after the timed loop: stops the capture and sets the counters.
  void Finish() {
    if (state_.thread_index() != 0) return;
    const int64_t faults = MinorFaults() - faults_before_;
    auto capture = core::StopRecording();
    if (!capture.ok()) {
      state_.SkipWithError(std::string(capture.status().message()).c_str());
      return;
    }
    uint64_t events = 0;
    for (const core::ThreadEvents& thread : capture->threads) {
      events += thread.events.size();
    }
    const double n = events ? static_cast<double>(events) : 1.0;
    state_.counters["events"] = static_cast<double>(events);
    state_.counters["drops"] = static_cast<double>(capture->dropped);
    state_.counters["bytes_per_event"] = static_cast<double>(capture->pool->used_bytes()) / n;
    state_.counters["minflt_per_kevent"] = 1000.0 * static_cast<double>(faults) / n;
  }

 private:
  benchmark::State& state_;
  int64_t faults_before_ = 0;
};

// ---------------------------------------------------------------- floors --

void BM_EmptyLoop(benchmark::State& state) {
  for (auto _ : state) {
  }
}
BENCHMARK(BM_EmptyLoop);

BENCHMARK(BM_Floor_TwoNowTicks);

void BM_Floor_TwoClockGettimeMonotonic(benchmark::State& state) {
  for (auto _ : state) {
    timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    clock_gettime(CLOCK_MONOTONIC, &b);
    benchmark::DoNotOptimize(a);
    benchmark::DoNotOptimize(b);
  }
}
BENCHMARK(BM_Floor_TwoClockGettimeMonotonic);

// What the lazily committed event buffer costs: first touch of a fresh
// anonymous page (fault + zeroing), as the pool's MAP_NORESERVE mapping pays
// it once per 4 KiB = 128 records. /1: the same with MADV_HUGEPAGE.
void BM_PageFault_FirstTouch4K(benchmark::State& state) {
  constexpr size_t kBytes = size_t{256} << 20;
  constexpr size_t kPage = 4096;
  for (auto _ : state) {
    state.PauseTiming();
    void* base = mmap(nullptr, kBytes, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED) std::abort();
    // Arg 1: ask for transparent huge pages (THP is "madvise" on many hosts).
    if (state.range(0) == 1) madvise(base, kBytes, MADV_HUGEPAGE);
    state.ResumeTiming();
    for (size_t off = 0; off < kBytes; off += kPage) {
      static_cast<volatile char*>(base)[off] = 1;
    }
    state.PauseTiming();
    munmap(base, kBytes);
    state.ResumeTiming();
  }
  const double pages = static_cast<double>(kBytes / kPage) * state.iterations();
  state.counters["ns_per_page"] =
      benchmark::Counter(pages, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["ns_per_32B_event"] =
      benchmark::Counter(pages * 128, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_PageFault_FirstTouch4K)->Unit(benchmark::kMillisecond)->Iterations(4)->Arg(0)->Arg(1);

// --------------------------------------------------------------- markers --

void BM_ScopedTrace_Disabled(benchmark::State& state) {
  for (auto _ : state) {
    ScopedTrace trace("disabled_marker");
  }
}
BENCHMARK(BM_ScopedTrace_Disabled);

void BM_ScopeMacro_Disabled(benchmark::State& state) {
  for (auto _ : state) {
    NEURONPROF_SCOPE("disabled_marker");
  }
}
BENCHMARK(BM_ScopeMacro_Disabled);

// Capture running at level 2, marker at level 3: the "filtered" branch.
void BM_ScopedTrace_AboveLevel(benchmark::State& state) {
  CaptureForRun capture(state);
  for (auto _ : state) {
    NEURONPROF_SCOPE("verbose_marker", neuronprof::kTraceVerbose);
  }
  capture.Finish();
}
BENCHMARK(BM_ScopedTrace_AboveLevel)->Iterations(20'000'000);

// The four enabled paths to compare in one run (20M events each).
// NEURONPROF_SCOPE("literal"): zero-copy.
void BM_Marker_ScopeMacroLiteral(benchmark::State& state) {
  CaptureForRun capture(state);
  for (auto _ : state) {
    NEURONPROF_SCOPE("literal_marker");
  }
  capture.Finish();
}
BENCHMARK(BM_Marker_ScopeMacroLiteral)->Iterations(20'000'000);
// Per thread: 2 x 10M, 8 x 2.5M.
BENCHMARK(BM_Marker_ScopeMacroLiteral)->Iterations(10'000'000)->Threads(2);
BENCHMARK(BM_Marker_ScopeMacroLiteral)->Iterations(2'500'000)->Threads(8);

// ScopedTrace(StaticName): the code path ScopedTrace("literal") took
// before names were copied (store the pointer, no arena).
void BM_Marker_StaticName(benchmark::State& state) {
  static constexpr neuronprof::StaticName kName("literal_marker");
  CaptureForRun capture(state);
  for (auto _ : state) {
    ScopedTrace trace(kName);
  }
  capture.Finish();
}
BENCHMARK(BM_Marker_StaticName)->Iterations(20'000'000);

// The old-style literal, ScopedTrace("literal"): now copied (14 bytes).
void BM_Marker_CopiedLiteral(benchmark::State& state) {
  CaptureForRun capture(state);
  for (auto _ : state) {
    ScopedTrace trace("literal_marker");
  }
  capture.Finish();
}
BENCHMARK(BM_Marker_CopiedLiteral)->Iterations(20'000'000);

// A short name built at run time (a snprintf'd char buffer, 8 bytes).
void BM_Marker_CopiedShortName(benchmark::State& state) {
  char name[32];
  std::snprintf(name, sizeof(name), "layer_%d", 17);
  CaptureForRun capture(state);
  for (auto _ : state) {
    ScopedTrace trace(name);
  }
  capture.Finish();
}
BENCHMARK(BM_Marker_CopiedShortName)->Iterations(20'000'000);

void BM_ScopedTrace_EnabledDynamicName(benchmark::State& state) {
  const std::string name = "layers.17.self_attn.q_proj";  // 26 bytes.
  CaptureForRun capture(state);
  for (auto _ : state) {
    ScopedTrace trace{std::string_view(name)};
  }
  capture.Finish();
}
BENCHMARK(BM_ScopedTrace_EnabledDynamicName)->Iterations(10'000'000);

void BM_ScopedTrace_EnabledArgs(benchmark::State& state) {
  CaptureForRun capture(state);
  int64_t step = 0;
  for (auto _ : state) {
    ScopedTrace trace("forward", {{"step", ++step}, {"dtype", "bf16"}});
  }
  capture.Finish();
}
BENCHMARK(BM_ScopedTrace_EnabledArgs)->Iterations(10'000'000);

// ------------------------------------------ flight recorder (ring) mode --
// The same loops in ring mode, 64 MiB ring (20M events wrap it ~10 times,
// so block recycling is measured too). Compare with the BM_Marker_* runs
// above in the same process, interleaved (docs/PERFORMANCE.md).
constexpr uint64_t kRingBytes = uint64_t{64} << 20;

class RingForRun {
 public:
  explicit RingForRun(benchmark::State& state) : state_(state) {
    if (state_.thread_index() != 0) return;
    auto status = core::StartRingRecording(kLevel, kRingBytes);
    if (!status.ok()) state_.SkipWithError(status.message().c_str());
  }
  // After the timed loop: a snapshot (what a Dump reads), then the end.
  void Finish() {
    if (state_.thread_index() != 0) return;
    auto snapshot = core::SnapshotRing();
    if (!snapshot.ok()) {
      state_.SkipWithError(std::string(snapshot.status().message()).c_str());
      return;
    }
    uint64_t events = 0;
    for (const core::ThreadEvents& thread : snapshot->threads) {
      events += thread.events.size();
    }
    state_.counters["retained"] = static_cast<double>(events);
    state_.counters["drops"] = static_cast<double>(snapshot->dropped);
    state_.counters["clipped"] = static_cast<double>(snapshot->clipped);
    static_cast<void>(core::StopRecording());  // The ring was read.
  }

 private:
  benchmark::State& state_;
};

void BM_Marker_Ring_ScopeMacroLiteral(benchmark::State& state) {
  RingForRun ring(state);
  for (auto _ : state) {
    NEURONPROF_SCOPE("literal_marker");
  }
  ring.Finish();
}
BENCHMARK(BM_Marker_Ring_ScopeMacroLiteral)->Iterations(20'000'000);
BENCHMARK(BM_Marker_Ring_ScopeMacroLiteral)->Iterations(10'000'000)->Threads(2);

void BM_Marker_Ring_CopiedShortName(benchmark::State& state) {
  char name[32];
  std::snprintf(name, sizeof(name), "layer_%d", 17);
  RingForRun ring(state);
  for (auto _ : state) {
    ScopedTrace trace(name);
  }
  ring.Finish();
}
BENCHMARK(BM_Marker_Ring_CopiedShortName)->Iterations(20'000'000);

// Slow-step trigger (FlightRecorder::TriggerOnSlowStep) cost, in the ring.
// Arg 0: no trigger armed. 1: a trigger armed on another step name (every
// StepTrace compares its name at its start). 2: armed on this step's name
// with a threshold it never reaches (a watched step also reports its end).
// ScopedTrace never looks at triggers: the NEURONPROF_SCOPE variant shows
// that arming changes nothing for it.
class TriggerForRun {
 public:
  TriggerForRun(benchmark::State& state, const char* watched_name) {
    if (state.thread_index() != 0 || state.range(0) == 0) return;
    auto triggers = session::SlowStepTriggers::Start([](const session::SlowStep&) {});
    if (!triggers.ok()) {
      state.SkipWithError(std::string(triggers.status().message()).c_str());
      return;
    }
    triggers_ = std::move(*triggers);
    const char* name = state.range(0) == 2 ? watched_name : "some_other_step";
    // A threshold of an hour: the measured steps never trigger a dump.
    auto armed = triggers_->Arm(name, int64_t{3600} * 1000000000, 0);
    if (!armed.ok()) state.SkipWithError(std::string(armed.status().message()).c_str());
  }

 private:
  std::unique_ptr<session::SlowStepTriggers> triggers_;
};

void BM_Marker_Ring_StepTrace(benchmark::State& state) {
  RingForRun ring(state);
  TriggerForRun trigger(state, "step");
  int64_t n = 0;
  for (auto _ : state) {
    StepTrace step("step", n++);
  }
  ring.Finish();
}
BENCHMARK(BM_Marker_Ring_StepTrace)->Iterations(5'000'000)->Arg(0)->Arg(1)->Arg(2);

void BM_Marker_Ring_ScopeMacroLiteral_Trigger(benchmark::State& state) {
  RingForRun ring(state);
  TriggerForRun trigger(state, "literal_marker");
  for (auto _ : state) {
    NEURONPROF_SCOPE("literal_marker");
  }
  ring.Finish();
}
BENCHMARK(BM_Marker_Ring_ScopeMacroLiteral_Trigger)->Iterations(20'000'000)->Arg(0)->Arg(1);

// ----------------------------------------------------- 1M events: record --

constexpr int kExportEvents = 1'000'000;

// 1M zero-copy literal markers, 8 names, as one thread records them.
void RecordMillion() {
  for (int i = 0; i < kExportEvents; ++i) {
    switch (i & 7) {
      case 0: {
        NEURONPROF_SCOPE("matmul");
        break;
      }
      case 1: {
        NEURONPROF_SCOPE("add");
        break;
      }
      case 2: {
        NEURONPROF_SCOPE("layer_norm");
        break;
      }
      case 3: {
        NEURONPROF_SCOPE("softmax");
        break;
      }
      case 4: {
        NEURONPROF_SCOPE("all_reduce");
        break;
      }
      case 5: {
        NEURONPROF_SCOPE("optimizer_step");
        break;
      }
      case 6: {
        NEURONPROF_SCOPE("data_loader_next");
        break;
      }
      default: {
        NEURONPROF_SCOPE("gelu");
        break;
      }
    }
  }
}

// Records 1M events into a fresh (cold) buffer: time per event includes the
// page faults that commit the buffer. Also the memory-per-event figure.
void BM_Record1M_Literal(benchmark::State& state) {
  for (auto _ : state) {
    state.PauseTiming();
    CaptureForRun capture(state);
    state.ResumeTiming();
    RecordMillion();
    state.PauseTiming();
    capture.Finish();
    state.ResumeTiming();
  }
  state.counters["ns_per_event"] =
      benchmark::Counter(static_cast<double>(kExportEvents) * state.iterations(),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_Record1M_Literal)->Unit(benchmark::kMillisecond)->Iterations(5);

// ---------------------------------------------------- 1M events: export --

std::string g_export_dir;  // Removed at exit.

struct ExportFixture {
  core::RecordedCapture capture;
  std::unique_ptr<XSpace> space;
  std::string dir;
};

ExportFixture& Fixture() {
  static ExportFixture* fixture = [] {
    auto* f = new ExportFixture();
    if (!core::StartRecording(kLevel, kCaptureBytes).ok()) std::abort();
    RecordMillion();
    auto capture = core::StopRecording();
    if (!capture.ok() || capture->dropped != 0) std::abort();
    f->capture = std::move(*capture);
    f->space = std::make_unique<XSpace>();
    collectors::CollectStats stats;
    collectors::AddHostPlane(f->capture, f->space.get(), &stats);
    char tmpl[] = "/tmp/neuronprof_bench_XXXXXX";
    if (mkdtemp(tmpl) == nullptr) std::abort();
    f->dir = tmpl;
    g_export_dir = f->dir;
    return f;
  }();
  return *fixture;
}

void BM_Export1M_BuildPlane(benchmark::State& state) {
  ExportFixture& f = Fixture();
  int64_t events = 0;
  for (auto _ : state) {
    auto space = std::make_unique<XSpace>();
    collectors::CollectStats stats;
    collectors::AddHostPlane(f.capture, space.get(), &stats);
    events = stats.events;
    state.PauseTiming();
    space.reset();  // Freeing 1M protobuf events is not part of the build.
    state.ResumeTiming();
  }
  state.counters["events"] = static_cast<double>(events);
}
BENCHMARK(BM_Export1M_BuildPlane)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_Export1M_XPlanePb(benchmark::State& state) {
  ExportFixture& f = Fixture();
  const std::string path = f.dir + "/bench.xplane.pb";
  size_t bytes = 0;
  for (auto _ : state) {
    std::string serialized;
    if (!f.space->SerializeToString(&serialized)) std::abort();
    if (!exporter::WriteFileAtomically(path, serialized).ok()) std::abort();
    bytes = serialized.size();
  }
  state.counters["file_bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_Export1M_XPlanePb)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_Export1M_TraceJsonGz(benchmark::State& state) {
  ExportFixture& f = Fixture();
  const std::string path = f.dir + "/bench.trace.json.gz";
  for (auto _ : state) {
    if (!exporter::WriteChromeTraceFile(*f.space, path).ok()) std::abort();
  }
  struct stat info;
  if (stat(path.c_str(), &info) != 0) std::abort();
  state.counters["file_bytes"] = static_cast<double>(info.st_size);
}
BENCHMARK(BM_Export1M_TraceJsonGz)->Unit(benchmark::kMillisecond)->Iterations(3);

// Just the JSON text (no gzip, no write), to split the .json.gz figure.
void BM_Export1M_TraceJsonOnly(benchmark::State& state) {
  ExportFixture& f = Fixture();
  size_t json_bytes = 0;
  for (auto _ : state) {
    exporter::CountingSink sink;
    if (!exporter::WriteChromeTrace(*f.space, &sink).ok()) std::abort();
    json_bytes = sink.bytes();
  }
  state.counters["json_bytes"] = static_cast<double>(json_bytes);
}
BENCHMARK(BM_Export1M_TraceJsonOnly)->Unit(benchmark::kMillisecond)->Iterations(3);

// Everything the session does after StopRecording for the host plane:
// build the XSpace, then WriteProfileFiles (xplane.pb + trace.json.gz).
void BM_Export1M_Total(benchmark::State& state) {
  ExportFixture& f = Fixture();
  for (auto _ : state) {
    auto space = std::make_unique<XSpace>();
    collectors::CollectStats stats;
    collectors::AddHostPlane(f.capture, space.get(), &stats);
    auto written = exporter::WriteProfileFiles(*space, f.dir, "total", exporter::ExportOptions{});
    if (!written.ok()) std::abort();
    state.PauseTiming();
    space.reset();
    state.ResumeTiming();
  }
}
BENCHMARK(BM_Export1M_Total)->Unit(benchmark::kMillisecond)->Iterations(3);

// ------------------------------ 1M events: dump vs a normal capture's stop --

// The same 1M markers written as a run by a Profiler's Stop() and by a
// FlightRecorder's Dump(): both build the host plane and write xplane.pb,
// trace.json.gz and pt.trace.json.gz (the dump also copies the ring).
// Recording is outside the timing.
void BM_Run1M_ProfilerStop(benchmark::State& state) {
  Fixture();  // For g_export_dir.
  for (auto _ : state) {
    state.PauseTiming();
    neuronprof::ProfilerOptions options;
    options.port = 0;
    options.logdir = g_export_dir + "/profiler";
    options.host_name = "bench";
    auto profiler = std::make_unique<neuronprof::Profiler>(options);
    if (!profiler->status().ok()) std::abort();
    RecordMillion();
    state.ResumeTiming();
    auto result = profiler->Stop();
    if (!result.ok() || result->events != kExportEvents) std::abort();
    state.PauseTiming();
    profiler.reset();
    state.ResumeTiming();
  }
}
BENCHMARK(BM_Run1M_ProfilerStop)->Unit(benchmark::kMillisecond)->Iterations(1);

void BM_Run1M_FlightRecorderDump(benchmark::State& state) {
  Fixture();
  for (auto _ : state) {
    state.PauseTiming();
    neuronprof::FlightRecorderOptions options;
    options.ring_bytes = int64_t{128} << 20;  // Holds 1M 32-byte records.
    options.logdir = g_export_dir + "/flight";
    options.host_name = "bench";
    auto recorder = std::make_unique<neuronprof::FlightRecorder>(options);
    if (!recorder->status().ok()) std::abort();
    RecordMillion();
    state.ResumeTiming();
    auto result = recorder->Dump("bench");
    if (!result.ok() || result->events != kExportEvents) std::abort();
    state.PauseTiming();
    recorder.reset();
    state.ResumeTiming();
  }
}
BENCHMARK(BM_Run1M_FlightRecorderDump)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace

int main(int argc, char** argv) {
  // NowTicks() reads the TSC only once the tick source is chosen (the first
  // StartRecording does it); choose it now so the floor measures the clock
  // the markers use.
  core::InitTickSource();
  benchmark::AddCustomContext("neuronprof_tick_source", core::TickSourceDescription());
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  if (!g_export_dir.empty()) exporter::RemoveTree(g_export_dir);
  return 0;
}
