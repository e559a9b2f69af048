// NameModules / ModuleScope: a nested torch::nn::Module run under a
// kOperator Profiler gets its operators' layer and scope from the modules'
// registered names, with no hand-written "layer:" marker.
#include <torch/torch.h>

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "neuronprof/neuronprof.h"
#include "neuronprof/torch.h"
#include "tests/collectors/torch/torch_capture.h"

namespace neuronprof {
namespace {

using testing::CaptureOps;
using testing::Named;
using testing::Op;

// encoder.layer0.{attn,mlp} and head, as libtorch registers them.
struct BlockImpl : torch::nn::Module {
  BlockImpl()
      : attn(register_module("attn", torch::nn::Linear(8, 8))),
        mlp(register_module("mlp", torch::nn::Linear(8, 8))) {}
  torch::Tensor forward(torch::Tensor x) {
    ModuleScope self(*this);
    {
      ModuleScope s(*attn);
      x = attn->forward(x);
    }
    {
      ModuleScope s(*mlp);
      x = mlp->forward(x);
    }
    return torch::relu(x);  // In encoder.layer0, outside its children.
  }
  torch::nn::Linear attn, mlp;
};
TORCH_MODULE(Block);

struct EncoderImpl : torch::nn::Module {
  EncoderImpl() : layer0(register_module("layer0", Block())) {}
  torch::Tensor forward(torch::Tensor x) {
    ModuleScope self(*this);
    return layer0->forward(x);
  }
  Block layer0;
};
TORCH_MODULE(Encoder);

struct NetImpl : torch::nn::Module {
  NetImpl()
      : encoder(register_module("encoder", Encoder())),
        head(register_module("head", torch::nn::Linear(8, 2))) {}
  torch::Tensor forward(torch::Tensor x) {
    ModuleScope self(*this);
    x = encoder->forward(x);
    ModuleScope s(*head);
    return head->forward(x);
  }
  Encoder encoder;
  torch::nn::Linear head;
};
TORCH_MODULE(Net);

std::vector<std::string> Stats(const std::vector<Op>& ops, const std::string& key) {
  std::vector<std::string> out;
  for (const Op& op : ops) out.push_back(op.stat(key));
  return out;
}

TEST_CASE(
    "ModuleScope names the layer and scope of a module's ops from its "
    "registered path") {
  torch::manual_seed(0);
  Net net;
  NameModules(*net);
  torch::Tensor x = torch::randn({4, 8});
  const std::vector<Op> ops = CaptureOps([&] {
    torch::NoGradGuard no_grad;
    net->forward(x);
  });

  // One addmm per Linear, in call order, each in its module's own layer:
  // a child's dotted path replaces its parent's, it is not joined to it.
  const std::vector<Op> addmm = Named(ops, "aten::addmm");
  REQUIRE(addmm.size() == 3);
  const std::vector<std::string> expected = {"encoder.layer0.attn", "encoder.layer0.mlp", "head"};
  CHECK(Stats(addmm, "layer") == expected);
  const std::vector<Op> relu = Named(ops, "aten::relu");
  REQUIRE(relu.size() == 1);
  CHECK(relu[0].stat("layer") == "encoder.layer0");

  // The scope is the marker path: the unnamed root under its class name,
  // then one "layer:<path>" marker per module.
  const std::string attn_scope = addmm[0].stat("scope");
  CHECK(attn_scope.find("NetImpl/layer:encoder/layer:encoder.layer0/"
                        "layer:encoder.layer0.attn") != std::string::npos);
  const std::string head_scope = addmm[2].stat("scope");
  CHECK(head_scope.size() >= 11);
  CHECK(head_scope.substr(head_scope.size() - 11) == "/layer:head");
}

TEST_CASE(
    "NameModules with a root name prefixes every path, and unnamed "
    "modules are scopes only") {
  torch::manual_seed(0);
  Net named;
  NameModules(*named, "net");
  Net unnamed;  // Never passed to NameModules.
  torch::Tensor x = torch::randn({4, 8});
  const std::vector<Op> ops = CaptureOps([&] {
    torch::NoGradGuard no_grad;
    named->forward(x);
    unnamed->forward(x);
  });
  const std::vector<Op> addmm = Named(ops, "aten::addmm");
  REQUIRE(addmm.size() == 6);
  CHECK(addmm[0].stat("layer") == "net.encoder.layer0.attn");
  CHECK(addmm[2].stat("layer") == "net.head");
  // The unnamed net's modules are markers named by their class: a scope,
  // no layer.
  for (size_t i = 3; i < 6; ++i) {
    CHECK(!addmm[i].has("layer"));
    CHECK(addmm[i].stat("scope").find("LinearImpl") != std::string::npos);
  }
}

}  // namespace
}  // namespace neuronprof
