// The libtorch operator collector: registers RecordFunction callbacks for
// the window of a kOperator capture. Its events go through the same
// per-thread recorder as ScopedTrace, so the host collector turns them into
// the host plane, and the session then annotates them (scope, layer, tf_op,
// costs). This collector never touches the XSpace: it reports through
// CollectStats only.
#include <memory>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "neuronprof/torch.h"
#include "src/collectors/collector.h"
#include "src/collectors/torch/memory_reporter.h"
#include "src/collectors/torch/op_callbacks.h"

namespace neuronprof {
namespace collectors {
namespace libtorch {
namespace {

class TorchCollector : public Collector {
 public:
  TorchCollector(const TorchOperatorOptions& options, int world_size)
      : options_(options), world_size_(world_size) {}
  ~TorchCollector() override {
    if (started_) {
      RemoveOperatorCallbacks();
      DisableMemoryReports();
    }
  }

  std::string name() const override { return "torch"; }
  bool records_operators() const override { return true; }

  absl::Status Start() override {
    TakeSkippedOperatorCount();  // Forget ops of earlier windows.
    absl::Status status =
        AddOperatorCallbacks(options_.record_shapes, world_size_, options_.record_stacks);
    started_ = status.ok();
    if (started_ && options_.profile_memory) EnableMemoryReports();
    return status;
  }

  absl::Status Stop() override {
    if (started_) {
      RemoveOperatorCallbacks();
      DisableMemoryReports();
    }
    started_ = false;
    skipped_ = TakeSkippedOperatorCount();
    blocked_memory_threads_ = TakeBlockedMemoryThreadCount();
    return absl::OkStatus();
  }

  absl::Status Collect(tensorflow::profiler::XSpace* /*space*/, CollectStats* stats) override {
    if (skipped_ > 0) {
      stats->dropped += static_cast<int64_t>(skipped_);
      stats->warnings.push_back(
          absl::StrCat("neuronprof: ", skipped_,
                       " libtorch operators were not recorded because they nested more "
                       "than 256 deep on one thread"));
    }
    if (blocked_memory_threads_ > 0) {
      stats->warnings.push_back(
          absl::StrCat("neuronprof: memory was not recorded on ", blocked_memory_threads_,
                       " threads because libtorch's own profiler was active on them"));
    }
    return absl::OkStatus();
  }

 private:
  TorchOperatorOptions options_;
  int world_size_ = 1;
  bool started_ = false;
  uint64_t skipped_ = 0;
  uint64_t blocked_memory_threads_ = 0;
};

std::mutex g_options_mutex;
TorchOperatorOptions g_options;  // The latest EnableTorchOperators options.

}  // namespace
}  // namespace libtorch
}  // namespace collectors

absl::Status EnableTorchOperators(const TorchOperatorOptions& options) {
  {
    std::lock_guard<std::mutex> lock(collectors::libtorch::g_options_mutex);
    collectors::libtorch::g_options = options;
  }
  static std::once_flag registered;
  std::call_once(registered, [] {
    collectors::RegisterCollectorFactory(
        [](const collectors::CollectorOptions& capture) -> std::unique_ptr<collectors::Collector> {
          if (!capture.operators) return nullptr;
          std::lock_guard<std::mutex> lock(collectors::libtorch::g_options_mutex);
          return std::make_unique<collectors::libtorch::TorchCollector>(
              collectors::libtorch::g_options, capture.world_size);
        });
  });
  return absl::OkStatus();
}

}  // namespace neuronprof
