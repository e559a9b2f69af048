// The Kineto (.pt.trace.json) export: what the PyTorch TensorBoard plugin
// and HTA rely on — categories, External id / correlation links, fwd/bwd
// flows, steps, device properties, microsecond times — and its argument
// translations; both JSON exports under int64 edge values.
#include "src/export/kineto_trace.h"

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "src/export/atomic_file.h"
#include "src/export/chrome_trace.h"
#include "src/export/gzip.h"
#include "src/export/kineto_args.h"
#include "src/export/logdir.h"
#include "src/xplane/device_details.h"
#include "src/xplane/json_reader.h"
#include "src/xplane/schema.h"
#include "src/xplane/xplane_builder.h"
#include "tests/export/hostile_space.h"
#include "tests/export/kineto_sample_space.h"
#include "tests/export/memory_space.h"
#include "tests/export/strict_json.h"
#include "tests/export/trace_text.h"
#include "tests/test_util.h"

namespace neuronprof {
namespace {

using google::protobuf::ListValue;
using google::protobuf::Struct;
using google::protobuf::Value;

// The export checked strictly and parsed by a real JSON reader (protobuf's),
// so malformed JSON fails here.
Struct Parse(const std::string& json) { return testing::ParseStrictJson(json); }

class Trace {
 public:
  explicit Trace(const tensorflow::profiler::XSpace& space)
      : json_(testing::KinetoTraceText(space)), root_(Parse(json_)) {
    REQUIRE(root_.fields().count("traceEvents") == 1);
    for (const Value& event : root_.fields().at("traceEvents").list_value().values()) {
      events_.push_back(&event.struct_value());
    }
  }

  const std::string& json() const { return json_; }
  const Struct& root() const { return root_; }
  const std::vector<const Struct*>& events() const { return events_; }

  // Complete events named `name` (any category when cat is empty).
  std::vector<const Struct*> Named(const std::string& name, const std::string& cat = "") const {
    std::vector<const Struct*> found;
    for (const Struct* e : events_) {
      if (Str(*e, "ph") == "X" && Str(*e, "name") == name &&
          (cat.empty() || Str(*e, "cat") == cat)) {
        found.push_back(e);
      }
    }
    return found;
  }
  std::vector<const Struct*> WithPhase(const std::string& ph, const std::string& cat) const {
    std::vector<const Struct*> found;
    for (const Struct* e : events_) {
      if (Str(*e, "ph") == ph && Str(*e, "cat") == cat) found.push_back(e);
    }
    return found;
  }

  static bool Has(const Struct& s, const std::string& key) { return s.fields().count(key) > 0; }
  static std::string Str(const Struct& s, const std::string& key) {
    return Has(s, key) ? s.fields().at(key).string_value() : "";
  }
  static double Num(const Struct& s, const std::string& key) {
    REQUIRE(Has(s, key));
    return s.fields().at(key).number_value();
  }
  static const Struct& Args(const Struct& event) {
    REQUIRE(Has(event, "args"));
    return event.fields().at("args").struct_value();
  }
  static double Arg(const Struct& event, const std::string& key) { return Num(Args(event), key); }
  static std::vector<double> Numbers(const Value& list) {
    std::vector<double> out;
    for (const Value& v : list.list_value().values()) out.push_back(v.number_value());
    return out;
  }

