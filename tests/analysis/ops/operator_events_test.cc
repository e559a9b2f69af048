// The operator walk (nesting, scope, layer, no double counting), the op
// table, the step breakdown and the annotations, on a synthetic capture.
#include "src/analysis/ops/operator_events.h"

#include <catch2/catch.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "neuronprof/trace.h"
#include "src/analysis/ops/op_table.h"
#include "src/analysis/ops/operator_annotator.h"
#include "src/analysis/ops/step_breakdown.h"
#include "src/analysis/report/summary.h"
#include "src/analysis/report/summary_sections.h"
#include "src/xplane/work_count.h"
#include "src/xplane/xplane_builder.h"
#include "src/xplane/xplane_visitor.h"
#include "tests/analysis/operator_space.h"
#include "tests/host_plane_capture.h"

namespace neuronprof {
namespace analysis {
namespace {

constexpr int64_t kUs = 1000000;  // ps per microsecond
constexpr int64_t kAddmmFlops = 2 * 64 * 128 * 784;
constexpr int64_t kMmFlops = 2 * 64 * 784 * 128;  // both backward mm's
constexpr int64_t kAddFlops = 128 * 784;
constexpr int64_t kReluFlops = 64 * 128;

const OperatorEvent& Find(const OperatorEvents& events, const std::string& name, int nth = 0) {
  for (const OperatorEvent& op : events.ops) {
    if (op.name == name && nth-- == 0) return op;
  }
  FAIL("no operator " << name);
  return events.ops.front();
}

// Every field of every op, one walk's against another's.
void CheckSameOps(const OperatorEvents& one, const OperatorEvents& two) {
  REQUIRE(two.ops.size() == one.ops.size());
  for (size_t i = 0; i < one.ops.size(); ++i) {
    const OperatorEvent& a = one.ops[i];
    const OperatorEvent& b = two.ops[i];
    INFO("op " << i << " " << a.name);
    CHECK(std::tie(a.plane, a.line, a.event, a.parent, a.name, a.direction, a.scope, a.layer) ==
          std::tie(b.plane, b.line, b.event, b.parent, b.name, b.direction, b.scope, b.layer));
    CHECK(std::tie(a.seq, a.has_seq, a.start_ps, a.duration_ps, a.self_ps) ==
          std::tie(b.seq, b.has_seq, b.start_ps, b.duration_ps, b.self_ps));
    CHECK(std::tie(a.self_flops, a.self_bytes, a.source) ==
          std::tie(b.self_flops, b.self_bytes, b.source));
    CHECK(std::tie(a.formula->known, a.formula->flops, a.formula->bytes) ==
          std::tie(b.formula->known, b.formula->flops, b.formula->bytes));
  }
}

const OpTableRow* Row(const OpTable& table, const std::string& op, const std::string& params = "") {
  for (const OpTableRow& row : table.rows) {
    if (row.op == op && (params.empty() || row.params == params)) return &row;
  }
  return nullptr;
}

TEST_CASE("operators get scope, layer, parent and self time") {
  const auto space = testing::MakeOperatorSpace(1, false);
  const OperatorEvents events = CollectOperatorEvents(space);
  REQUIRE(events.ops.size() == std::size(testing::kStepOps));
  CHECK(events.malformed_inputs == 0);

  const OperatorEvent& addmm = Find(events, "aten::addmm");
  CHECK(addmm.scope == "MLP/layer:fc1");
  CHECK(addmm.layer == "fc1");
  CHECK(events.ops[addmm.parent].name == "aten::linear");
  // linear (100 us) minus t (10 us) and addmm (89 us).
  CHECK(Find(events, "aten::linear").self_ps == 1 * kUs);
  CHECK(addmm.self_ps == 89 * kUs);

  // The backward node runs outside layer:fc1 and borrows its forward op's
  // layer through seq 10; its mm's inherit it.
  const OperatorEvent& node = Find(events, "AddmmBackward0");
  CHECK(node.scope == "loss_backward");
  CHECK(node.layer == "fc1");
  CHECK(node.self_ps == (290 - 80 - 100) * kUs);
  CHECK(Find(events, "aten::mm", 1).layer == "fc1");
  CHECK(Find(events, "aten::mm", 1).direction == "bprop");
  CHECK(Find(events, "aten::add_").scope == "optimizer_step");
  CHECK(Find(events, "aten::add_").layer.empty());
}

TEST_CASE("nested layer markers join with ':' unless a dotted module path extends the outer one") {
  // layer:MLP > layer:fc1 > op, then layer:encoder > layer:encoder.attn >
  // layer:attention_core (no dot: joined) > op, and layer:enc >
  // layer:encoder.x (shares the prefix, no dot after it: joined) > op.
  tensorflow::profiler::XSpace space;
  xplane::XPlaneBuilder host(xplane::FindOrAddPlane(&space, xplane::kHostPlaneName));
  auto* line = host.AddLine(1, "main", 0);
  auto marker = [&](const char* name, int64_t start_us, int64_t end_us) {
    host.AddEvent(line, host.EventMetadataId(name), start_us * kUs, (end_us - start_us) * kUs);
  };
  auto op = [&](int64_t start_us) {
    auto* e = host.AddEvent(line, host.EventMetadataId("aten::relu"), start_us * kUs, kUs);
    host.AddStat(e, xplane::kOpFrameworkStat, std::string_view("torch"));
  };
  marker("layer:MLP", 0, 100);
  marker("layer:fc1", 10, 90);
  op(20);
  marker("layer:encoder", 100, 200);
  marker("layer:encoder.attn", 110, 190);
  op(120);
  marker("layer:attention_core", 130, 180);
  op(140);
  marker("layer:enc", 200, 300);
  marker("layer:encoder.x", 210, 290);
  op(220);
  const OperatorEvents events = CollectOperatorEvents(space);
  REQUIRE(events.ops.size() == 4);
  CHECK(events.ops[0].layer == "MLP:fc1");
  CHECK(events.ops[1].layer == "encoder.attn");
  CHECK(events.ops[1].scope == "layer:encoder/layer:encoder.attn");
  CHECK(events.ops[2].layer == "encoder.attn:attention_core");
  CHECK(events.ops[3].layer == "enc:encoder.x");
}

TEST_CASE("composite ops do not double count: the innermost costed op carries the cost") {
  const auto space = testing::MakeOperatorSpace(1, false);
  const OperatorEvents events = CollectOperatorEvents(space);
  const OperatorEvent& linear = Find(events, "aten::linear");
  const OperatorEvent& addmm = Find(events, "aten::addmm");
  // Both have a formula for the same GEMM...
  CHECK(linear.formula->known);
  CHECK(linear.formula->flops == kAddmmFlops);
  // ...but only addmm's counts.
  CHECK(linear.source == CostSource::kInChildren);
  CHECK(linear.self_flops == 0);
  CHECK(addmm.source == CostSource::kOwn);
  CHECK(addmm.self_flops == kAddmmFlops);
  CHECK(Find(events, "aten::t").source == CostSource::kOwn);  // a view: known 0
  CHECK(Find(events, "AddmmBackward0").source == CostSource::kInChildren);
  CHECK(Find(events, "aten::foo_unknown").source == CostSource::kUnknown);

  int64_t total = 0;
  for (const OperatorEvent& op : events.ops) total += op.self_flops;
  CHECK(total == kAddmmFlops + kReluFlops + 2 * kMmFlops + kAddFlops);
}

TEST_CASE("a composite op whose children are not costed keeps its own formula") {
  // aten::linear with only an unknown child: the linear's GEMM counts.
  tensorflow::profiler::XSpace space;
  xplane::XPlaneBuilder host(xplane::FindOrAddPlane(&space, xplane::kHostPlaneName));
  auto* line = host.AddLine(1, "main", 0);
  auto* linear = host.AddEvent(line, host.EventMetadataId("aten::linear"), 0, 100);
  host.AddStat(linear, xplane::kOpFrameworkStat, std::string_view("torch"));
  host.AddStat(linear, xplane::kOpInputDimsStat, std::string_view("[[2,3],[4,3],[]]"));
  host.AddStat(linear, xplane::kOpInputTypesStat, std::string_view("Float,Float,"));
  auto* child = host.AddEvent(line, host.EventMetadataId("aten::mystery"), 10, 50);
  host.AddStat(child, xplane::kOpFrameworkStat, std::string_view("torch"));
  auto* node = host.AddEvent(line, host.EventMetadataId("TBackward0"), 200, 10);
  host.AddStat(node, xplane::kOpFrameworkStat, std::string_view("torch"));
  const OperatorEvents events = CollectOperatorEvents(space);
  REQUIRE(events.ops.size() == 3);
  CHECK(events.ops[0].source == CostSource::kOwn);
  CHECK(events.ops[0].self_flops == 2 * 4 * 2 * 3);
  CHECK(events.ops[1].source == CostSource::kUnknown);
  // An autograd node with no recorded children: its work is not visible.
  CHECK(events.ops[2].source == CostSource::kUnknown);
}

// Adds a torch op event with shapes to `line`.
tensorflow::profiler::XEvent* AddOp(xplane::XPlaneBuilder& host, tensorflow::profiler::XLine* line,
                                    const char* name, int64_t start, int64_t duration,
                                    const char* dims, const char* types, const char* values) {
  auto* e = host.AddEvent(line, host.EventMetadataId(name), start, duration);
  host.AddStat(e, xplane::kOpFrameworkStat, std::string_view("torch"));
  host.AddStat(e, xplane::kOpInputDimsStat, std::string_view(dims));
  host.AddStat(e, xplane::kOpInputTypesStat, std::string_view(types));
  host.AddStat(e, xplane::kOpInputValuesStat, std::string_view(values));
  return e;
}

TEST_CASE("an op that owns its FLOPs also owns the bytes of the copies nested in it") {
  // addmm broadcasting its bias with a nested copy_, and a conv whose
  // backend op has no formula but runs a copy_: neither loses its cost.
  tensorflow::profiler::XSpace space;
  xplane::XPlaneBuilder host(xplane::FindOrAddPlane(&space, xplane::kHostPlaneName));
  auto* line = host.AddLine(1, "main", 0);
  AddOp(host, line, "aten::addmm", 0, 100, "[[128],[64,784],[784,128],[],[]]",
        "Float,Float,Float,Scalar,Scalar", R"(["","","","1","1"])");
  AddOp(host, line, "aten::copy_", 10, 5, "[[64,128],[64,128],[]]", "Float,Float,Scalar",
        R"(["","","false"])");
  AddOp(host, line, "aten::conv2d", 200, 100, "[[8,3,32,32],[16,3,3,3],[],[],[],[],[]]",
        "Float,Float,,,,,", R"(["","","None","[1, 1]","[1, 1]","[1, 1]","1"])");
  AddOp(host, line, "aten::_slow_conv2d_forward", 210, 80, "[[8,3,32,32],[16,3,3,3]]",
        "Float,Float", R"(["",""])");
  AddOp(host, line, "aten::copy_", 220, 10, "[[8,3,32,32],[8,3,32,32],[]]", "Float,Float,Scalar",
        R"(["","","false"])");
  const OperatorEvents events = CollectOperatorEvents(space);
  REQUIRE(events.ops.size() == 5);
  const OperatorEvent& addmm = events.ops[0];
  CHECK(addmm.source == CostSource::kOwn);
  CHECK(addmm.self_flops == kAddmmFlops);
  CHECK(addmm.self_bytes == 634880);
  CHECK(events.ops[1].self_bytes == 0);  // inside addmm
  const OperatorEvent& conv = events.ops[2];
  CHECK(conv.source == CostSource::kOwn);
  CHECK(conv.self_flops == 7077888);  // 2*8*16*32*32*3*3*3, see op_cost_test
  CHECK(conv.self_bytes == 624320);
  CHECK(events.ops[3].self_flops == 0);  // the conv's FLOPs are counted once, above
  CHECK(events.ops[4].self_bytes == 0);
  int64_t flops = 0, bytes = 0;
  for (const OperatorEvent& op : events.ops) {
    flops += op.self_flops;
    bytes += op.self_bytes;
  }
  CHECK(flops == kAddmmFlops + 7077888);
  CHECK(bytes == 634880 + 624320);
}

TEST_CASE("the operator walk skips memory events without visiting them, and keeps nesting") {
  // A kOperator capture is about half memory events: the walk tells them
  // by their metadata and spends no visitor on them.
  tensorflow::profiler::XSpace space;
  xplane::XPlaneBuilder host(xplane::FindOrAddPlane(&space, xplane::kHostPlaneName));
  auto* line = host.AddLine(1, "main", 0);
  constexpr int kOps = 100, kMemoryPerOp = 4;
  for (int i = 0; i < kOps; ++i) {
    AddOp(host, line, "aten::mm", i * 100, 50, "[[2,3],[3,4]]", "Float,Float", R"(["",""])");
    for (int m = 0; m < kMemoryPerOp; ++m) {
      host.AddEvent(line, host.EventMetadataId(xplane::kMemoryAllocationEvent), i * 100 + m, 0);
    }
  }
  xplane::ResetWorkCount();
  const OperatorEvents events = CollectOperatorEvents(space);
  const uint64_t work = xplane::WorkCount();
  REQUIRE(events.ops.size() == kOps);
  CHECK(events.ops[kOps - 1].parent == -1);  // Instants end nothing, open nothing.
  // One visitor per op; none per memory event (kOps * kMemoryPerOp more).
  CHECK(work < uint64_t{kOps} * 2);
}

TEST_CASE("malformed input stats make the op unknown and are counted") {
  tensorflow::profiler::XSpace space;
  xplane::XPlaneBuilder host(xplane::FindOrAddPlane(&space, xplane::kHostPlaneName));
  auto* line = host.AddLine(1, "main", 0);
  auto* op = host.AddEvent(line, host.EventMetadataId("aten::mm"), 0, 100);
  host.AddStat(op, xplane::kOpFrameworkStat, std::string_view("torch"));
  host.AddStat(op, xplane::kOpInputDimsStat, std::string_view("[[2,3],[3"));
  host.AddStat(op, xplane::kOpInputTypesStat, std::string_view("Float,Float"));
  const OperatorEvents events = CollectOperatorEvents(space);
  REQUIRE(events.ops.size() == 1);
  CHECK(events.ops[0].source == CostSource::kUnknown);
  CHECK(events.malformed_inputs == 1);
  CHECK(events.first_input_error.find("aten::mm: operator stat input_dims") == 0);
  const std::string text = FormatSummaryText(Summarize(space), 10);
  CHECK(text.find("1 operator events had malformed input stats") != std::string::npos);
}

TEST_CASE("a line walked in two runs on two threads gives what one walk gives") {
  // Steps enclose everything, so the walk may cut between two steps (not
  // at the middle of the line's 95 events: that is in step 3's MLP marker,
  // which its ops' scopes would lose); memory events inside a step and
  // after the last never open; a malformed op in the last step is the
  // first error.
  auto space = testing::MakeOperatorSpace(6, false);
  xplane::XPlaneBuilder host(space.mutable_planes(0));
  auto* line = space.mutable_planes(0)->mutable_lines(0);
  auto add_last = [&](const char* name, int64_t start_us, int64_t duration_us) {
    auto* e = host.AddEvent(line, host.EventMetadataId(name), start_us * kUs, duration_us * kUs);
    return e;
  };
  add_last(xplane::kMemoryAllocationEvent, 5 * testing::kStepUs + 50, 0);
  auto* bad = add_last("aten::mm", 5 * testing::kStepUs + 950, 10);
  host.AddStat(bad, xplane::kOpFrameworkStat, std::string_view("torch"));
  host.AddStat(bad, xplane::kOpInputDimsStat, std::string_view("[[2,3],[3"));
  host.AddStat(bad, xplane::kOpInputTypesStat, std::string_view("Float,Float"));
  for (int i = 0; i < 3; ++i) add_last(xplane::kMemoryAllocationEvent, 6 * testing::kStepUs, 0);
  REQUIRE(line->events_size() == 95);

  const OperatorEvents one = CollectOperatorEvents(space, SIZE_MAX);
  const OperatorEvents two = CollectOperatorEvents(space, 2);
  REQUIRE(one.ops.size() == 6 * std::size(testing::kStepOps) + 1);
  CheckSameOps(one, two);
  CHECK(two.malformed_inputs == 1);
  CHECK(two.first_input_error == one.first_input_error);
  CHECK(two.first_input_error.find("aten::mm: ") == 0);
  // Inside the last step: its scope and layer came from markers in it.
  CHECK(two.ops.back().scope == one.ops.back().scope);
  CHECK(Find(two, "aten::addmm", 5).scope == "MLP/layer:fc1");
}

TEST_CASE("recorded operators, told by their signature's metadata, walk in two runs as in one") {
  // As the libtorch collector records them: the framework stat goes on
  // the signature's metadata, not on the event. Markers between them are
  // no operators; the second run's ops go after the first's.
  auto space = testing::CaptureHostPlane([] {
    for (int64_t i = 0; i < 40; ++i) {
      ScopedTrace step("step", {{"i", i}});
      for (const char* name : {"aten::linear", "aten::relu"}) {
        ScopedTrace op(name, {{xplane::kOpFrameworkStat, "torch"},
                              {xplane::kOpSequenceStat, i},
                              {xplane::kOpInputDimsStat, "[[2,3],[3,4]]"}});
        if (i % 3 == 0) ScopedTrace marker("between");
      }
    }
  });
  const xplane::PlaneVisitor plane(space.planes(0));
  const xplane::EventVisitor linear = plane.Line(0).Event(1);
  REQUIRE(linear.Name() == "aten::linear");
  for (const auto& stat : linear.raw().stats()) {
    REQUIRE(stat.metadata_id() != plane.StatId(xplane::kOpFrameworkStat));
  }
  const OperatorEvents one = CollectOperatorEvents(space, SIZE_MAX);
  const OperatorEvents two = CollectOperatorEvents(space, 2);
  REQUIRE(one.ops.size() == 80);
  CheckSameOps(one, two);
}

TEST_CASE("the op table aggregates calls, times and self costs per (layer, dir, op, params)") {
  const auto space = testing::MakeOperatorSpace(3, false);
  const OpTable table = BuildOpTable(CollectOperatorEvents(space));
  CHECK(table.calls == 3 * static_cast<int64_t>(std::size(testing::kStepOps)));
  CHECK(table.unknown_calls == 3);  // foo_unknown once per step
  CHECK(table.total_flops == 3 * (kAddmmFlops + kReluFlops + 2 * kMmFlops + kAddFlops));

  const OpTableRow* addmm = Row(table, "aten::addmm");
  REQUIRE(addmm);
  CHECK(addmm->layer == "fc1");
  CHECK(addmm->direction == "fprop");
  CHECK(addmm->params == "M=64,N=128,K=784,Float");
  CHECK(addmm->calls == 3);
  CHECK(addmm->total_ps == 3 * 89 * kUs);
  CHECK(addmm->flops == 3 * kAddmmFlops);
  CHECK(addmm->own_calls == 3);
  // 12.845 MFLOP per 89 us.
  CHECK(addmm->FlopsPerSecond() == Approx(kAddmmFlops / 89e-6));

  // The two backward mm's differ in params: two rows.
  const OpTableRow* mm1 = Row(table, "aten::mm", "M=64,N=784,K=128,Float");
  const OpTableRow* mm2 = Row(table, "aten::mm", "M=128,N=784,K=64,Float");
  REQUIRE(mm1);
  REQUIRE(mm2);
  CHECK(mm1->direction == "bprop");
  CHECK(mm1->total_ps == 3 * 80 * kUs);
  CHECK(mm2->total_ps == 3 * 100 * kUs);

  const OpTableRow* linear = Row(table, "aten::linear");
  REQUIRE(linear);
  CHECK(linear->in_children_calls == 3);
  CHECK(linear->flops == 0);
  const OpTableRow* unknown = Row(table, "aten::foo_unknown");
  REQUIRE(unknown);
  CHECK(unknown->unknown_calls == 3);

  // Sorted by total time: AddmmBackward0 (290 us) first, linear (100) before addmm (89).
  CHECK(table.rows.front().op == "AddmmBackward0");
  for (size_t i = 1; i < table.rows.size(); ++i) {
    CHECK(table.rows[i - 1].total_ps >= table.rows[i].total_ps);
  }

  // Time shares: self time per op name, summing to 100%.
  double percent = 0;
  int64_t self = 0;
  for (const OpShare& s : table.shares) {
    percent += s.percent;
    self += s.self_ps;
  }
  CHECK(percent == Approx(100.0));
  CHECK(self == table.total_self_ps);
  CHECK(table.shares.front().op == "aten::mm");  // 180 us of self time per step
  CHECK(table.shares.front().calls == 6);
}

TEST_CASE("the step breakdown adds up to the step time") {
  const auto space = testing::MakeOperatorSpace(2, true);
  const auto steps = BuildStepBreakdown(space, CollectOperatorEvents(space));
  REQUIRE(steps.size() == 2);
  for (const StepBreakdown& s : steps) {
    CHECK(s.duration_ps == 1000 * kUs);
    // fprop ops: linear 100 + relu 30 + foo 50; the SGD update add_ 40.
    CHECK(s.forward_ps == 180 * kUs);
    CHECK(s.optimizer_ps == 40 * kUs);
    CHECK(s.loss_ps == 0);
    CHECK(s.backward_ps == 290 * kUs);  // AddmmBackward0
    CHECK(s.other_ops_ps == 10 * kUs);  // zero_ has no direction
    // MLP 390 - 180 in ops, loss_backward 400 - 290, optimizer_step 100 - 50.
    CHECK(s.markers_ps == 370 * kUs);
    CHECK(s.idle_ps == 110 * kUs);
    CHECK(s.forward_ps + s.optimizer_ps + s.backward_ps + s.other_ops_ps + s.markers_ps +
              s.idle_ps ==
          s.duration_ps);
    CHECK(s.has_device);
    CHECK(s.device_busy_ps == 80 * kUs);
    CHECK(s.device_kind_ps.at("kernel") == 60 * kUs);
    CHECK(s.device_kind_ps.at("memcpy") == 20 * kUs);
  }
  CHECK(steps[0].name == "train 0");
  CHECK(steps[1].name == "train 1");
}

TEST_CASE("annotation adds scope, layer, tf_op and self costs, and twice changes nothing") {
  auto space = testing::MakeOperatorSpace(1, false);
  AnnotateOperatorEvents(&space);
  const auto once = space.SerializeAsString();
  AnnotateOperatorEvents(&space);
  CHECK(space.SerializeAsString() == once);

  const xplane::PlaneVisitor plane(space.planes(0));
  const OperatorEvents events = CollectOperatorEvents(space);
  auto text = [&](const OperatorEvent& op, const char* stat) {
    const auto value = plane.Line(op.line).Event(op.event).StrStat(plane.StatId(stat));
    return std::string(value.value_or("<absent>"));
  };
  auto has_int = [&](const OperatorEvent& op, const char* stat, int64_t* value) {
    const auto found = plane.Line(op.line).Event(op.event).IntStat(plane.StatId(stat));
    if (found) *value = *found;
    return found.has_value();
  };
  const OperatorEvent& addmm = Find(events, "aten::addmm");
  CHECK(text(addmm, xplane::kTfOpStat) == "MLP/layer_fc1/aten__addmm:aten__addmm");
  CHECK(text(addmm, xplane::kOpScopeStat) == "MLP/layer:fc1");
  CHECK(text(addmm, xplane::kOpLayerStat) == "fc1");
  int64_t flops = 0, bytes = 0;
  CHECK(has_int(addmm, xplane::kFlopsStat, &flops));
  CHECK(flops == kAddmmFlops);
  CHECK(has_int(addmm, xplane::kBytesAccessedStat, &bytes));
  CHECK(bytes == 634880);
  CHECK(has_int(Find(events, "aten::linear"), xplane::kFlopsStat, &flops));
  CHECK(flops == 0);  // counted in addmm
  CHECK_FALSE(has_int(Find(events, "aten::foo_unknown"), xplane::kFlopsStat, &flops));
  CHECK(text(Find(events, "AddmmBackward0"), xplane::kTfOpStat) ==
        "loss_backward/AddmmBackward0:AddmmBackward0");
  // Each op gets its own scope, not the one of the op before it.
  CHECK(text(Find(events, "AddmmBackward0"), xplane::kOpScopeStat) == "loss_backward");
  CHECK(TfOpValue("", "autograd::engine::evaluate_function: AddmmBackward0") ==
        "autograd__engine__evaluate_function__addmmbackward0:"
        "autograd__engine__evaluate_function__addmmbackward0");
  CHECK(TfOpValue("train loop/a:b", "aten::mm") == "train_loop/a_b/aten__mm:aten__mm");
}

TEST_CASE("annotation gives one op name in two scopes the tf_op of each scope") {
  tensorflow::profiler::XSpace space;
  xplane::XPlaneBuilder host(xplane::FindOrAddPlane(&space, xplane::kHostPlaneName));
  auto* line = host.AddLine(1, "main", 0);
  auto add_op = [&](int64_t start_us) {
    auto* op = host.AddEvent(line, host.EventMetadataId("aten::relu"), start_us * 1000000, 1000000);
    host.AddStat(op, xplane::kOpFrameworkStat, std::string_view("torch"));
  };
  host.AddEvent(line, host.EventMetadataId("enc"), 0, 10 * 1000000);
  add_op(1);
  host.AddEvent(line, host.EventMetadataId("dec"), 20 * 1000000, 10 * 1000000);
  add_op(21);
  add_op(40);  // no scope
  AnnotateOperatorEvents(&space);

  const xplane::PlaneVisitor plane(space.planes(0));
  std::vector<std::string> tf_ops;
  plane.ForEachEvent([&](const xplane::EventVisitor& event) {
    if (auto value = event.StrStatNamed(xplane::kTfOpStat)) tf_ops.emplace_back(*value);
  });
  CHECK(tf_ops == std::vector<std::string>{"enc/aten__relu:aten__relu", "dec/aten__relu:aten__relu",
                                           "aten__relu:aten__relu"});
}

TEST_CASE("annotation leaves a scoped op whose metadata is not in its plane on its own id") {
  // A crafted file: the event names metadata the plane does not hold.
  tensorflow::profiler::XSpace space;
  xplane::XPlaneBuilder host(xplane::FindOrAddPlane(&space, xplane::kHostPlaneName));
  auto* line = host.AddLine(1, "main", 0);
  host.AddEvent(line, host.EventMetadataId("enc"), 0, 10 * 1000000);
  auto* op = host.AddEvent(line, 999, 1000000, 1000000);
  host.AddStat(op, xplane::kOpFrameworkStat, std::string_view("torch"));
  AnnotateOperatorEvents(&space);

  const xplane::PlaneVisitor plane(space.planes(0));
  const xplane::EventVisitor annotated = plane.Line(0).Event(1);
  CHECK(annotated.MetadataId() == 999);
  CHECK(annotated.StrStatNamed(xplane::kTfOpStat).has_value());
}

TEST_CASE("the text summary and the CSV show the table") {
  const auto space = testing::MakeOperatorSpace(2, false);
  const Summary summary = Summarize(space);
  const std::string text = FormatSummaryText(summary, 3);
  CHECK(text.find("AddmmBackward0") != std::string::npos);
  CHECK(text.find("more rows") != std::string::npos);
  CHECK(text.find("Time share by framework op") != std::string::npos);
  CHECK(text.find("train 1") != std::string::npos);
  CHECK(FormatSummaryText(summary, 1).find("1 longest of 2 steps shown") != std::string::npos);
  const std::string csv = FormatOpTableCsv(summary.table);
  CHECK(csv.rfind("layer,direction,op,params,calls,total_us,self_us,flops,bytes,", 0) == 0);
  CHECK(csv.find("fc1,fprop,aten::addmm,\"M=64,N=128,K=784,Float\",2,178.000,178.000,25690112,"
                 "1269760,") != std::string::npos);
  CHECK(csv.find(",aten::foo_unknown,\"T=(64,128),Float\",2,100.000,100.000,,,,unknown,2") !=
        std::string::npos);
}

}  // namespace
}  // namespace analysis
}  // namespace neuronprof
