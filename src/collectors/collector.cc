#include "src/collectors/collector.h"

#include <mutex>

namespace neuronprof {
namespace collectors {
namespace {

std::mutex& FactoriesMutex() {
  static auto* mutex = new std::mutex();
  return *mutex;
}

std::vector<CollectorFactory>& Factories() {
  static auto* factories = new std::vector<CollectorFactory>();
  return *factories;
}

}  // namespace

void RegisterCollectorFactory(CollectorFactory factory) {
  std::lock_guard<std::mutex> lock(FactoriesMutex());
  Factories().push_back(std::move(factory));
}

std::vector<std::unique_ptr<Collector>> CreateCollectors(
    const CaptureOptions& options) {
  std::lock_guard<std::mutex> lock(FactoriesMutex());
  std::vector<std::unique_ptr<Collector>> collectors;
  for (const CollectorFactory& factory : Factories()) {
    if (auto collector = factory(options)) {
      collectors.push_back(std::move(collector));
    }
  }
  return collectors;
}

}  // namespace collectors
}  // namespace neuronprof