 private:
  std::string json_;
  Struct root_;
  std::vector<const Struct*> events_;
};

TEST_CASE("kineto trace: top-level keys, every event named, window end last") {
  Trace trace(testing::KinetoSampleSpace());
  CHECK(Trace::Num(trace.root(), "schemaVersion") == 1);
  CHECK(Trace::Str(trace.root(), "displayTimeUnit") == "ms");
  // Holistic Trace Analysis refuses files without distributedInfo.rank.
  const Struct& distributed = trace.root().fields().at("distributedInfo").struct_value();
  CHECK(Trace::Num(distributed, "rank") == 0);
  // ... and reads it from the raw text with the regex "rank":\s+(\d+)
  // (hta/common/trace_file.py): the first "rank" must be this one, spaced
  // as Kineto writes it.
  const size_t rank_at = trace.json().find("\"rank\":");
  REQUIRE(rank_at != std::string::npos);
  CHECK(trace.json().compare(rank_at, 10, "\"rank\": 0,") == 0);
  CHECK(rank_at > trace.json().find("\"distributedInfo\": {"));
  // Exact, not through a double: the epoch start of the capture.
  CHECK(trace.json().find("\"baseTimeNanoseconds\":1700000000000000000,") != std::string::npos);
  for (const Struct* event : trace.events()) {
    CHECK(Trace::Has(*event, "name"));  // The plugin indexes ['name'] on all.
    CHECK(Trace::Has(*event, "ph"));
    if (Trace::Str(*event, "ph") == "X") {
      CHECK(Trace::Has(*event, "cat"));
      CHECK(Trace::Has(*event, "ts"));
      CHECK(Trace::Has(*event, "dur"));
    }
  }
  const Struct& last = *trace.events().back();
  CHECK(Trace::Str(last, "name") == "Record Window End");
  CHECK(Trace::Str(last, "ph") == "i");
  CHECK(Trace::Num(last, "ts") == Approx(testing::kWindowNs / 1000.0));
}

TEST_CASE("kineto trace: ts and dur are microseconds with 3 decimals from the start") {
  tensorflow::profiler::XSpace space;
  xplane::XPlaneBuilder host(xplane::FindOrAddPlane(&space, xplane::kHostPlaneName));
  xplane::XLine* line = host.AddLine(7, "main", 2000);  // Line starts 2 us in.
  host.AddEvent(line, host.EventMetadataId("marker"), 1'234'000, 5'678'000);
  xplane::SetProfileTimes(&space, 1000000000, 1000100000);
  const std::string json = testing::KinetoTraceText(space);
  CHECK(json.find("\"ts\":3.234,\"dur\":5.678") != std::string::npos);
  CHECK(json.find("\"baseTimeNanoseconds\":1000000000,") != std::string::npos);
}

TEST_CASE("kineto trace: categories the plugin (0.4.3 and later) maps") {
  Trace trace(testing::KinetoSampleSpace());
  CHECK(trace.Named("aten::addmm", "cpu_op").size() == 3);
  CHECK(trace.Named("AddmmBackward0", "cpu_op").size() == 3);
  CHECK(trace.Named("optimizer_step", "user_annotation").size() == 3);
  CHECK(trace.Named("cudaLaunchKernel", "Runtime").size() == 9);
  CHECK(trace.Named("cudaStreamSynchronize", "Runtime").size() == 3);
  CHECK(trace.Named("ampere_sgemm_128x64_nn", "kernel").size() == 3);
  CHECK(trace.Named("Memcpy HtoD", "Memcpy").size() == 3);
  CHECK(trace.Named("Memset (Device)", "Memset").size() == 3);
  // The step marker "train" becomes ProfilerStep#<step_num>, a cpu_op, so
  // 0.4.3 (which drops other annotations) keeps it as a step.
  CHECK(trace.Named("train").empty());
  for (int step = 0; step < testing::kSampleSteps; ++step) {
    auto steps = trace.Named("ProfilerStep#" + std::to_string(step), "cpu_op");
    REQUIRE(steps.size() == 1);
    CHECK(Trace::Str(Trace::Args(*steps[0]), "Step name") == "train");
    CHECK(Trace::Num(*steps[0], "ts") ==
          Approx((testing::kFirstStepNs + step * testing::kStepNs) / 1000.0));
  }
  // Host events: host pid, numeric tids (the plugin keys trees by int(tid)).
  for (const Struct* op : trace.Named("aten::relu")) {
    CHECK(Trace::Num(*op, "tid") == testing::kMainTid);
    CHECK(Trace::Num(*op, "pid") == 0);  // No process id in the XSpace.
  }
}

TEST_CASE("kineto trace: operator args in Kineto's spellings") {
  Trace trace(testing::KinetoSampleSpace());
  auto addmm = trace.Named("aten::addmm");
  REQUIRE(addmm.size() == 3);
  const Struct& args = Trace::Args(*addmm[1]);
  const auto& dims = args.fields().at("Input Dims").list_value().values();
  REQUIRE(dims.size() == 3);
  CHECK(Trace::Numbers(dims[0]) == std::vector<double>{128});
  CHECK(Trace::Numbers(dims[1]) == std::vector<double>{64, 784});
  const auto& types = args.fields().at("Input type").list_value().values();
  REQUIRE(types.size() == 3);
  CHECK(types[0].string_value() == "float");
  CHECK(Trace::Num(args, "Sequence number") == 101);
  CHECK_FALSE(Trace::Has(args, "Fwd thread id"));
  CHECK(Trace::Str(args, "direction") == "fprop");  // Other stats are kept.
  CHECK_FALSE(Trace::Has(args, "framework"));
  auto backward = trace.Named("AddmmBackward0");
  REQUIRE(backward.size() == 3);
  CHECK(Trace::Arg(*backward[0], "Fwd thread id") == testing::kMainTid);
  CHECK(Trace::Num(*backward[0], "tid") == testing::kBackwardTid);
  // seq -1 is "no sequence number", as in PyTorch.
  CHECK_FALSE(Trace::Has(Trace::Args(*trace.Named("aten::copy_")[0]), "Sequence number"));
}

TEST_CASE("kineto trace: External ids are unique, runtime and device events link to ops") {
  Trace trace(testing::KinetoSampleSpace());
  std::map<double, const Struct*> host_by_external;
  for (const Struct* e : trace.events()) {
    const std::string cat = Trace::Str(*e, "cat");
    if (cat != "cpu_op" && cat != "user_annotation") continue;
    const double id = Trace::Arg(*e, "External id");
    CHECK(id > 0);
    CHECK(host_by_external.emplace(id, e).second);  // Unique.
  }
  std::map<double, const Struct*> runtime_by_correlation;
  for (const Struct* e : trace.events()) {
    if (Trace::Str(*e, "cat") != "Runtime") continue;
    if (Trace::Has(Trace::Args(*e), "correlation")) {
      runtime_by_correlation[Trace::Arg(*e, "correlation")] = e;
    }
  }
  auto launching_op = [&](const std::string& device_name) {
    auto device = trace.Named(device_name);
    REQUIRE(device.size() == 3);
    const Struct& event = *device[1];
    auto runtime = runtime_by_correlation.find(Trace::Arg(event, "correlation"));
    REQUIRE(runtime != runtime_by_correlation.end());
    const double external = Trace::Arg(*runtime->second, "External id");
    CHECK(Trace::Arg(event, "External id") == external);
    auto op = host_by_external.find(external);
    REQUIRE(op != host_by_external.end());
    return Trace::Str(*op->second, "name");
  };
  CHECK(launching_op("ampere_sgemm_128x64_nn") == "aten::addmm");
  CHECK(launching_op("vectorized_elementwise_kernel") == "aten::relu");
  CHECK(launching_op("Memcpy HtoD") == "aten::copy_");
  CHECK(launching_op("Memset (Device)") == "aten::zero_");
  // On the backward thread, the innermost op is the backward node.
  CHECK(launching_op("ampere_sgemm_64x64_tn") == "AddmmBackward0");
  // No operator around the sync: the enclosing marker (innermost) takes it.
  auto sync = trace.Named("cudaStreamSynchronize");
  REQUIRE(sync.size() == 3);
  auto marker = host_by_external.find(Trace::Arg(*sync[0], "External id"));
  REQUIRE(marker != host_by_external.end());
  CHECK(Trace::Str(*marker->second, "name") == "optimizer_step");
}

TEST_CASE("kineto trace: a capture of many chunks reads as one written in order") {
  // Past 8192 spans a thread's spans are formatted in chunks on threads of
  // their own: ids, links, step numbers and the window must not show it.
  // (kineto_chunks_test checks the text of the same capture under TSan.)
  constexpr int kSteps = 2000;  // 12,000 spans on the main thread: 2 chunks.
  // "eval", a step marker without a number in the main thread's second
  // chunk, is numbered by the steps before it.
  const int64_t after = testing::kEvalNs(kSteps);
  Trace trace(testing::ManyStepsSpace(kSteps));

  // External ids 1, 2, 3... in the text's order, thread after thread.
  std::vector<double> ids;
  std::map<double, const Struct*> host_by_external;
  for (const Struct* e : trace.events()) {
    const std::string cat = Trace::Str(*e, "cat");
    if (cat != "cpu_op" && cat != "user_annotation") continue;
    ids.push_back(Trace::Arg(*e, "External id"));
    host_by_external[ids.back()] = e;
  }
  REQUIRE(ids.size() == 7 * kSteps + 1);
  for (size_t i = 0; i < ids.size(); ++i) REQUIRE(ids[i] == static_cast<double>(i + 1));
  // The last step's kernel links to its addmm (kinds and ids set by the
  // chunk's thread), and every forward op to its backward node.
  auto kernels = trace.Named("ampere_sgemm_128x64_nn");
  REQUIRE(kernels.size() == kSteps);
  auto op = host_by_external.find(Trace::Arg(*kernels.back(), "External id"));
  REQUIRE(op != host_by_external.end());
  CHECK(Trace::Str(*op->second, "name") == "aten::addmm");
  CHECK(Trace::Num(*op->second, "ts") == Trace::Num(*trace.Named("aten::addmm").back(), "ts"));
  CHECK(trace.WithPhase("s", "fwdbwd").size() == kSteps);
  CHECK(trace.WithPhase("f", "forward_backward").size() == kSteps);
  CHECK(trace.Named("ProfilerStep#" + std::to_string(kSteps - 1)).size() == 1);
  CHECK(trace.Named("ProfilerStep#" + std::to_string(kSteps)).size() == 1);  // "eval"
  // The window ends after the last span, which a chunk wrote.
  const Struct* window_end = trace.events().back();
  REQUIRE(Trace::Str(*window_end, "name") == "Record Window End");
  CHECK(Trace::Num(*window_end, "ts") * 1000 >= static_cast<double>(after + 1000 - 1));
}

TEST_CASE("kineto trace: a launch outside every host event has External id 0") {
  tensorflow::profiler::XSpace space;
  xplane::XPlaneBuilder runtime(xplane::FindOrAddPlane(&space, "/host:NPU-runtime"));
  xplane::XLine* line = runtime.AddLine(55, "t", 0);
  xplane::XEvent* call = runtime.AddEvent(line, runtime.EventMetadataId("nrt_execute"), 0, 1000);
  runtime.AddStat(call, xplane::kCorrelationIdStat, int64_t{9});
  Trace trace(space);
  auto calls = trace.Named("nrt_execute", "Runtime");
  REQUIRE(calls.size() == 1);
  CHECK(Trace::Arg(*calls[0], "External id") == 0);
  CHECK(Trace::Arg(*calls[0], "correlation") == 9);
  CHECK(Trace::Num(*calls[0], "tid") == 55);
}

TEST_CASE("kineto trace: forward ops flow to their backward nodes in both categories") {
  Trace trace(testing::KinetoSampleSpace());
  std::set<double> ids_seen;
  for (const std::string cat : {"fwdbwd", "forward_backward"}) {
    auto starts = trace.WithPhase("s", cat);
    auto finishes = trace.WithPhase("f", cat);
    REQUIRE(starts.size() == 3);  // One per step: addmm -> AddmmBackward0.
    REQUIRE(finishes.size() == 3);
    auto forward = trace.Named("aten::addmm");
    auto backward = trace.Named("AddmmBackward0");
    for (size_t i = 0; i < starts.size(); ++i) {
      const double id = Trace::Num(*starts[i], "id");
      CHECK(ids_seen.insert(id).second);  // Distinct across categories too.
      auto finish = std::find_if(finishes.begin(), finishes.end(),
                                 [&](const Struct* f) { return Trace::Num(*f, "id") == id; });
      REQUIRE(finish != finishes.end());
      CHECK(Trace::Num(*starts[i], "ts") == Trace::Num(*forward[i], "ts"));
      CHECK(Trace::Num(*starts[i], "tid") == testing::kMainTid);
      CHECK(Trace::Num(**finish, "ts") == Trace::Num(*backward[i], "ts"));
      CHECK(Trace::Num(**finish, "tid") == testing::kBackwardTid);
      CHECK(Trace::Str(**finish, "bp") == "e");
    }
  }
}

TEST_CASE("kineto trace: a host line id repeated by a crafted file keeps every op") {
  // Found by fuzz_xspace_readers: the flow links pointed into the first
  // line's span vector, which the repeated line's events reallocated.
  tensorflow::profiler::XSpace space = testing::KinetoSampleSpace();
  tensorflow::profiler::XPlane* host = xplane::FindOrAddPlane(&space, xplane::kHostPlaneName);
  REQUIRE(host->lines_size() > 0);
  const int lines = host->lines_size();
  for (int i = 0; i < lines; ++i) *host->add_lines() = host->lines(i);
  const size_t once = Trace(testing::KinetoSampleSpace()).Named("aten::addmm").size();
  Trace trace(space);
  CHECK(trace.Named("aten::addmm").size() == 2 * once);
  CHECK(trace.WithPhase("s", "fwdbwd").size() == 3);  // One link per seq.
}

TEST_CASE("kineto trace: an operator's metadata under a huge id is written like any other") {
  // Found by fuzz_capture_response: the fast path's table by metadata id
  // was sized by a crafted id of 2^48 (bad_alloc); such ids take the
  // general path, whose args are the same.
  tensorflow::profiler::XSpace space = testing::KinetoSampleSpace();
  tensorflow::profiler::XPlane* host = xplane::FindOrAddPlane(&space, xplane::kHostPlaneName);
  REQUIRE(host->lines_size() > 0);
  constexpr int64_t kHugeId = int64_t{1} << 48;
  int64_t addmm_id = -1;
  for (const auto& [id, metadata] : host->event_metadata()) {
    if (metadata.name() == "aten::addmm") addmm_id = id;
  }
  REQUIRE(addmm_id >= 0);
  auto& all = *host->mutable_event_metadata();
  all[kHugeId] = all.at(addmm_id);
  all[kHugeId].set_id(kHugeId);
  all.erase(addmm_id);
  for (auto& line : *host->mutable_lines()) {
    for (auto& event : *line.mutable_events()) {
      if (event.metadata_id() == addmm_id) event.set_metadata_id(kHugeId);
    }
  }
  const Trace before(testing::KinetoSampleSpace());
  const Trace after(space);
  const auto ops = after.Named("aten::addmm");
  REQUIRE(ops.size() == before.Named("aten::addmm").size());
  for (size_t i = 0; i < ops.size(); ++i) {
    CHECK(Trace::Args(*ops[i]).DebugString() ==
          Trace::Args(*before.Named("aten::addmm")[i]).DebugString());
  }
}

TEST_CASE("kineto trace: a fwd_thread_id that is no line id links by seq when unambiguous") {
  tensorflow::profiler::XSpace space;
  testing::SampleSpaceBuilder builder(&space);
  xplane::XLine* other = builder.host().AddLine(3003, "other", 0);
  // libtorch's forwardThreadId() is its own small thread number, not the
  // OS thread id of the forward line.
  builder.Op(builder.main_line(), "aten::mul", 0, 1000, 7, "[[2]]", "Float");
  xplane::XEvent* backward = builder.Op(other, "MulBackward0", 5000, 6000, 7, "[[2]]", "Float");
  builder.host().AddStat(backward, xplane::kOpForwardThreadStat, uint64_t{1});
  builder.host().AddStat(backward, xplane::kOpDirectionStat, std::string_view("bprop"));
  // seq 9 runs forward on two threads: which one is unknown, so no link.
  builder.Op(builder.main_line(), "aten::add", 1000, 2000, 9, "[[2]]", "Float");
  builder.Op(other, "aten::add", 2000, 3000, 9, "[[2]]", "Float");
  xplane::XEvent* add_backward = builder.Op(other, "AddBackward0", 7000, 8000, 9, "[[2]]", "Float");
  builder.host().AddStat(add_backward, xplane::kOpForwardThreadStat, uint64_t{1});
  builder.Finish();
  Trace trace(space);
  auto starts = trace.WithPhase("s", "fwdbwd");
  REQUIRE(starts.size() == 1);
  CHECK(Trace::Num(*starts[0], "ts") == 0);
  auto finishes = trace.WithPhase("f", "fwdbwd");
  REQUIRE(finishes.size() == 1);
  CHECK(Trace::Num(*finishes[0], "ts") == 5);
}

TEST_CASE("kineto trace: device events and deviceProperties") {
  Trace trace(testing::KinetoSampleSpace());
  const auto& props = trace.root().fields().at("deviceProperties").list_value().values();
  REQUIRE(props.size() == 1);
  const Struct& gpu = props[0].struct_value();
  CHECK(Trace::Num(gpu, "id") == 0);
  CHECK(Trace::Str(gpu, "name") == "NVIDIA H100 80GB HBM3");
  CHECK(Trace::Num(gpu, "computeMajor") == 9);
  CHECK(Trace::Num(gpu, "computeMinor") == 0);
  CHECK(Trace::Num(gpu, "totalGlobalMem") == 85899345920.0);
  CHECK(Trace::Num(gpu, "numSms") == 132);

  auto kernels = trace.Named("ampere_sgemm_128x64_nn", "kernel");
  REQUIRE(kernels.size() == 3);
  const Struct& kernel = *kernels[0];
  CHECK(Trace::Num(kernel, "pid") == 0);
  CHECK(Trace::Str(kernel, "tid") == "stream 7");
  CHECK(Trace::Arg(kernel, "device") == 0);
  CHECK(Trace::Arg(kernel, "stream") == 7);
  const Struct& args = Trace::Args(kernel);
  CHECK(Trace::Numbers(args.fields().at("grid")) == std::vector<double>{4, 2, 1});
  CHECK(Trace::Numbers(args.fields().at("block")) == std::vector<double>{128, 1, 1});
  CHECK(Trace::Num(args, "registers per thread") == 64);
  CHECK(Trace::Num(args, "shared memory") == 16384);
  CHECK(Trace::Num(args, "est. achieved occupancy %") == 50);
  // Not in the details: blocks / SMs, as Kineto computes it.
  CHECK(Trace::Num(args, "blocks per SM") == Approx(8.0 / 132));
  // xprof-style details: regs, static + dynamic shared memory.
  const Struct& relu = Trace::Args(*trace.Named("vectorized_elementwise_kernel")[0]);
  CHECK(Trace::Num(relu, "registers per thread") == 16);
  CHECK(Trace::Num(relu, "shared memory") == 512);
  CHECK_FALSE(Trace::Has(relu, "est. achieved occupancy %"));

  auto copies = trace.Named("Memcpy HtoD", "Memcpy");
  REQUIRE(copies.size() == 3);
  CHECK(Trace::Arg(*copies[0], "bytes") == 200704);
  CHECK(Trace::Str(Trace::Args(*copies[0]), "memcpy_details") == "kind:HtoD");
  CHECK(Trace::Num(*copies[0], "dur") == Approx(150.0));

  // Metadata names the device process and its stream.
  bool process_named = false, stream_named = false;
  for (const Struct* e : trace.events()) {
    if (Trace::Str(*e, "ph") != "M") continue;
    if (Trace::Str(*e, "name") == "process_name" && Trace::Num(*e, "pid") == 0 &&
        Trace::Str(Trace::Args(*e), "name") == "/device:GPU:0") {
      process_named = true;
    }
    if (Trace::Str(*e, "name") == "thread_name" && Trace::Str(*e, "tid") == "stream 7") {
      stream_named = true;
    }
  }
  CHECK(process_named);
  CHECK(stream_named);
}

TEST_CASE("kineto trace: deviceProperties has one entry per index, gaps filled") {
  tensorflow::profiler::XSpace space;
  xplane::XPlaneBuilder gpu(xplane::FindOrAddPlane(&space, "/device:GPU:2"));
  // The stat names TSL's GPU planes (and our CUPTI collector) use.
  gpu.AddPlaneStat("gpu_device_name", std::string_view("gpu two"));
  gpu.AddPlaneStat("compute_cap_major", int64_t{8});
  gpu.AddPlaneStat("compute_cap_minor", int64_t{6});
  gpu.AddPlaneStat("memory_size", int64_t{1} << 34);
  Trace trace(space);
  const auto& props = trace.root().fields().at("deviceProperties").list_value().values();
  REQUIRE(props.size() == 3);  // The plugin indexes by position.
  CHECK(Trace::Num(props[1].struct_value(), "id") == 1);
  CHECK(Trace::Str(props[2].struct_value(), "name") == "gpu two");
  CHECK(Trace::Num(props[2].struct_value(), "computeMajor") == 8);
  CHECK(Trace::Num(props[2].struct_value(), "computeMinor") == 6);
  CHECK(Trace::Num(props[2].struct_value(), "totalGlobalMem") == 17179869184.0);
}

TEST_CASE("kineto trace: a process id recorded in the XSpace is the host pid") {
  tensorflow::profiler::XSpace space = testing::KinetoSampleSpace();
  xplane::XPlaneBuilder(xplane::FindOrAddPlane(&space, xplane::kHostPlaneName))
      .AddPlaneStat("pid", int64_t{4321});
  Trace trace(space);
  CHECK(Trace::Num(*trace.Named("aten::addmm")[0], "pid") == 4321);
  CHECK(Trace::Num(*trace.Named("cudaLaunchKernel")[0], "pid") == 4321);
  CHECK(Trace::Num(*trace.Named("ampere_sgemm_128x64_nn")[0], "pid") == 0);
}

TEST_CASE("kineto trace: unreadable stats stay visible and the JSON stays valid") {
  tensorflow::profiler::XSpace space;
  testing::SampleSpaceBuilder builder(&space);
  builder.Op(builder.main_line(), "aten::weird", 0, 1000, 3, "[[1,2],", "Float,Quux");
  builder.Finish();
  Trace trace(space);
  auto ops = trace.Named("aten::weird", "cpu_op");
  REQUIRE(ops.size() == 1);
  const Struct& args = Trace::Args(*ops[0]);
  CHECK_FALSE(Trace::Has(args, "Input Dims"));
  CHECK(Trace::Str(args, "input_dims") == "[[1,2],");
  const auto& types = args.fields().at("Input type").list_value().values();
  REQUIRE(types.size() == 2);
  CHECK(types[1].string_value() == "Quux");
}

TEST_CASE("kineto trace: strict JSON with bad UTF-8, control characters and NaN stats") {
  using testing::kBadUtf8Repaired;
  using testing::kControlChars;
  Trace trace(testing::HostileStringsSpace());
  const std::string suffix = " " + kBadUtf8Repaired + kControlChars;
  for (const auto& [name, cat] :
       std::vector<std::pair<std::string, std::string>>{{"marker", "user_annotation"},
                                                        {"aten::op", "cpu_op"},
                                                        {"cudaLaunchKernel", "Runtime"},
                                                        {"kernel", "kernel"}}) {
    INFO(name);
    const auto events = trace.Named(name + suffix, cat);
    REQUIRE(events.size() == 1);
    const Struct& args = Trace::Args(*events[0]);
    CHECK(Trace::Str(args, "text") == kBadUtf8Repaired + kControlChars);
    for (const char* key : {"nan", "inf", "minus_inf"}) {
      INFO(key);
      CHECK(args.fields().at(key).kind_case() == Value::kNullValue);
    }
    CHECK(Trace::Num(args, "label " + kBadUtf8Repaired) == 1);
  }
  // Arrays with bad bytes are not copied verbatim: they stay visible as text.
  const Struct& op = Trace::Args(*trace.Named("aten::op" + suffix)[0]);
  CHECK_FALSE(Trace::Has(op, "Input Dims"));
  CHECK(Trace::Str(op, "input_dims") == "[[1],[\"" + kBadUtf8Repaired + "\"]]");
  CHECK(Trace::Str(op, "input_values") == "[\"\xEF\xBF\xBD\"]");
  bool host_named = false;
  for (const Struct* e : trace.events()) {
    if (Trace::Str(*e, "name") == "process_name" &&
        Trace::Str(Trace::Args(*e), "name") == "host " + kBadUtf8Repaired) {
      host_named = true;
    }
  }
  CHECK(host_named);
}

TEST_CASE("kineto trace: int64 extremes in times are exact or left out and counted") {
  Trace trace(testing::ExtremeTimesSpace());
  for (const char* name : {"edge_max", "edge_min"}) {
    INFO(name);
    CHECK(trace.Named(name, "user_annotation").size() == 1);
    CHECK(trace.Named(name, "Runtime").size() == 1);
    CHECK(trace.Named(name, "kernel").size() == 1);
  }
  for (const char* name : {"overflow_offset", "overflow_end", "overflow_offset_low", "negative"}) {
    INFO(name);
    CHECK(trace.Named(name).empty());
  }
  CHECK(trace.json().find("\"ts\":9223372036854775.807,\"dur\":0.000") != std::string::npos);
  CHECK(trace.json().find("\"ts\":-9223372036854775.808,\"dur\":9223372036854.775") !=
        std::string::npos);
  const auto& warnings = trace.root().fields().at("neuronprof_warnings").list_value();
  REQUIRE(warnings.values_size() == 1);
  CHECK(warnings.values(0).string_value().find(
            "left out " + std::to_string(testing::kExtremeTimesLeftOut) + " events") !=
        std::string::npos);
  const Struct& kernel = *trace.Named("edge_max", "kernel")[0];
  // A double past int64 where an int is read is no number: the line id.
  CHECK(Trace::Arg(kernel, "stream") == 1);
  // Launch properties past int64: computed in doubles, or left out.
  CHECK(Trace::Arg(kernel, "blocks per SM") == Approx(9223372036854775807.0 * 16 / 3));
  CHECK_FALSE(Trace::Has(Trace::Args(kernel), "shared memory"));
  // Device INT64_MAX: deviceProperties stops at its cap.
  CHECK(trace.root().fields().at("deviceProperties").list_value().values_size() == 1024);
}

// Sets every time field, then every integer stat, of a training-like capture
// to int64 edge values one at a time: both JSON exports stay strict (under
// UBSan this also shows their arithmetic never overflows).
TEST_CASE("both JSON exports stay strict with int64 edges in any time or integer stat") {
  const int64_t edges[] = {testing::kMinI64,     testing::kMinI64 + 1, -1000, -1, 0, 1,
                           testing::kMaxI64 - 1, testing::kMaxI64};
  const tensorflow::profiler::XSpace sample = testing::KinetoSampleSpace();
  auto check = [](const tensorflow::profiler::XSpace& space) {
    REQUIRE(json_reader::IsStrictJson(testing::ChromeTraceText(space)));
    REQUIRE(json_reader::IsStrictJson(testing::KinetoTraceText(space)));
  };
  for (int64_t edge : edges) {
    INFO("edge " << edge);
    for (int p = 0; p < sample.planes_size(); ++p) {
      for (int l = 0; l < sample.planes(p).lines_size(); ++l) {
        INFO("plane " << sample.planes(p).name() << " line " << l);
        tensorflow::profiler::XSpace space = sample;
        space.mutable_planes(p)->mutable_lines(l)->set_timestamp_ns(edge);
        check(space);
        for (int e = 0; e < sample.planes(p).lines(l).events_size(); ++e) {
          for (bool offset : {true, false}) {
            space = sample;
            auto* event = space.mutable_planes(p)->mutable_lines(l)->mutable_events(e);
            offset ? event->set_offset_ps(edge) : event->set_duration_ps(edge);
            check(space);
          }
        }
      }
    }
    tensorflow::profiler::XSpace space = sample;
    for (auto& plane : *space.mutable_planes()) {
      auto set = [edge](tensorflow::profiler::XStat& stat) {
        if (stat.has_int64_value()) stat.set_int64_value(edge);
        if (stat.has_uint64_value()) stat.set_uint64_value(static_cast<uint64_t>(edge));
        if (stat.has_double_value()) stat.set_double_value(static_cast<double>(edge) * 1e10);
      };
      for (auto& stat : *plane.mutable_stats()) set(stat);
      for (auto& line : *plane.mutable_lines()) {
        for (auto& event : *line.mutable_events()) {
          for (auto& stat : *event.mutable_stats()) set(stat);
        }
      }
    }
    check(space);
  }
}

TEST_CASE("kineto trace: an empty XSpace still gives a file the plugin parses") {
  Trace trace(tensorflow::profiler::XSpace{});
  CHECK(trace.root().fields().at("deviceProperties").list_value().values_size() == 0);
  CHECK(Trace::Str(*trace.events().back(), "name") == "Record Window End");
}

TEST_CASE("kineto args: torch dtype names become Kineto's C++ spellings") {
  using exporter::kineto::KinetoTypeName;
  CHECK(KinetoTypeName("Float") == "float");
  CHECK(KinetoTypeName("BFloat16") == "c10::BFloat16");
  CHECK(KinetoTypeName("Half") == "c10::Half");
  CHECK(KinetoTypeName("Double") == "double");
  CHECK(KinetoTypeName("Long") == "long int");
  CHECK(KinetoTypeName("Int") == "int");
  CHECK(KinetoTypeName("Bool") == "bool");
  CHECK(KinetoTypeName("Byte") == "unsigned char");
  CHECK(KinetoTypeName("Char") == "signed char");
  CHECK(KinetoTypeName("Short") == "short int");
  CHECK(KinetoTypeName("Scalar") == "Scalar");
  const auto types = exporter::kineto::KinetoInputTypes("Float, Scalar,,Long");
  CHECK(std::vector<std::string_view>(types.begin(), types.end()) ==
        std::vector<std::string_view>{"float", "Scalar", "", "long int"});
  CHECK(exporter::kineto::KinetoInputTypes("").empty());
}

TEST_CASE("kineto args: only well-formed JSON arrays are copied verbatim") {
  const auto IsJsonArray = json_reader::IsStrictJsonArray;
  CHECK(IsJsonArray("[[64,784],[],[128,784]]"));
  CHECK(IsJsonArray(" [ \"1\", \"\", \"a\\\"b\", -2.5e3, null, true, {\"k\":[1]} ] "));
  CHECK(IsJsonArray("[]"));
  CHECK_FALSE(IsJsonArray(""));
  CHECK_FALSE(IsJsonArray("[[1,2],"));
  CHECK_FALSE(IsJsonArray("[1,]"));
  CHECK_FALSE(IsJsonArray("[1] [2]"));
  CHECK_FALSE(IsJsonArray("{\"a\":1}"));
  CHECK_FALSE(IsJsonArray("[\"unterminated]"));
  CHECK_FALSE(IsJsonArray("[01x]"));
  CHECK_FALSE(IsJsonArray(std::string(200, '[') + std::string(200, ']')));  // Too deep.
  // Strict: what Python's json (with NaN refused) and Perfetto reject.
  CHECK(IsJsonArray("[0,-0.5,1e-7,\"\\u00e9\\ud834\\udd1e\",\"\xC3\xA9\"]"));
  CHECK_FALSE(IsJsonArray("[NaN]"));
  CHECK_FALSE(IsJsonArray("[nan]"));
  CHECK_FALSE(IsJsonArray("[Infinity]"));
  CHECK_FALSE(IsJsonArray("[-inf]"));
  CHECK_FALSE(IsJsonArray("[01]"));
  CHECK_FALSE(IsJsonArray("[\"\x01\"]"));          // Raw control character.
  CHECK_FALSE(IsJsonArray("[\"\xFF\"]"));          // Not UTF-8.
  CHECK_FALSE(IsJsonArray("[\"\xED\xA0\x80\"]"));  // Encoded surrogate.
  CHECK_FALSE(IsJsonArray("[\"\\ud800\"]"));       // Unpaired surrogate escape.
  CHECK_FALSE(IsJsonArray("[\"\\udc00\\ud800\"]"));
  CHECK_FALSE(IsJsonArray("[\"\\x41\"]"));  // Not a JSON escape.
  CHECK(json_reader::IsStrictJson("{\"a\":null} "));
  CHECK_FALSE(json_reader::IsStrictJson("{\"a\":1,}"));
}

TEST_CASE("device details: kernel details in neuronprof and xprof styles") {
  using xplane::ParseKernelDetails;
  auto ours = ParseKernelDetails(
      "grid:4,2,1 block:128,1,1 registers:64 shared_memory:16384 blocks_per_sm:0.5 "
      "occupancy:0.25");
  REQUIRE(ours.grid);
  CHECK(*ours.grid == std::array<int64_t, 3>{4, 2, 1});
  CHECK(*ours.block == std::array<int64_t, 3>{128, 1, 1});
  CHECK(*ours.registers_per_thread == 64);
  CHECK(*ours.shared_memory == 16384);
  CHECK(*ours.blocks_per_sm == 0.5);
  CHECK(*ours.occupancy_pct == Approx(25.0));
  auto xprof = ParseKernelDetails(
      "regs:32 static_shared:256 dynamic_shared:1024 grid:10 block:32,8 occ_pct:37.5");
  CHECK(*xprof.registers_per_thread == 32);
  CHECK(*xprof.shared_memory == 1280);
  CHECK(*xprof.grid == std::array<int64_t, 3>{10, 1, 1});
  CHECK(*xprof.block == std::array<int64_t, 3>{32, 8, 1});
  CHECK(*xprof.occupancy_pct == Approx(37.5));
  auto junk = ParseKernelDetails("grid:a,b registers: garbage=1 :");
  CHECK_FALSE(junk.grid);
  CHECK_FALSE(junk.registers_per_thread);
}

TEST_CASE("device details: compute capability forms") {
  using xplane::ParseComputeCapability;
  CHECK(ParseComputeCapability("8.6") == std::array<int64_t, 2>{8, 6});
  CHECK(ParseComputeCapability("sm_90") == std::array<int64_t, 2>{9, 0});
  CHECK(ParseComputeCapability("75") == std::array<int64_t, 2>{7, 5});
  CHECK_FALSE(ParseComputeCapability("ampere"));
}

TEST_CASE("logdir: the PyTorch trace is written only where asked") {
  testing::TempDir dir;
  const auto space = testing::KinetoSampleSpace();
  exporter::ExportOptions options;
  options.chrome_trace = false;
  auto plain = exporter::WriteProfileFiles(space, dir.path(), "h", options);
  REQUIRE(plain.ok());
  CHECK(plain->size() == 1);  // What the capture client writes by default.

  options.pytorch_trace_dir = dir.path() + "/run7";
  auto files = exporter::WriteProfileFiles(space, dir.path(), "h", options);
  REQUIRE(files.ok());
  REQUIRE(files->size() == 2);
  CHECK(files->back() == dir.path() + "/run7/h.pt.trace.json.gz");
  auto data = exporter::ReadFile(files->back());
  REQUIRE(data.ok());
  auto json = exporter::GzipDecompress(*data);
  REQUIRE(json.ok());
  CHECK(*json == testing::KinetoTraceText(space));
}

}  // namespace
}  // namespace neuronprof

