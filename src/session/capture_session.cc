#include "src/session/capture_session.h"

#include "absl/strings/str_cat.h"
#include "src/analysis/memory_annotator.h"
#include "src/analysis/operator_annotator.h"
#include "src/collectors/host/host_collector.h"
#include "src/core/clock.h"
#include "src/xplane/xplane_builder.h"

namespace neuronprof {
namespace session {
namespace {

std::atomic<bool> g_window_open{false};

void MoveWarnings(collectors::CollectStats* stats,
                  tensorflow::profiler::XSpace* space) {
  for (const std::string& warning : stats->warnings) {
    xplane::AddWarning(space, warning);
  }
  stats->warnings.clear();
}

}  // namespace

absl::StatusOr<std::unique_ptr<CaptureSession>> CaptureSession::Start(
    const collectors::CaptureOptions& options, std::string holder) {
  auto gate = CaptureGate::Acquire(std::move(holder));
  if (!gate.ok()) return gate.status();
  return Start(options, std::move(*gate));
}

absl::StatusOr<std::unique_ptr<CaptureSession>> CaptureSession::Start(
    const collectors::CaptureOptions& options, CaptureGate gate) {
  std::unique_ptr<CaptureSession> session(new CaptureSession());
  session->gate_ = std::move(gate);
  session->collectors_.push_back(collectors::CreateHostCollector(options));
  for (auto& collector : collectors::CreateCollectors(options)) {
    session->collectors_.push_back(std::move(collector));
  }
  if (options.require_operators) {
    bool have_operators = false;
    for (const auto& collector : session->collectors_) {
      have_operators |= collector->records_operators();
    }
    if (!have_operators) {
      session->Release();
      return absl::FailedPreconditionError(
          "profile_type kOperator needs an operator collector, and none is "
          "enabled: link neuronprof::torch (built when libtorch is found) and "
          "call neuronprof::EnableTorchOperators() before the capture, or use "
          "profile_type kTrace");
    }
  }
  session->start_epoch_ns_ = core::EpochNowNs();
  for (size_t i = 0; i < session->collectors_.size(); ++i) {
    absl::Status started = session->collectors_[i]->Start();
    if (!started.ok()) {
      // Roll back: the started ones stop, last started first.
      for (size_t j = i; j-- > 0;) session->collectors_[j]->Stop().IgnoreError();
      session->Release();
      return absl::Status(started.code(),
                          absl::StrCat("cannot start the ",
                                       session->collectors_[i]->name(),
                                       " collector: ", started.message()));
    }
  }
  return session;
}

CaptureSession::~CaptureSession() {
  if (!stopped_) Stop().IgnoreError();
}

void CaptureSession::Release() {
  stopped_ = true;
  gate_.Release();
}

absl::StatusOr<CaptureResult> CaptureSession::Stop() {
  if (stopped_) return absl::FailedPreconditionError("capture already stopped");
  CaptureResult result;
  result.start_epoch_ns = start_epoch_ns_;
  std::vector<bool> stopped(collectors_.size(), false);
  for (size_t i = 0; i < collectors_.size(); ++i) {
    absl::Status status = collectors_[i]->Stop();
    stopped[i] = status.ok();
    if (!status.ok()) {
      // A plug-in's message may hold any bytes; AddError keeps it UTF-8.
      xplane::AddError(&result.space, absl::StrCat(collectors_[i]->name(),
                                                   " collector failed to stop: ",
                                                   status.ToString()));
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
                                                   " collector failed: ",
                                                   status.ToString()));
    }
    MoveWarnings(&result.stats, &result.space);
  }
  // Operator events live in the host plane whichever collector recorded
  // them; annotating rewrites that plane, so it runs once every plane is in.
  if (have_operators) analysis::AnnotateOperatorEvents(&result.space);
  // Memory events (libtorch's allocators, device plug-ins) get the stats
  // their recorders leave out to stay cheap.
  analysis::AnnotateMemoryEvents(&result.space);
  return result;
}

}  // namespace session
}  // namespace neuronprof
