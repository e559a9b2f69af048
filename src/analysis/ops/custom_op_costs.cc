#include "src/analysis/ops/custom_op_costs.h"

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "src/analysis/ops/op_cost.h"

namespace neuronprof {
namespace analysis {
namespace {

// A formula and the lock its calls take: the operator walk runs a long
// line in parts on several threads, and a user's formula may keep state.
struct Formula {
  explicit Formula(CustomCostFormula f) : formula(std::move(f)) {}
  const CustomCostFormula formula;
  std::mutex calls;
};

struct Registry {
  std::mutex mutex;
  absl::flat_hash_map<std::string, std::shared_ptr<Formula>> formulas;
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
    return absl::InvalidArgumentError(
        absl::StrCat("RegisterOpCost: no formula for '", std::string(op_name), "'"));
  }
  if (HasBuiltinOpCost(op_name)) {
    return absl::AlreadyExistsError(absl::StrCat("RegisterOpCost: '", std::string(op_name),
                                                 "' already has a built-in formula"));
  }
  Registry& registry = TheRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  auto [it, inserted] = registry.formulas.emplace(std::string(op_name),
                                                  std::make_shared<Formula>(std::move(formula)));
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
  std::shared_ptr<Formula> formula;
  {
    Registry& registry = TheRegistry();
    std::lock_guard<std::mutex> lock(registry.mutex);
    auto it = registry.formulas.find(absl::string_view(op_name.data(), op_name.size()));
    if (it == registry.formulas.end()) return std::nullopt;
    formula = it->second;
  }
  // Outside the registry's lock: a formula may take its time, and other
  // formulas may run meanwhile; this one's calls never overlap. A formula
  // that throws leaves the op's cost unknown rather than ending the export.
  std::lock_guard<std::mutex> one_at_a_time(formula->calls);
  try {
    return formula->formula(inputs);
  } catch (...) {
    return std::nullopt;
  }
}

}  // namespace analysis
}  // namespace neuronprof
