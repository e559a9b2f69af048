// The libtorch operator collector end to end: EnableTorchOperators, a
// kOperator Profiler, real libtorch ops, and the xplane.pb it writes.
#include <ATen/record_function.h>
#include <torch/torch.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "neuronprof/capture.h"
#include "neuronprof/neuronprof.h"
#include "neuronprof/server.h"
#include "neuronprof/torch.h"
#include "src/session/mapped_arena.h"
#include "src/xplane/schema.h"
#include "tests/collectors/torch/torch_capture.h"
#include "tests/test_util.h"

namespace neuronprof {
namespace {

using tensorflow::profiler::XSpace;
using testing::CaptureOperators;
using testing::CaptureOps;
using testing::HostEvents;
using testing::Inside;
using testing::Named;
using testing::Op;
using testing::OperatorCapture;

TEST_CASE("a linear layer's forward records aten::addmm with its shapes") {
  torch::manual_seed(0);
  torch::nn::Linear fc(10, 256);
  torch::Tensor x = torch::randn({64, 10});
  const std::vector<Op> ops = CaptureOps([&] {
    ScopedTrace t("forward");
    fc->forward(x);
  });
  const std::vector<Op> addmm = Named(ops, "aten::addmm");
  REQUIRE(addmm.size() == 1);
  CHECK(addmm[0].stat("framework") == "torch");
  CHECK(addmm[0].stat("direction") == "fprop");
  // addmm(bias, input, weight^T, beta, alpha)
  CHECK(addmm[0].stat("input_dims") == "[[256],[64,10],[10,256],[],[]]");
  CHECK(addmm[0].stat("input_types") == "Float,Float,Float,Scalar,Scalar");
  CHECK(addmm[0].stat("input_values") == R"(["","","","1","1"])");
  CHECK(addmm[0].has("seq"));
  // Costs added when the capture ends: 2*M*N*K for the product (M=64 rows,
  // K=10 inputs, N=256 outputs); scope = the enclosing marker.
  CHECK(addmm[0].stat("flops") == std::to_string(2 * 64 * 10 * 256));
  CHECK(addmm[0].stat("scope") == "forward");
  CHECK(addmm[0].has("tf_op"));
  // Nested under the user's marker on the same thread.
  const std::vector<Op> forward = Named(ops, "forward");
  REQUIRE(forward.size() == 1);
  CHECK(Inside(addmm[0], forward[0]));
}

TEST_CASE("the MLP's ops match what the code runs, forward and backward") {
  torch::manual_seed(0);
  torch::nn::Sequential mlp(torch::nn::Linear(10, 32), torch::nn::ReLU(), torch::nn::Linear(32, 32),
                            torch::nn::ReLU(), torch::nn::Linear(32, 2));
  torch::Tensor x = torch::randn({8, 10});
  torch::Tensor label = torch::randint(0, 2, {8}, torch::kLong);
  const std::vector<Op> ops = CaptureOps([&] {
    torch::Tensor loss = torch::nll_loss(torch::log_softmax(mlp->forward(x), 1), label);
    loss.backward();
  });

  const std::vector<Op> addmm = Named(ops, "aten::addmm");
  REQUIRE(addmm.size() == 3);
  CHECK(addmm[0].stat("input_dims") == "[[32],[8,10],[10,32],[],[]]");
  CHECK(addmm[1].stat("input_dims") == "[[32],[8,32],[32,32],[],[]]");
  CHECK(addmm[2].stat("input_dims") == "[[2],[8,32],[32,2],[],[]]");
  CHECK(Named(ops, "aten::relu").size() == 2);
  CHECK(Named(ops, "aten::log_softmax").size() == 1);
  CHECK(Named(ops, "aten::nll_loss_forward").size() == 1);

  // One backward node per forward addmm, marked bprop and carrying the
  // forward op's sequence number.
  const std::vector<Op> backward = Named(ops, "AddmmBackward0");
  REQUIRE(backward.size() == 3);
  std::vector<std::string> forward_seqs, backward_seqs;
  for (const Op& op : addmm) {
    CHECK(op.stat("direction") == "fprop");
    forward_seqs.push_back(op.stat("seq"));
  }
  for (const Op& op : backward) {
    CHECK(op.stat("direction") == "bprop");
    CHECK(op.has("fwd_thread_id"));
    backward_seqs.push_back(op.stat("seq"));
  }
  std::sort(forward_seqs.begin(), forward_seqs.end());
  std::sort(backward_seqs.begin(), backward_seqs.end());
  CHECK(forward_seqs == backward_seqs);
  CHECK(Named(ops, "ReluBackward0").size() == 2);

  // Ops the autograd engine runs are bprop: each linear's backward runs two
  // matrix products (input and weight gradients).
  const std::vector<Op> mm = Named(ops, "aten::mm");
  CHECK(mm.size() >= 5);  // The first layer's input gradient is not needed.
  for (const Op& op : mm) CHECK(op.stat("direction") == "bprop");
}

TEST_CASE("torch::optim updates are labelled optimizer, inference and the next forward fprop") {
  torch::manual_seed(0);
  torch::nn::Linear fc(8, 4);
  torch::optim::SGD sgd(fc->parameters(), torch::optim::SGDOptions(0.1).momentum(0.9));
  torch::Tensor x = torch::randn({16, 8});
  torch::Tensor target = torch::randn({16, 4});
  const std::vector<Op> ops = CaptureOps([&] {
    {
      torch::NoGradGuard no_grad;  // inference before any backward
      ScopedTrace t("inference");
      fc->forward(x);
    }
    sgd.zero_grad();
    torch::Tensor loss = torch::mse_loss(fc->forward(x), target);
    loss.backward();
    {
      ScopedTrace t("step");
      sgd.step();
    }
    ScopedTrace t("next_forward");
    fc->forward(x);
  });
  auto inside = [&](const char* marker) {
    const std::vector<Op> markers = Named(ops, marker);
    REQUIRE(markers.size() == 1);
    std::vector<Op> out;
    for (const Op& op : ops) {
      if (op.has("framework") && Inside(op, markers[0])) out.push_back(op);
    }
    return out;
  };
  // SGD with momentum: clone/detach of the momentum buffer, then the
  // parameter's add_; every op of step(), nested ones too.
  const std::vector<Op> step = inside("step");
  REQUIRE_FALSE(step.empty());
  CHECK(Named(step, "aten::add_").size() == 2);  // weight and bias
  for (const Op& op : step) CHECK(op.stat("direction") == "optimizer");
  for (const char* marker : {"inference", "next_forward"}) {
    const std::vector<Op> forward = inside(marker);
    REQUIRE_FALSE(forward.empty());
    for (const Op& op : forward) CHECK(op.stat("direction") == "fprop");
  }
}

TEST_CASE("aten's loss functions are labelled loss, with the ops nested in them") {
  torch::manual_seed(0);
  torch::nn::Linear fc(8, 3);
  torch::Tensor x = torch::randn({16, 8});
  torch::Tensor label = torch::randint(0, 3, {16}, torch::kLong);
  const std::vector<Op> ops = CaptureOps([&] {
    torch::Tensor logits = fc->forward(x);
    torch::Tensor loss = torch::nn::functional::cross_entropy(logits, label) +
                         torch::binary_cross_entropy_with_logits(logits, torch::ones_like(logits));
    loss.backward();
  });
  for (const char* name : {"aten::cross_entropy_loss", "aten::log_softmax",
                           "aten::nll_loss_forward", "aten::binary_cross_entropy_with_logits"}) {
    const std::vector<Op> loss = Named(ops, name);
    REQUIRE(loss.size() == 1);
    CHECK(loss[0].stat("direction") == "loss");
  }
  CHECK(Named(ops, "aten::addmm").at(0).stat("direction") == "fprop");
  CHECK(Named(ops, "aten::ones_like").at(0).stat("direction") == "fprop");
  CHECK(Named(ops, "NllLossBackward0").at(0).stat("direction") == "bprop");
}

TEST_CASE("nothing is recorded before the window opens or after it closes") {
  REQUIRE(EnableTorchOperators().ok());
  torch::Tensor a = torch::ones({4, 4});
  torch::Tensor b = torch::ones({4, 4});
  torch::mm(a, b);  // Before: no capture, no callbacks.
  CHECK_FALSE(at::hasGlobalCallbacks());

  const std::vector<Op> ops = CaptureOps([&] { torch::mm(a, b); });
  CHECK(Named(ops, "aten::mm").size() == 1);

  // After Stop the callbacks are gone, so libtorch runs at full speed.
  CHECK_FALSE(at::hasGlobalCallbacks());
}

TEST_CASE("a step schedule has libtorch's callbacks only in warmup and active steps") {
  REQUIRE(EnableTorchOperators().ok());
  testing::TempDir dir;
  ProfilerOptions options = testing::OperatorOptions(dir.path());
  options.schedule = ProfilerSchedule{/*wait=*/1, /*warmup=*/1, /*active=*/2, /*repeat=*/1};
  Profiler profiler(options);
  REQUIRE(profiler.status().ok());
  torch::Tensor a = torch::ones({4, 4});
  std::vector<bool> callbacks;
  for (int64_t step = 0; step < 5; ++step) {
    {
      StepTrace trace("train", step);
      callbacks.push_back(at::hasGlobalCallbacks());
      torch::mm(a, a);
    }
    REQUIRE(profiler.Step().ok());
  }
  // Step 0 waits, 1 warms up, 2 and 3 are active, 4 is after the one cycle.
  CHECK(callbacks == std::vector<bool>{false, true, true, true, false});
  auto result = profiler.Stop();
  REQUIRE(result.ok());
  const std::vector<Op> ops = HostEvents(testing::ReadXSpace(result->files[0]));
  // The warmup's op was recorded and discarded with its step.
  const std::vector<Op> mm = Named(ops, "aten::mm");
  const std::vector<Op> steps = Named(ops, "train");
  REQUIRE(steps.size() == 2);
  CHECK(steps[0].stat("step_num") == "2");
  CHECK(steps[1].stat("step_num") == "3");
  REQUIRE(mm.size() == 2);
  CHECK(Inside(mm[0], steps[0]));
  CHECK(Inside(mm[1], steps[1]));
  // Annotated as in any kOperator run.
  CHECK(mm[0].has("tf_op"));
}

TEST_CASE("record_shapes = false records ops without their inputs") {
  torch::Tensor a = torch::ones({4, 4});
  TorchOperatorOptions no_shapes;
  no_shapes.record_shapes = false;
  const std::vector<Op> ops = CaptureOps([&] { torch::mm(a, a); }, no_shapes);
  const std::vector<Op> mm = Named(ops, "aten::mm");
  REQUIRE(mm.size() == 1);
  CHECK_FALSE(mm[0].has("input_dims"));
  CHECK(mm[0].stat("direction") == "fprop");
}

TEST_CASE("dtypes are recorded by name, bf16 included") {
  torch::Tensor a = torch::ones({2, 3}, torch::kBFloat16);
  torch::Tensor i = torch::ones({3}, torch::kLong);
  const std::vector<Op> ops = CaptureOps([&] {
    torch::add(a, a);
    torch::mul(i, 2);
  });
  const std::vector<Op> add = Named(ops, "aten::add");
  REQUIRE(add.size() == 1);
  CHECK(add[0].stat("input_types") == "BFloat16,BFloat16,Scalar");
  const std::vector<Op> mul = Named(ops, "aten::mul");
  REQUIRE(!mul.empty());
  CHECK(mul[0].stat("input_types").rfind("Long,", 0) == 0);
}

TEST_CASE("a kTrace capture records no operators") {
  REQUIRE(EnableTorchOperators().ok());
  testing::TempDir dir;
  ProfilerOptions options;
  options.logdir = dir.path();
  options.port = 0;
  options.write_chrome_trace = false;
  Profiler profiler(options);
  REQUIRE(profiler.status().ok());
  CHECK_FALSE(at::hasGlobalCallbacks());
  torch::Tensor a = torch::ones({4, 4});
  torch::mm(a, a);
  REQUIRE(profiler.Stop().ok());
}

// Operators nested deeper than the collector's per-thread stack (256) are
// not recorded: the capture counts them as dropped and says why, in the
// result and in the file (the session adds the collector's warning).
void NestOperators(int depth) {
  if (depth == 0) return;
  RECORD_FUNCTION("nested_op", std::vector<c10::IValue>());
  NestOperators(depth - 1);
}

TEST_CASE("operators nested more than 256 deep are counted and reported") {
  const OperatorCapture capture = CaptureOperators([] { NestOperators(300); });
  CHECK(capture.result.dropped_events == 44);
  const std::string expected =
      "neuronprof: 44 libtorch operators were not recorded because they nested "
      "more than 256 deep on one thread";
  const auto& warnings = capture.result.warnings;
  CHECK(std::count(warnings.begin(), warnings.end(), expected) == 1);
  const auto& in_file = capture.space.warnings();
  CHECK(std::count(in_file.begin(), in_file.end(), expected) == 1);
  CHECK(Named(HostEvents(capture.space), "nested_op").size() == 256);
}

// A training loop of mm under a "step" marker, captured remotely.
std::vector<Op> RemoteCaptureOps(int host_tracer_level) {
  const torch::Tensor a = torch::ones({8, 8});
  return testing::RemoteCaptureOps(host_tracer_level, [&a] {
    ScopedTrace step("step");
    torch::mm(a, a);
  });
}

TEST_CASE("remote captures record operators from host_tracer_level 2") {
  const std::vector<Op> ops = RemoteCaptureOps(2);
  const std::vector<Op> mm = Named(ops, "aten::mm");
  REQUIRE(!mm.empty());
  CHECK(mm[0].stat("input_dims") == "[[8,8],[8,8]]");
  CHECK(mm[0].stat("flops") == std::to_string(2 * 8 * 8 * 8));
  CHECK_FALSE(at::hasGlobalCallbacks());  // Removed when the window closed.
}

TEST_CASE("remote captures at host_tracer_level 1 keep markers only") {
  const std::vector<Op> ops = RemoteCaptureOps(1);
  CHECK_FALSE(Named(ops, "step").empty());
  CHECK(Named(ops, "aten::mm").empty());
}

// The file names a kOperator Profiler with default outputs writes
// (write_chrome_trace as given, unset = the default), without folders.
std::vector<std::string> DefaultOutputNames(std::optional<bool> write_chrome_trace) {
  REQUIRE(EnableTorchOperators().ok());
  testing::TempDir dir;
  ProfilerOptions options = testing::OperatorOptions(dir.path());
  options.write_chrome_trace = write_chrome_trace;
  options.host_name = "h";
  Profiler profiler(options);
  REQUIRE(profiler.status().ok());
  torch::mm(torch::ones({4, 4}), torch::ones({4, 4}));
  auto result = profiler.Stop();
  REQUIRE(result.ok());
  std::vector<std::string> names;
  for (const std::string& file : result->files) names.push_back(file.substr(file.rfind('/') + 1));
  return names;
}

TEST_CASE("a kOperator capture writes the Kineto trace and no second JSON copy of its events") {
  // Perfetto and chrome://tracing open the .pt.trace.json.gz: by default a
  // libtorch capture is not written as JSON twice.
  CHECK(DefaultOutputNames(std::nullopt) ==
        std::vector<std::string>{"h.xplane.pb", "h.pt.trace.json.gz"});
  CHECK(DefaultOutputNames(true) ==
        std::vector<std::string>{"h.xplane.pb", "h.trace.json.gz", "h.pt.trace.json.gz"});
}

TEST_CASE("a kOperator capture's memory is handed back by the time its Profiler goes") {
  // Stop() returns once the files are written; the XSpace's arena is
  // unmapped on a thread of its own, joined when the Profiler goes.
  if (session::NewMappedArena() == nullptr) return;  // GCC's TSan: on the heap.
  REQUIRE(EnableTorchOperators().ok());
  testing::TempDir dir;
  const session::MappedArenaCounts before = session::CountMappedArenas();
  {
    Profiler profiler(testing::OperatorOptions(dir.path()));
    REQUIRE(profiler.status().ok());
    for (int i = 0; i < 100; ++i) torch::mm(torch::ones({4, 4}), torch::ones({4, 4}));
    REQUIRE(profiler.Stop().ok());
    CHECK(session::CountMappedArenas().blocks_ever > before.blocks_ever);
  }
  CHECK(session::CountMappedArenas().mapped_bytes == before.mapped_bytes);
}

}  // namespace
}  // namespace neuronprof
