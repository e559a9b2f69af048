// Custom FLOP/byte formulas (neuronprof/op_costs.h) by hand arithmetic, on
// the synthetic step's aten::foo_unknown (one Float [64,128] input), which
// has no built-in formula. Its own binary: the registry is process-wide.
#include <catch2/catch.hpp>
#include <string>

#include "neuronprof/op_costs.h"
#include "src/analysis/ops/op_table.h"
#include "src/analysis/ops/operator_annotator.h"
#include "src/analysis/ops/operator_events.h"
#include "src/xplane/schema.h"
#include "src/xplane/xplane_visitor.h"
#include "tests/analysis/operator_space.h"

namespace neuronprof {
namespace analysis {
namespace {

const OperatorEvent& Only(const OperatorEvents& events, std::string_view name) {
  const OperatorEvent* found = nullptr;
  for (const OperatorEvent& op : events.ops) {
    if (op.name == name) {
      REQUIRE(found == nullptr);
      found = &op;
    }
  }
  REQUIRE(found != nullptr);
  return *found;
}

TEST_CASE("a registered formula costs a custom op in the table, the file and a later reader") {
  const auto before = testing::MakeOperatorSpace(1, false);  // events view into it
  const auto unknown = CollectOperatorEvents(before);
  CHECK(Only(unknown, "aten::foo_unknown").source == CostSource::kUnknown);

  REQUIRE(RegisterOpCost("aten::foo_unknown", [](const std::vector<OpCostInput>& in) {
            // 3 FLOPs per element; read and write each element once.
            const OpCostInput& x = in.at(0);
            return OpCostEstimate{3 * x.Elements(), 2 * x.Elements() * x.element_bytes};
          }).ok());
  constexpr int64_t kElements = 64 * 128;
  constexpr int64_t kFlops = 3 * kElements;     // 24576
  constexpr int64_t kBytes = 2 * kElements * 4;  // 65536 (Float)

  auto space = testing::MakeOperatorSpace(1, false);
  const OperatorEvents events = CollectOperatorEvents(space);
  const OperatorEvent& foo = Only(events, "aten::foo_unknown");
  CHECK(foo.source == CostSource::kOwn);
  CHECK(foo.self_flops == kFlops);
  CHECK(foo.self_bytes == kBytes);
  const OpTable table = BuildOpTable(events);
  bool row_found = false;
  for (const OpTableRow& row : table.rows) {
    if (row.op != "aten::foo_unknown") continue;
    row_found = true;
    CHECK(row.flops == kFlops);
    CHECK(row.unknown_calls == 0);
  }
  CHECK(row_found);

  // The capture's stats carry it; a reader without the registration (the
  // CLI on the file) takes the cost from them: the op renamed here has no
  // formula in this process.
  AnnotateOperatorEvents(&space);
  auto* metadata = space.mutable_planes(0)->mutable_event_metadata();
  for (auto& [id, m] : *metadata) {
    if (m.name() == "aten::foo_unknown") m.set_name("myops::elsewhere");
  }
  const OperatorEvents reread = CollectOperatorEvents(space);
  const OperatorEvent& read = Only(reread, "myops::elsewhere");
  CHECK(read.source == CostSource::kOwn);
  CHECK(read.self_flops == kFlops);
  CHECK(read.self_bytes == kBytes);
}

TEST_CASE("RegisterOpCost refuses empty names and formulas and a second formula") {
  auto formula = [](const std::vector<OpCostInput>&) { return OpCostEstimate{1, 1}; };
  CHECK(RegisterOpCost("", formula).code() == absl::StatusCode::kInvalidArgument);
  CHECK(RegisterOpCost("myops::x", nullptr).code() == absl::StatusCode::kInvalidArgument);
  const absl::Status builtin = RegisterOpCost("aten::addmm", formula);
  CHECK(builtin.code() == absl::StatusCode::kAlreadyExists);
  CHECK(builtin.message() == "RegisterOpCost: 'aten::addmm' already has a built-in formula");
  REQUIRE(RegisterOpCost("myops::x", formula).ok());
  CHECK(RegisterOpCost("myops::x", formula).code() == absl::StatusCode::kAlreadyExists);
}

}  // namespace
}  // namespace analysis
}  // namespace neuronprof
