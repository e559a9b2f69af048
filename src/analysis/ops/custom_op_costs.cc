#include "src/analysis/ops/custom_op_costs.h"

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "src/analysis/ops/op_cost.h"

namespace neuronprof {
namespace analysis {
namespace {

struct Registry {
  std::mutex mutex;
  absl::flat_hash_map<std::string, std::shared_ptr<const CustomCostFormula>> formulas;
};

Registry& TheRegistry() {
  static Registry* registry = new Registry;  // never destroyed: used at exit
  return *registry;
}

std::atomic<bool> g_any{false};  // ops cost nothing extra until one registers

}  // namespace

absl::Status RegisterCustomOpCost(std::string_view op_name, CustomCostFormula formula) {
  if (op_name.empty()) return absl::InvalidArgumentError("RegisterOpCost: empty op name");
  if (!formula) {
    return absl::InvalidArgumentError(absl::StrCat("RegisterOpCost: no formula for '", std::string(op_name), "'"));
  }
  if (HasBuiltinOpCost(op_name)) {
    return absl::AlreadyExistsError(
        absl::StrCat("RegisterOpCost: '", std::string(op_name), "' already has a built-in formula"));
  }
  Registry& registry = TheRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  auto [it, inserted] = registry.formulas.emplace(
      std::string(op_name), std::make_shared<const CustomCostFormula>(std::move(formula)));
  if (!inserted) {
    return absl::AlreadyExistsError(
        absl::StrCat("RegisterOpCost: '", std::string(op_name), "' already has a formula"));
  }
  g_any.store(true, std::memory_order_release);
  return absl::OkStatus();
}

std::optional<std::pair<int64_t, int64_t>> CustomOpCost(std::string_view op_name,
                                                        const std::vector<OpInput>& inputs) {
  if (!g_any.load(std::memory_order_acquire)) return std::nullopt;
  std::shared_ptr<const CustomCostFormula> formula;
  {
    Registry& registry = TheRegistry();
    std::lock_guard<std::mutex> lock(registry.mutex);
    auto it = registry.formulas.find(absl::string_view(op_name.data(), op_name.size()));
    if (it == registry.formulas.end()) return std::nullopt;
    formula = it->second;
  }
  // Outside the lock: a formula may take its time. A formula that throws
  // leaves the op's cost unknown rather than ending the export.
  try {
    return (*formula)(inputs);
  } catch (...) {
    return std::nullopt;
  }
}

}  // namespace analysis
}  // namespace neuronprof
