#include "src/collectors/collector.h"

#include <mutex>
#include <utility>

namespace neuronprof {
namespace collectors {
namespace {

std::mutex& FactoriesMutex() {
  static auto* mutex = new std::mutex();
  return *mutex;
}

struct Registered {
  uint64_t id;
  CollectorFactory factory;
};

// Guarded by FactoriesMutex(), like the id counter.
std::vector<Registered>& Factories() {
  static auto* factories = new std::vector<Registered>();
  return *factories;
}

uint64_t AddFactory(CollectorFactory factory) {
  static uint64_t next_id = 0;
  std::lock_guard<std::mutex> lock(FactoriesMutex());
  uint64_t id = next_id++;
  Factories().push_back({id, std::move(factory)});
  return id;
}

}  // namespace

void RegisterCollectorFactory(CollectorFactory factory) { AddFactory(std::move(factory)); }

ScopedCollectorFactory::ScopedCollectorFactory(CollectorFactory factory)
    : id_(AddFactory(std::move(factory))) {}

ScopedCollectorFactory::~ScopedCollectorFactory() {
  std::lock_guard<std::mutex> lock(FactoriesMutex());
  auto& factories = Factories();
  for (auto it = factories.begin(); it != factories.end(); ++it) {
    if (it->id == id_) {
      factories.erase(it);
      return;
    }
  }
}

std::vector<std::unique_ptr<Collector>> CreateCollectors(const CollectorOptions& options) {
  std::lock_guard<std::mutex> lock(FactoriesMutex());
  std::vector<std::unique_ptr<Collector>> collectors;
  for (const Registered& registered : Factories()) {
    if (auto collector = registered.factory(options)) {
      collectors.push_back(std::move(collector));
    }
  }
  return collectors;
}

}  // namespace collectors
}  // namespace neuronprof
