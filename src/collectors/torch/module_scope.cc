// NameModules / ModuleScope (public neuronprof/torch.h): module paths as
// PyProf "layer:" markers, read by analysis::CollectOperatorEvents like
// hand-written ones.
#include <torch/nn/module.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "neuronprof/torch.h"

namespace neuronprof {
namespace {

// Module -> marker name ("layer:<path>"). Copy on write: readers (every
// ModuleScope during a capture) load one pointer and never lock; writers
// (NameModules, at set-up) publish a new map. Old maps are kept, never
// freed, so a reader that loaded one before the swap stays valid; there is
// one per NameModules call.
using Names = std::unordered_map<const torch::nn::Module*, std::string>;

std::atomic<const Names*> g_names{nullptr};

std::mutex& WriterMutex() {
  static std::mutex* mutex = new std::mutex;
  return *mutex;
}

std::vector<std::unique_ptr<Names>>& AllMaps() {
  static auto* maps = new std::vector<std::unique_ptr<Names>>;
  return *maps;
}

}  // namespace

void NameModules(const torch::nn::Module& root, std::string_view root_name) {
  const std::string prefix(root_name);
  // include_self = false: libtorch throws for a root not held by a
  // shared_ptr (a module on the stack); the root is added below.
  const auto modules = root.named_modules(prefix, /*include_self=*/false);
  std::lock_guard<std::mutex> lock(WriterMutex());
  const Names* current = g_names.load(std::memory_order_relaxed);
  auto next = current != nullptr ? std::make_unique<Names>(*current) : std::make_unique<Names>();
  // A root without a name is a plain marker named by its class.
  (*next)[&root] = prefix.empty() ? root.name() : "layer:" + prefix;
  for (const auto& item : modules) {
    (*next)[item.value().get()] = "layer:" + item.key();
  }
  g_names.store(next.get(), std::memory_order_release);
  AllMaps().push_back(std::move(next));
}

namespace internal {

std::string_view ModuleMarkerName(const torch::nn::Module& module) {
  if (const Names* names = g_names.load(std::memory_order_acquire)) {
    auto it = names->find(&module);
    if (it != names->end()) return it->second;
  }
  return module.name();  // Not named: its class (libtorch caches the text).
}

}  // namespace internal
}  // namespace neuronprof