namespace neuronprof {
namespace {

TEST_CASE("kineto trace: memory events are torch.profiler's [memory] instants") {
  Trace trace(testing::MemorySpace());
  std::vector<const Struct*> memory;
  for (const Struct* event : trace.events()) {
    if (Trace::Str(*event, "name") == "[memory]") memory.push_back(event);
    // No zero-length slice is left for them.
    CHECK(Trace::Str(*event, "name") != xplane::kMemoryAllocationEvent);
    CHECK(Trace::Str(*event, "name") != xplane::kMemoryDeallocationEvent);
    CHECK(Trace::Str(*event, "name") != xplane::kMemoryUsageEvent);
  }
  REQUIRE(memory.size() == 4);
  for (const Struct* event : memory) {
    CHECK(Trace::Str(*event, "ph") == "i");
    CHECK(Trace::Str(*event, "s") == "t");
    CHECK_FALSE(Trace::Has(*event, "cat"));
  }
  const Struct& cpu_alloc = *memory[0];
  CHECK(Trace::Num(cpu_alloc, "tid") == testing::kMemoryTid);
  CHECK(Trace::Num(cpu_alloc, "ts") == Approx(11.0));
  CHECK(Trace::Arg(cpu_alloc, "Device Type") == 0);
  CHECK(Trace::Arg(cpu_alloc, "Device Id") == -1);
  CHECK(Trace::Arg(cpu_alloc, "Addr") == 0x1000);
  CHECK(Trace::Arg(cpu_alloc, "Bytes") == 4096);
  CHECK(Trace::Arg(cpu_alloc, "Total Allocated") == 4096);
  CHECK(Trace::Arg(cpu_alloc, "Total Reserved") == 0);
  CHECK(Trace::Str(Trace::Args(cpu_alloc), "allocator_name") == "cpu");  // Kept.

  const Struct& cuda_alloc = *memory[1];
  CHECK(Trace::Arg(cuda_alloc, "Device Type") == 1);
  CHECK(Trace::Arg(cuda_alloc, "Device Id") == 0);
  CHECK(Trace::Arg(cuda_alloc, "Bytes") == 1024);
  CHECK(Trace::Arg(cuda_alloc, "Total Reserved") == 2'097'152);

  const Struct& cpu_free = *memory[2];  // Frees are negative, as in torch.
  CHECK(Trace::Arg(cpu_free, "Bytes") == -4096);
  CHECK(Trace::Arg(cpu_free, "Addr") == 0x1000);
  CHECK(Trace::Arg(cpu_free, "Total Allocated") == 0);

  const Struct& hbm = *memory[3];  // A usage sample: a total, no change.
  CHECK(Trace::Num(hbm, "tid") == static_cast<double>(testing::kPoolLineId));
  CHECK(Trace::Arg(hbm, "Device Type") == exporter::kineto::kTorchPrivateUse1);
  CHECK(Trace::Arg(hbm, "Bytes") == 0);
  CHECK(Trace::Arg(hbm, "Total Allocated") == 65536);
  CHECK(Trace::Arg(hbm, "Total Reserved") == 1'048'576);
  // The plugin cannot name this device: no "Addr" for its curve to trip on.
  CHECK_FALSE(Trace::Has(Trace::Args(hbm), "Addr"));
  CHECK(Trace::Has(Trace::Args(hbm), "addr"));

  // The operator keeps its External id; memory instants take none.
  REQUIRE(trace.Named("aten::empty").size() == 1);
  CHECK(Trace::Arg(*trace.Named("aten::empty")[0], "External id") == 1);
}

TEST_CASE("kineto trace: a free of INT64_MIN bytes is written as INT64_MAX, not negated (UB)") {
  // issue 27: torch's frees are negative Bytes; -INT64_MIN overflowed.
  tensorflow::profiler::XSpace space;
  xplane::XPlaneBuilder host(xplane::FindOrAddPlane(&space, xplane::kHostPlaneName));
  xplane::XLine* main = host.AddLine(testing::kMemoryTid, "MainThread", 1'000);
  testing::AddMemoryEvent(
      host, main,
      {xplane::kMemoryDeallocationEvent, 10, "cpu", "CPU", -1, 0x1000, testing::kMinI64, 0, -1});
  const Trace trace(space);
  CHECK(trace.json().find("\"Bytes\":9223372036854775807") != std::string::npos);
}

TEST_CASE("kineto args: c10::DeviceType of a memory event") {
  using exporter::kineto::TorchDeviceType;
  CHECK(TorchDeviceType("CPU", "cpu") == 0);
  CHECK(TorchDeviceType("CUDA", "cuda:1") == 1);
  CHECK(TorchDeviceType("", "cuda:1") == 1);  // From the allocator name.
  CHECK(TorchDeviceType("", "cpu") == 0);
  CHECK(TorchDeviceType("NPU", "NPU:0/HBM") == 20);
}

}  // namespace
}  // namespace neuronprof
