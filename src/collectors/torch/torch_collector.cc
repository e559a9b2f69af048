// The libtorch operator collector: registers RecordFunction callbacks for
// the window of a kOperator capture. Its events go through the same
// per-thread recorder as ScopedTrace, so the host collector turns them into
// the host plane, and the session then annotates them (scope, layer, tf_op,
// costs). This collector never touches the XSpace: it reports through
// CollectStats only.
#include <atomic>
#include <memory>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "neuronprof/torch.h"
#include "src/collectors/collector.h"
#include "src/collectors/torch/op_callbacks.h"

namespace neuronprof {
namespace collectors {
namespace libtorch {
namespace {

class TorchCollector : public Collector {
 public:
  explicit TorchCollector(bool record_shapes) : record_shapes_(record_shapes) {}
  ~TorchCollector() override {
    if (started_) RemoveOperatorCallbacks();
  }

  std::string name() const override { return "torch"; }
  bool records_operators() const override { return true; }

  absl::Status Start() override {
    TakeSkippedOperatorCount();  // Forget ops of earlier windows.
    absl::Status status = AddOperatorCallbacks(record_shapes_);
    started_ = status.ok();
    return status;
  }

  absl::Status Stop() override {
    if (started_) RemoveOperatorCallbacks();
    started_ = false;
    skipped_ = TakeSkippedOperatorCount();
    return absl::OkStatus();
  }

  absl::Status Collect(tensorflow::profiler::XSpace* /*space*/,
                       CollectStats* stats) override {
    if (skipped_ > 0) {
      stats->dropped += static_cast<int64_t>(skipped_);
      stats->warnings.push_back(absl::StrCat(
          "neuronprof: ", skipped_,
          " libtorch operators were not recorded because they nested more "
          "than 256 deep on one thread"));
    }
    return absl::OkStatus();
  }

 private:
  bool record_shapes_;
  bool started_ = false;
  uint64_t skipped_ = 0;
};

std::atomic<bool> g_record_shapes{true};

}  // namespace
}  // namespace libtorch
}  // namespace collectors

absl::Status EnableTorchOperators(const TorchOperatorOptions& options) {
  collectors::libtorch::g_record_shapes.store(options.record_shapes);
  static std::once_flag registered;
  std::call_once(registered, [] {
    collectors::RegisterCollectorFactory(
        [](const collectors::CaptureOptions& capture)
            -> std::unique_ptr<collectors::Collector> {
          if (!capture.operators) return nullptr;
          return std::make_unique<collectors::libtorch::TorchCollector>(
              collectors::libtorch::g_record_shapes.load());
        });
  });
  return absl::OkStatus();
}

}  // namespace neuronprof
