// Custom FLOP/byte formulas (neuronprof/op_costs.h) by hand arithmetic, on
// the synthetic step's aten::foo_unknown (one Float [64,128] input), which
// has no built-in formula. Its own binary: the registry is process-wide.
#include <atomic>
#include <catch2/catch.hpp>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "neuronprof/op_costs.h"
#include "src/analysis/ops/op_table.h"
#include "src/analysis/ops/operator_annotator.h"
#include "src/analysis/ops/operator_events.h"
#include "src/xplane/schema.h"
#include "src/xplane/xplane_builder.h"
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
  constexpr int64_t kFlops = 3 * kElements;      // 24576
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

TEST_CASE("one formula's calls never overlap, though the walk runs on several threads") {
  std::map<int64_t, int64_t> memo;  // a formula's own state, with no lock
  std::atomic<int> in_flight{0}, most_in_flight{0};
  std::mutex threads_mutex;
  std::set<std::thread::id> threads;
  REQUIRE(RegisterOpCost("aten::foo_memo", [&](const std::vector<OpCostInput>& in) {
            const int now = ++in_flight;
            for (int seen = most_in_flight.load(); now > seen;) {
              most_in_flight.compare_exchange_weak(seen, now);
            }
            {
              std::lock_guard<std::mutex> lock(threads_mutex);
              threads.insert(std::this_thread::get_id());
            }
            int64_t& flops = memo[in.at(0).Elements()];  // unsafe if calls overlapped
            if (flops == 0) flops = 3 * in.at(0).Elements();
            --in_flight;
            return OpCostEstimate{flops, 0};
          }).ok());
  // One line of many such ops, walked in parts of 64 on threads of their own.
  tensorflow::profiler::XSpace space;
  xplane::XPlaneBuilder host(xplane::FindOrAddPlane(&space, xplane::kHostPlaneName));
  auto* line = host.AddLine(1, "main", 0);
  const int64_t op = host.EventMetadataId("aten::foo_memo");
  for (int i = 0; i < 2000; ++i) {
    auto* event = host.AddEvent(line, op, int64_t{i} * 1000, 500);
    host.AddStat(event, xplane::kOpFrameworkStat, std::string_view("torch"));
    host.AddStat(event, xplane::kOpInputDimsStat, std::string_view("[[64,128]]"));
    host.AddStat(event, xplane::kOpInputTypesStat, std::string_view("Float"));
  }
  const OperatorEvents events = CollectOperatorEvents(space, 64);
  REQUIRE(events.ops.size() == 2000);
  CHECK(events.ops[1999].self_flops == 3 * 64 * 128);
  CHECK(most_in_flight.load() == 1);
  INFO("threads that called the formula: " << threads.size());
  CHECK(threads.size() >= 2);  // the walk did run in parts: the rule is needed
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
