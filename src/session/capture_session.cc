#include "src/session/capture_session.h"

#include <algorithm>
#include <thread>

#include "absl/strings/str_cat.h"
#include "src/analysis/memory/memory_annotator.h"
#include "src/analysis/ops/operator_annotator.h"
#include "src/collectors/host/host_collector.h"
#include "src/core/clock.h"
#include "src/core/step_watch.h"
#include "src/session/mapped_arena.h"
#include "src/xplane/saturating.h"
#include "src/xplane/schema.h"
#include "src/xplane/xplane_builder.h"

namespace neuronprof {
namespace session {
namespace {

std::atomic<bool> g_window_open{false};

// Rebases one line onto a start `shift_ns` later, dropping the events
// before it; returns how many it dropped.
int64_t DiscardLineBefore(int64_t shift_ns, tensorflow::profiler::XLine* line) {
  // Lines that began before the new start open at 0, their events' offsets
  // shortened by the difference (negative offsets: before the new start).
  // Saturating: a device plug-in's times can be anything.
  const int64_t shifted_ns = SaturatingSub(line->timestamp_ns(), shift_ns);
  const int64_t timestamp_ns = std::max<int64_t>(0, shifted_ns);
  const int64_t offset_shift_ps = SaturatingMul(shifted_ns - timestamp_ns, 1000);
  auto* events = line->mutable_events();
  int kept = 0;
  int64_t end_ps = 0;
  for (int i = 0; i < events->size(); ++i) {
    tensorflow::profiler::XEvent* event = events->Mutable(i);
    const int64_t offset_ps = SaturatingAdd(event->offset_ps(), offset_shift_ps);
    if (offset_ps < 0) continue;
    event->set_offset_ps(offset_ps);
    end_ps = std::max(end_ps, SaturatingAdd(offset_ps, event->duration_ps()));
    if (kept != i) events->SwapElements(kept, i);
    ++kept;
  }
  const int dropped = events->size() - kept;
  events->DeleteSubrange(kept, dropped);
  line->set_timestamp_ns(timestamp_ns);
  line->set_duration_ps(end_ps);
  return dropped;
}

absl::Status CheckOperatorCollector(
    const collectors::CollectorOptions& options,
    const std::vector<std::unique_ptr<collectors::Collector>>& collectors) {
  if (!options.require_operators) return absl::OkStatus();
  for (const auto& collector : collectors) {
    if (collector->records_operators()) return absl::OkStatus();
  }
  return absl::FailedPreconditionError(
      "profile_type kOperator needs an operator collector, and none is "
      "enabled: link neuronprof::torch (built when libtorch is found) and "
      "call neuronprof::EnableTorchOperators() before the capture, or use "
      "profile_type kTrace");
}

void MoveWarnings(collectors::CollectStats* stats, tensorflow::profiler::XSpace* space) {
  for (const std::string& warning : stats->warnings) {
    xplane::AddWarning(space, warning);
  }
  stats->warnings.clear();
}

// Runs `part(0)` here and `part(1)` on another core.
template <typename Part>
void InTwoParts(const Part& part) {
  std::thread second([&part] { part(1); });
  part(0);
  second.join();
}

// Operator events live in the host plane whichever collector recorded
// them; annotating rewrites that plane, so it runs once every plane is in.
// Memory events (libtorch's allocators, device plug-ins) get the stats
// their recorders leave out to stay cheap. The two walks only read the
// space: they run side by side. Then every metadata id either adds is
// made, the operators' first (the order of one annotation after the
// other), and each set of stats is added to its events in two parts side
// by side: the operators' first, while the ops are freed (a lower peak).
void Annotate(bool operators, tensorflow::profiler::XSpace* space) {
  analysis::MemoryAnnotation memory;
  std::thread memory_walk([&memory, space] { memory = analysis::PlanMemoryAnnotation(*space); });
  analysis::OperatorEvents ops;
  if (operators) ops = analysis::CollectOperatorEvents(*space);
  memory_walk.join();
  if (operators) {
    const analysis::OperatorAnnotation op_stats = analysis::PlanOperatorAnnotation(ops, space);
    InTwoParts([&](int part) { analysis::ApplyOperatorAnnotation(ops, op_stats, part, 2, space); });
  }
  // The ops (~80 MB for a million) are unmapped beside the memory stats,
  // not before them.
  std::thread free_ops([done = std::move(ops)] {});
  const std::vector<analysis::MemoryAnnotationIds> memory_ids =
      analysis::ResolveMemoryStatIds(memory, space);
  InTwoParts([&](int part) { analysis::AddMemoryStats(memory, memory_ids, part, 2, space); });
  free_ops.join();
}

}  // namespace

CaptureResult::CaptureResult(SpaceStorage storage)
    : arena(storage == SpaceStorage::kArena ? NewMappedArena() : nullptr),
      // kHeap, or no arena where NewMappedArena gives none (GCC's TSan).
      on_heap(arena == nullptr ? std::make_unique<tensorflow::profiler::XSpace>() : nullptr),
      space(arena != nullptr
                ? *google::protobuf::Arena::CreateMessage<tensorflow::profiler::XSpace>(arena.get())
                : *on_heap) {}

void DiscardBefore(int64_t epoch_ns, CaptureResult* result) {
  const int64_t shift_ns = epoch_ns - result->start_epoch_ns;
  if (shift_ns <= 0) return;
  for (tensorflow::profiler::XPlane& plane : *result->space.mutable_planes()) {
    // Its own times are set below; it has no lines.
    if (plane.name() == xplane::kTaskEnvironmentPlaneName) continue;
    const bool host = plane.name() == xplane::kHostPlaneName;
    auto* lines = plane.mutable_lines();
    int kept = 0;
    for (int i = 0; i < lines->size(); ++i) {
      tensorflow::profiler::XLine* line = lines->Mutable(i);
      result->stats.events -= DiscardLineBefore(shift_ns, line);
      if (line->events_size() == 0) {
        // Host lines below the memory pools' ids are threads.
        if (host && line->id() < xplane::kMemoryLineIdBase) result->stats.threads -= 1;
        continue;
      }
      if (kept != i) lines->SwapElements(kept, i);
      ++kept;
    }
    lines->DeleteSubrange(kept, lines->size() - kept);
  }
  result->start_epoch_ns = epoch_ns;
  xplane::SetProfileTimes(&result->space, result->start_epoch_ns, result->stop_epoch_ns);
}

absl::StatusOr<std::unique_ptr<CaptureSession>> CaptureSession::Start(
    const collectors::CollectorOptions& options, std::string holder) {
  auto gate = CaptureGate::Acquire(std::move(holder));
  if (!gate.ok()) return gate.status();
  return Start(options, std::move(*gate));
}

absl::StatusOr<std::unique_ptr<CaptureSession>> CaptureSession::Start(
    const collectors::CollectorOptions& options, CaptureGate gate) {
  std::unique_ptr<CaptureSession> session(new CaptureSession());
  session->gate_ = std::move(gate);
  session->collectors_.push_back(collectors::CreateHostCollector(options));
  for (auto& collector : collectors::CreateCollectors(options)) {
    session->collectors_.push_back(std::move(collector));
  }
  if (absl::Status found = CheckOperatorCollector(options, session->collectors_); !found.ok()) {
    session->Release();
    return found;
  }
  session->start_epoch_ns_ = core::EpochNowNs();
  for (size_t i = 0; i < session->collectors_.size(); ++i) {
    absl::Status started = session->collectors_[i]->Start();
    if (!started.ok()) {
      // Roll back: the started ones stop, last started first.
      for (size_t j = i; j-- > 0;) session->collectors_[j]->Stop().IgnoreError();
      session->Release();
      return absl::Status(started.code(),
                          absl::StrCat("cannot start the ", session->collectors_[i]->name(),
                                       " collector: ", started.message()));
    }
  }
  return session;
}

absl::Status CaptureSession::CheckCollectors(const collectors::CollectorOptions& options) {
  // Device plug-ins are not created for this: their factories may do work.
  collectors::CollectorOptions probe = options;
  probe.device_tracer_level = 0;
  return CheckOperatorCollector(probe, collectors::CreateCollectors(probe));
}

CaptureSession::~CaptureSession() {
  if (!stopped_) Stop().IgnoreError();
}

void CaptureSession::DiscardEarlierEvents() { discard_before_ns_ = core::EpochNowNs(); }

void CaptureSession::Release() {
  stopped_ = true;
  gate_.Release();
}

absl::StatusOr<CaptureResult> CaptureSession::Stop(SpaceStorage storage) {
  if (stopped_) return absl::FailedPreconditionError("capture already stopped");
  CaptureResult result(storage);
  result.start_epoch_ns = start_epoch_ns_;
  std::vector<bool> stopped(collectors_.size(), false);
  for (size_t i = 0; i < collectors_.size(); ++i) {
    absl::Status status = collectors_[i]->Stop();
    stopped[i] = status.ok();
    if (!status.ok()) {
      // A plug-in's message may hold any bytes; AddError keeps it UTF-8.
      xplane::AddError(
          &result.space,
          absl::StrCat(collectors_[i]->name(), " collector failed to stop: ", status.ToString()));
    }
  }
  result.stop_epoch_ns = core::EpochNowNs();
  Release();
  xplane::SetProfileTimes(&result.space, start_epoch_ns_, result.stop_epoch_ns);
  bool have_operators = false;
  for (size_t i = 0; i < collectors_.size(); ++i) {
    have_operators |= collectors_[i]->records_operators();
    if (!stopped[i]) continue;
    absl::Status status = collectors_[i]->Collect(&result.space, &result.stats);
    if (!status.ok()) {
      xplane::AddError(&result.space, absl::StrCat(collectors_[i]->name(),
                                                   " collector failed: ", status.ToString()));
    }
    MoveWarnings(&result.stats, &result.space);
  }
  Annotate(have_operators, &result.space);
  // After the annotations: memory totals count what the warmup allocated.
  DiscardBefore(discard_before_ns_, &result);
  return result;
}

bool CaptureSession::CanStreamHostPlane() const {
  return !stopped_ && collectors_.size() == 1 && discard_before_ns_ == 0;
}

absl::StatusOr<StreamedCapture> CaptureSession::StopForStreaming() {
  if (!CanStreamHostPlane()) {
    return absl::FailedPreconditionError("capture already stopped, or not of host markers alone");
  }
  // As Stop() does for the host collector, which is the only one.
  StreamedCapture streamed;
  CaptureResult& result = streamed.result;
  result.start_epoch_ns = start_epoch_ns_;
  collectors::Collector& host = *collectors_.front();
  const absl::Status status = host.Stop();
  result.stop_epoch_ns = core::EpochNowNs();
  Release();
  if (!status.ok()) {
    xplane::AddError(&result.space,
                     absl::StrCat(host.name(), " collector failed to stop: ", status.ToString()));
  }
  xplane::SetProfileTimes(&result.space, start_epoch_ns_, result.stop_epoch_ns);
  if (status.ok()) streamed.records = collectors::TakeHostRecords(&host, &result.space);
  return streamed;
}

absl::Status StreamedCapture::WriteHostPlane(xplane::XPlaneSink* sink) {
  result.stats = collectors::CollectStats();  // Counted again by each write.
  built = false;
  absl::Status status =
      collectors::StreamHostPlane(records, result.space, sink, &result.stats, &host_plane);
  built = status.ok();
  return status;
}

absl::Status StreamedCapture::WriteHostFragments(tensorflow::profiler::XPlane* fragment,
                                                 const std::function<absl::Status()>& ready) const {
  if (!built) {
    return absl::FailedPreconditionError("the host plane's fragments come after its xplane.pb");
  }
  return collectors::FragmentHostPlane(records, result.space, host_plane, fragment, kFragmentEvents,
                                       ready);
}

void StartCountingUnrecordedSteps() { core::StartCountingUnrecordedSteps(); }
int64_t StopCountingUnrecordedSteps() { return core::StopCountingUnrecordedSteps(); }

}  // namespace session
}  // namespace neuronprof
