// FLOP and byte formulas of single operators, checked against arithmetic
// written out by hand.
#include "src/analysis/ops/op_cost.h"

#include <catch2/catch.hpp>

#include "src/analysis/ops/op_inputs.h"
#include "src/xplane/json_reader.h"

namespace neuronprof {
namespace analysis {
namespace {

std::vector<OpInput> Inputs(const char* dims, const char* types, const char* values = "") {
  auto parsed = ParseOpInputs(dims, types, values);
  REQUIRE(parsed.ok());
  return *parsed;
}

OpCost Cost(const char* op, const char* dims, const char* types, const char* values = "") {
  return ComputeOpCost(op, Inputs(dims, types, values), Direction::kForward);
}

TEST_CASE("addmm counts 2*M*N*K FLOPs and every operand's bytes") {
  // C[128] + A[64,784] @ B[784,128]: M=64, N=128, K=784.
  const OpCost c = Cost("aten::addmm", "[[128],[64,784],[784,128],[],[]]",
                        "Float,Float,Float,Scalar,Scalar", R"(["","","","1","1"])");
  REQUIRE(c.known);
  CHECK(c.flops == 2 * 64 * 128 * 784);  // 12'845'056
  CHECK(c.flops == 12845056);
  // 4 bytes * (M*N + M*K + N*K) = 4 * (8192 + 50176 + 100352)
  CHECK(c.bytes == 634880);
  CHECK(c.params == "M=64,N=128,K=784,Float");
}

TEST_CASE("linear scales every byte term by the element size (no PyProf precedence bug)") {
  // x[64,784], W[128,784]: M = 64 rows, N = 128 out features, K = 784.
  const OpCost c = Cost("aten::linear", "[[64,784],[128,784],[128]]", "Float,Float,Float");
  REQUIRE(c.known);
  CHECK(c.flops == 2 * 64 * 128 * 784);
  // 4 * (M*N + M*K + N*K): PyProf's code scaled only the last term.
  CHECK(c.bytes == 4 * (64 * 128 + 64 * 784 + 128 * 784));
  CHECK(c.params == "M=64,N=128,K=784,Float");
  // Leading dims of x fold into M: x[4,16,784] -> M = 64.
  CHECK(Cost("aten::linear", "[[4,16,784],[128,784],[]]", "Float,Float,").flops == c.flops);
}

TEST_CASE("mm, bmm and matmul") {
  CHECK(Cost("aten::mm", "[[64,128],[128,784]]", "Float,Float").flops == 2 * 64 * 784 * 128);
  const OpCost b = Cost("aten::bmm", "[[8,32,16],[8,16,64]]", "Half,Half");
  CHECK(b.flops == 2 * 8 * 32 * 64 * 16);
  CHECK(b.bytes == 2 * 8 * (32 * 64 + 32 * 16 + 64 * 16));
  // Broadcast batch: [2,1,32,16] @ [3,16,8] -> batch 2*3.
  CHECK(Cost("aten::matmul", "[[2,1,32,16],[3,16,8]]", "Float,Float").flops == 2 * 6 * 32 * 8 * 16);
  // Vector-vector: a dot product of length 100.
  CHECK(Cost("aten::matmul", "[[100],[100]]", "Float,Float").flops == 200);
}

TEST_CASE("conv2d takes stride, padding, dilation and groups from the values") {
  // x[8,3,32,32], w[16,3,3,3], stride 1, padding 1: P = Q = (32 + 2 - 2 - 1) / 1 + 1 = 32.
  const OpCost c = Cost("aten::conv2d", "[[8,3,32,32],[16,3,3,3],[16],[],[],[],[]]",
                        "Float,Float,Float,,,,", R"(["","","","[1, 1]","[1, 1]","[1, 1]","1"])");
  REQUIRE(c.known);
  // 2 * N * K * P * Q * C * R * S = 2 * 8 * 16 * 32 * 32 * 3 * 3 * 3
  CHECK(c.flops == 7077888);
  // 4 * (N*C*H*W + K*C*R*S + N*K*P*Q) = 4 * (24576 + 432 + 131072)
  CHECK(c.bytes == 624320);
  CHECK(c.params == "N=8,C=3,H=32,W=32,K=16,P=32,Q=32,R=3,S=3,Float");

  // aten::convolution (transposed=false, groups=4), stride 2, no padding:
  // x[2,8,16,16], w[8,2,3,3]: P = (16 - 2 - 1) / 2 + 1 = 7.
  const OpCost g = Cost("aten::convolution", "[[2,8,16,16],[8,2,3,3],[],[],[],[],[],[],[]]",
                        "Float,Float,,,,,,,",
                        R"(["","","None","[2, 2]","[0, 0]","[1, 1]","false","[0, 0]","4"])");
  REQUIRE(g.known);
  CHECK(g.flops == 2 * 2 * 8 * 7 * 7 * (8 / 4) * 3 * 3);
  CHECK(g.params == "N=2,C=8,H=16,W=16,K=8,P=7,Q=7,R=3,S=3,g=4,Float");

  // conv1d: x[4,6,50], w[10,6,5], dilation 2: P = 50 - 2*4 - 1 + 1 = 42.
  const OpCost d = Cost("aten::conv1d", "[[4,6,50],[10,6,5],[],[],[],[],[]]", "Float,Float,,,,,",
                        R"(["","","None","[1]","[0]","[2]","1"])");
  CHECK(d.flops == 2 * 4 * 10 * 42 * 6 * 5);
}

TEST_CASE("softmax and log_softmax") {
  // x[32,10]: 320 elements; softmax 40 FLOPs each, 3 passes of 4 bytes.
  const OpCost s = Cost("aten::softmax", "[[32,10],[],[]]", "Float,Scalar,", R"(["","1","None"])");
  REQUIRE(s.known);
  CHECK(s.flops == 40 * 320);
  CHECK(s.flops == 12800);
  CHECK(s.bytes == 3 * 320 * 4);
  CHECK(Cost("aten::_log_softmax", "[[32,10],[],[]]", "Float,Scalar,Scalar").flops == 21 * 320);
  // The backward kernel moves 5 passes.
  CHECK(Cost("aten::_softmax_backward_data", "[[32,10],[32,10],[],[]]", "Float,Float,Scalar,")
            .bytes == 5 * 320 * 4);
}

TEST_CASE("bf16 tensors count 2 bytes per element") {
  const OpCost f = Cost("aten::addmm", "[[128],[64,784],[784,128],[],[]]",
                        "BFloat16,BFloat16,BFloat16,Scalar,Scalar");
  REQUIRE(f.known);
  CHECK(f.flops == 12845056);
  CHECK(f.bytes == 2 * (8192 + 50176 + 100352));
  CHECK(f.params == "M=64,N=128,K=784,BFloat16");
  CHECK(Cost("aten::relu", "[[64,128]]", "BFloat16").bytes == 2 * 8192 * 2);
  CHECK(DTypeBytes(ParseDType("BFloat16")) == 2);
  CHECK(DTypeBytes(ParseDType("Half")) == 2);
  CHECK(DTypeBytes(ParseDType("Double")) == 8);
  CHECK(DTypeBytes(ParseDType("Long")) == 8);
  CHECK(DTypeBytes(ParseDType("Int")) == 4);
  CHECK(DTypeBytes(ParseDType("Short")) == 2);
  CHECK(DTypeBytes(ParseDType("Char")) == 1);
  CHECK(DTypeBytes(ParseDType("Byte")) == 1);
  CHECK(DTypeBytes(ParseDType("Bool")) == 1);
  CHECK(ParseDType("Scalar") == DType::kNone);
}

TEST_CASE("elementwise ops broadcast and count inputs plus output") {
  // [64,128] + [128]: out 8192 elements; bytes 4*(8192 + 128 + 8192).
  const OpCost a = Cost("aten::add", "[[64,128],[128],[]]", "Float,Float,Scalar");
  CHECK(a.flops == 8192);
  CHECK(a.bytes == 4 * (8192 + 128 + 8192));
  CHECK(a.params == "T=(64,128),Float");
  // In-place SGD update p.add_(grad, -lr) is the same op.
  CHECK(Cost("aten::add_", "[[64,128],[64,128],[]]", "Float,Float,Scalar").flops == 8192);
  // Comparisons write Bool.
  CHECK(Cost("aten::gt", "[[10],[]]", "Float,Scalar").bytes == 40 + 10);
  // Adam's addcdiv_/addcmul_: 3 FLOPs per element; sqrt is transcendental.
  CHECK(Cost("aten::addcdiv_", "[[100],[100],[100],[]]", "Float,Float,Float,Scalar").flops == 300);
  CHECK(Cost("aten::sqrt", "[[100]]", "Float").flops == 2000);
  // Shapes that do not broadcast are not costed.
  CHECK_FALSE(Cost("aten::mul", "[[3,4],[5]]", "Float,Float").known);
}

TEST_CASE("losses, normalization and embedding") {
  // nll_loss(x[64,10], target[64] Long): 64 FLOPs; bytes: targets 512,
  // gathered values 256, output 4.
  const OpCost n = Cost("aten::nll_loss_forward", "[[64,10],[64],[],[],[]]",
                        "Float,Long,,Scalar,Scalar", R"(["","","None","1","-100"])");
  CHECK(n.flops == 64);
  CHECK(n.bytes == 512 + 256 + 4);
  const OpCost b = Cost("aten::batch_norm", "[[8,16,4,4],[16],[16],[16],[16],[],[],[],[]]",
                        "Float,Float,Float,Float,Float,Scalar,Scalar,Scalar,Scalar");
  CHECK(b.flops == 8 * 2048);
  CHECK(b.bytes == 4 * 2048 * 4);
  CHECK(
      Cost("aten::layer_norm", "[[4,256],[],[256],[256],[],[]]", "Float,,Float,Float,Scalar,Scalar")
          .flops == 8 * 1024);
  // embedding(weight[1000,64], idx[32]): reads 32 Long indices, reads and
  // writes 32 rows of 64 floats.
  const OpCost e =
      Cost("aten::embedding", "[[1000,64],[32],[],[],[]]", "Float,Long,Scalar,Scalar,Scalar");
  CHECK(e.flops == 0);
  CHECK(e.bytes == 32 * 8 + 2 * 32 * 64 * 4);
}

TEST_CASE("unknown ops and missing shapes are unknown, never zero") {
  const OpCost u = Cost("aten::foo_unknown", "[[64,128]]", "Float");
  CHECK_FALSE(u.known);
  CHECK_FALSE(u.container);
  CHECK(u.params == "T=(64,128),Float");
  // A known op without recorded shapes cannot be costed.
  CHECK_FALSE(ComputeOpCost("aten::addmm", {}, Direction::kForward).known);
  // Views are known to cost nothing.
  const OpCost v = ComputeOpCost("aten::t", {}, Direction::kForward);
  CHECK(v.known);
  CHECK(v.flops == 0);
  // Autograd nodes are containers: their work is the ops they run.
  const OpCost node = ComputeOpCost("AddmmBackward0", {}, Direction::kBackward);
  CHECK_FALSE(node.known);
  CHECK(node.container);
  CHECK(IsAutogradNodeName("autograd::engine::evaluate_function: AddmmBackward0"));
  CHECK_FALSE(IsAutogradNodeName("aten::threshold_backward"));
  CHECK(BaseOpName("aten::add_") == "add");
  CHECK(BaseOpName("aten::__iadd__") == "add");
  CHECK(BaseOpName("aten::_softmax") == "_softmax");
}

TEST_CASE("malformed input stats are errors that name the stat") {
  auto bad = ParseOpInputs("[[64,784],[128", "Float,Float", "");
  REQUIRE_FALSE(bad.ok());
  CHECK(std::string(bad.status().message()).find("input_dims") != std::string::npos);
  auto count = ParseOpInputs("[[1],[2]]", "Float", "");
  REQUIRE_FALSE(count.ok());
  CHECK(std::string(count.status().message()).find("input_types") != std::string::npos);
  auto values = ParseOpInputs("[[1]]", "Float", R"(["a", "b"])");
  REQUIRE_FALSE(values.ok());
  CHECK(std::string(values.status().message()).find("input_values") != std::string::npos);
  auto empty = ParseOpInputs("[]", "", "[]");
  REQUIRE(empty.ok());
  CHECK(empty->empty());
  auto escaped = ParseOpInputs("[[],[]]", "Scalar,", R"(["1", "a \"q\" \\ \u0041"])");
  REQUIRE(escaped.ok());
  CHECK((*escaped)[1].value == "a \"q\" \\ A");
}

TEST_CASE("input stats are read with the one strict JSON grammar the Kineto export copies by") {
  // What the analysis parses, the Kineto trace copies verbatim as "Input
  // Dims" / "Concrete Inputs", and what one refuses the other refuses.
  struct Case {
    const char* dims;
    const char* types;
    const char* values;
  };
  const Case accepted[] = {
      {"[[64,784],[],[128]]", "Float,Scalar,Float", R"(["", "2", ""])"},
      {" [ [1] , [2,3] ] ", "Float,Float", "[ \"\" ,\t\"\" ]"},
      {"[]", "", "[]"},
  };
  for (const Case& c : accepted) {
    INFO(c.dims << " / " << c.values);
    CHECK(json_reader::IsStrictJsonArray(c.dims));
    CHECK(json_reader::IsStrictJsonArray(c.values));
    CHECK(ParseOpInputs(c.dims, c.types, c.values).ok());
  }
  const Case refused[] = {
      {"[[01]]", "Float", ""},               // Leading zero.
      {"[[1],]", "Float", ""},               // Trailing comma.
      {"[[1]]\v", "Float", ""},              // Not JSON whitespace.
      {"[[1]]", "Scalar", R"(["\x41"])"},    // Not a JSON escape.
      {"[[1]]", "Scalar", "[\"a\x01\"]"},    // Raw control character.
      {"[[1]]", "Scalar", "[\"\xFF\"]"},     // Not UTF-8.
      {"[[1]]", "Scalar", R"(["\ud800"])"},  // Unpaired surrogate.
  };
  for (const Case& c : refused) {
    INFO(c.dims << " / " << c.values);
    CHECK_FALSE((json_reader::IsStrictJsonArray(c.dims) &&
                 (*c.values == '\0' || json_reader::IsStrictJsonArray(c.values))));
    CHECK_FALSE(ParseOpInputs(c.dims, c.types, c.values).ok());
  }
  // \u escapes decode to UTF-8 (a surrogate pair to one code point).
  auto decoded = ParseOpInputs("[[]]", "Scalar", R"(["\u00e9\ud834\udd1e"])");
  REQUIRE(decoded.ok());
  CHECK((*decoded)[0].value == "\xC3\xA9\xF0\x9D\x84\x9E");
}

TEST_CASE("absurd sizes are refused or left unknown instead of overflowing") {
  auto huge = ParseOpInputs("[[2000000,2000000]]", "Float", "");
  REQUIRE_FALSE(huge.ok());
  CHECK(std::string(huge.status().message()).find("larger than 2^40 elements") !=
        std::string::npos);
  // Each operand is legal, the product is not representable: unknown.
  CHECK_FALSE(Cost("aten::mm", "[[4000000000,1],[1,4000000000]]", "Float,Float").known);
  CHECK_FALSE(Cost("aten::add", "[[4000000000,1],[1,4000000000]]", "Float,Float").known);
  CHECK_FALSE(Cost("aten::conv2d", "[[1,1,8,8],[1,1,3,3],[],[],[],[],[]]", "Float,Float,,,,,",
                   R"(["","","None","[1, 1]","[9000000000000, 0]","[1, 1]","1"])")
                  .known);
  // A transposed convolution's K is weight dim 1 times groups: a huge
  // groups value would overflow it (UB) before any Fits() check.
  CHECK_FALSE(Cost("aten::convolution", "[[1,8,4,4],[8,2,3,3],[],[],[],[],[],[],[]]",
                   "Float,Float,,,,,,,",
                   R"(["","","None","[1, 1]","[0, 0]","[1, 1]","true","[0, 0]",)"
                   R"("4611686018427387904"])")
                  .known);
  // issue 27: an empty batch beside dimensions of 2^31 (a libtorch bmm can
  // record one): M·N + M·K overflowed int64 (UB). Nothing to compute.
  const OpCost empty =
      Cost("aten::bmm", "[[0,2147483648,2147483648],[0,2147483648,2147483648]]", "Float,Float");
  CHECK(empty.known);
  CHECK(empty.flops == 0);
  CHECK(empty.bytes == 0);
  // Huge dimensions beside an empty one elsewhere: unknown, not wrapped.
  CHECK_FALSE(
      Cost("aten::matmul", "[[1099511627776,0],[0,4611686018427387904]]", "Float,Float").known);
  CHECK_FALSE(
      Cost("aten::embedding", "[[0,4611686018427387904],[1099511627776]]", "Float,Long").known);
  CHECK_FALSE(Cost("aten::index_select", "[[1099511627776,1],[],[1099511627776]]", "Float,,Long",
                   R"(["","1",""])")
                  .known);
  // A padding of INT64_MIN: no std::abs of it (UB), just out of range.
  CHECK_FALSE(Cost("aten::conv2d", "[[1,1,8,8],[1,1,3,3],[],[],[],[],[]]", "Float,Float,,,,,",
                   R"(["","","None","[1, 1]","[-9223372036854775808, 0]","[1, 1]","1"])")
                  .known);
}

}  // namespace
}  // namespace analysis
}  // namespace neuronprof
