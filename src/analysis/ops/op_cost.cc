#include "src/analysis/ops/op_cost.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "src/analysis/ops/custom_op_costs.h"
#include "src/xplane/saturating.h"

namespace neuronprof {
namespace analysis {
namespace {

using Inputs = std::vector<OpInput>;

// std::string_view helpers (Debian's Abseil has its own string_view type).
bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}
bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// The i-th tensor input, or null.
const OpInput* Tensor(const Inputs& in, size_t i) {
  size_t seen = 0;
  for (const OpInput& x : in) {
    if (!x.is_tensor) continue;
    if (seen++ == i) return &x;
  }
  return nullptr;
}

// Input at position i when it is a tensor, else null.
const OpInput* TensorAt(const Inputs& in, size_t i) {
  return i < in.size() && in[i].is_tensor ? &in[i] : nullptr;
}

std::string Dims(const std::vector<int64_t>& dims) {
  return absl::StrCat("(", absl::StrJoin(dims, ","), ")");
}

// Distinct tensor dtypes in input order, '/'-joined.
std::string DTypes(const Inputs& in) {
  std::vector<std::string> names;
  for (const OpInput& x : in) {
    if (!x.is_tensor) continue;
    std::string name = DTypeName(x.dtype);
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  return absl::StrJoin(names, "/");
}

// Every formula is Checked: operands come from a file, and a cost that
// overflowed int64 is unknown rather than wrong.
OpCost Known(Checked flops, Checked bytes, std::string params) {
  if (!flops.ok() || !bytes.ok()) return {};
  OpCost c;
  c.known = true;
  c.flops = flops.value();
  c.bytes = bytes.value();
  c.params = std::move(params);
  return c;
}

// numpy-style broadcast of two shapes; false when they do not broadcast.
bool Broadcast(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
               std::vector<int64_t>* out) {
  const size_t n = std::max(a.size(), b.size());
  std::vector<int64_t> shape(n, 1);  // `out` may alias `a` or `b`
  for (size_t i = 0; i < n; ++i) {
    const int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1) return false;
    shape[i] = da == 1 ? db : da;
  }
  *out = std::move(shape);
  return true;
}

Checked Product(const std::vector<int64_t>& dims, size_t begin, size_t end) {
  Checked n = 1;
  for (size_t i = begin; i < end && i < dims.size(); ++i) n *= dims[i];
  return n;
}

// ---- GEMMs: 2·M·N·K FLOPs, elem·(M·N + M·K + N·K) bytes (PyProf's formula
// with the element size applied to every term).
// Operands are bounded by the parser, but products of several, or a
// huge dimension beside an empty one, can still overflow: Known() then
// leaves the cost unknown.
OpCost Gemm(Checked batch_product, int64_t m, int64_t n, int64_t k, const OpInput& a) {
  if (!batch_product.ok()) return {};
  const int64_t batch = batch_product.value();
  const int64_t elem = DTypeBytes(a.dtype);
  std::string params = absl::StrCat("M=", m, ",N=", n, ",K=", k);
  if (batch != 1) params = absl::StrCat("B=", batch, ",", params);
  const Checked b = batch;
  // The batch first: an empty batch costs nothing, whatever M, N and K say.
  OpCost cost = Known(2 * b * m * n * k, elem * (b * m * n + b * m * k + b * n * k),
                      absl::StrCat(params, ",", DTypeName(a.dtype)));
  if (!cost.known) return cost;
  cost.matrix_dims = {{'M', m}, {'N', n}, {'K', k}};
  cost.matrix_dtype = a.dtype;
  return cost;
}

// mm(A[M,K], B[K,N]); addmm(C, A, B, ...) uses inputs 1 and 2.
OpCost MatrixMultiply(const OpInput* a, const OpInput* b) {
  if (!a || !b || a->dims.size() != 2 || b->dims.size() != 2) return {};
  return Gemm(1, a->dims[0], b->dims[1], a->dims[1], *a);
}

OpCost BatchMultiply(const OpInput* a, const OpInput* b) {
  if (!a || !b || a->dims.size() != 3 || b->dims.size() != 3) return {};
  return Gemm(a->dims[0], a->dims[1], b->dims[2], a->dims[2], *a);
}

// matmul's 1-D/2-D/N-D cases: a 1-D left operand is a row, a 1-D right one a
// column, batch dimensions broadcast.
OpCost Matmul(const OpInput* a, const OpInput* b) {
  if (!a || !b || a->dims.empty() || b->dims.empty()) return {};
  std::vector<int64_t> ad = a->dims, bd = b->dims;
  if (ad.size() == 1) ad.insert(ad.begin(), 1);
  if (bd.size() == 1) bd.push_back(1);
  const int64_t m = ad[ad.size() - 2], k = ad.back(), n = bd.back();
  std::vector<int64_t> batch;
  if (!Broadcast(std::vector<int64_t>(ad.begin(), ad.end() - 2),
                 std::vector<int64_t>(bd.begin(), bd.end() - 2), &batch)) {
    return {};
  }
  return Gemm(Product(batch, 0, batch.size()), m, n, k, *a);
}

// linear(x[..., K], W[N, K], bias) = x @ W^T: M = prod(x.shape[:-1]) rows,
// N = out features (every GEMM's params name an M x N output, so linear
// and the addmm it calls print alike; PyProf names them the other way).
OpCost Linear(const Inputs& in) {
  const OpInput* x = TensorAt(in, 0);
  const OpInput* w = TensorAt(in, 1);
  if (!x || !w || x->dims.empty() || w->dims.size() != 2) return {};
  const Checked m = Product(x->dims, 0, x->dims.size() - 1);
  if (!m.ok()) return {};
  return Gemm(1, m.value(), w->dims[0], x->dims.back(), *x);
}

// ---- Convolutions. Argument positions per op (stride, padding, dilation,
// transposed, output_padding, groups); -1 = not an argument.
struct ConvArgs {
  int stride, padding, dilation, transposed, output_padding, groups;
};

const std::map<std::string, ConvArgs, std::less<>>& ConvOps() {
  static const auto* ops = new std::map<std::string, ConvArgs, std::less<>>{
      {"conv1d", {3, 4, 5, -1, -1, 6}},
      {"conv2d", {3, 4, 5, -1, -1, 6}},
      {"conv3d", {3, 4, 5, -1, -1, 6}},
      {"convolution", {3, 4, 5, 6, 7, 8}},
      {"_convolution", {3, 4, 5, 6, 7, 8}},
      {"conv_transpose1d", {3, 4, 7, -2, 5, 6}},  // -2: always transposed
      {"conv_transpose2d", {3, 4, 7, -2, 5, 6}},
      {"conv_transpose3d", {3, 4, 7, -2, 5, 6}},
      {"mkldnn_convolution", {4, 3, 5, -1, -1, 6}},
  };
  return *ops;
}

// Per-dimension int list argument; a missing or "None" argument gives
// `fallback` in every dimension.
bool SpatialArg(const Inputs& in, int index, size_t rank, int64_t fallback,
                std::vector<int64_t>* out) {
  out->assign(rank, fallback);
  if (index < 0 || static_cast<size_t>(index) >= in.size()) return true;
  const std::string& v = in[index].value;
  if (v.empty() || v == "None") return true;
  std::vector<int64_t> parsed;
  if (!ParseIntList(v, &parsed)) return false;
  if (parsed.size() == 1) parsed.assign(rank, parsed[0]);
  if (parsed.size() != rank) return false;
  *out = parsed;
  return true;
}

OpCost Convolution(const ConvArgs& args, const Inputs& in) {
  const OpInput* x = TensorAt(in, 0);
  const OpInput* w = TensorAt(in, 1);
  if (!x || !w || x->dims.size() < 3 || w->dims.size() != x->dims.size()) return {};
  const size_t rank = x->dims.size() - 2;
  int64_t groups = 1;
  if (args.groups < static_cast<int>(in.size()) && !in[args.groups].value.empty()) {
    std::vector<int64_t> g;
    if (!ParseIntList(in[args.groups].value, &g) || g.size() != 1 || g[0] < 1 ||
        g[0] > (int64_t{1} << 31)) {  // no real model has more; keeps K exact
      return {};
    }
    groups = g[0];
  }
  bool transposed = args.transposed == -2;
  if (args.transposed >= 0 && args.transposed < static_cast<int>(in.size())) {
    transposed = in[args.transposed].value == "true";
  }
  std::vector<int64_t> stride, padding, dilation, output_padding;
  // conv2d's padding="same"/"valid" overload.
  const std::string pad_text =
      args.padding < static_cast<int>(in.size()) ? in[args.padding].value : "";
  const bool same = pad_text == "same" || pad_text == "\"same\"";
  const bool valid = pad_text == "valid" || pad_text == "\"valid\"";
  if (!SpatialArg(in, args.stride, rank, 1, &stride) ||
      !SpatialArg(in, same || valid ? -1 : args.padding, rank, 0, &padding) ||
      !SpatialArg(in, args.dilation, rank, 1, &dilation) ||
      !SpatialArg(in, args.output_padding, rank, 0, &output_padding)) {
    return {};
  }
  const int64_t n = x->dims[0], c = x->dims[1];
  // weight: [K, C/g, R...], transposed: [C, K/g, R...].
  const Checked checked_k = transposed ? Checked(w->dims[1]) * groups : Checked(w->dims[0]);
  if (!checked_k.ok()) return {};
  const int64_t k = checked_k.value();
  std::vector<int64_t> out_spatial(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t h = x->dims[2 + i], r = w->dims[2 + i];
    constexpr int64_t kMaxArg = int64_t{1} << 31;  // no real model has more
    auto within = [](int64_t v, int64_t low) { return low <= v && v <= kMaxArg; };
    if (!within(stride[i], 1) || !within(padding[i], -kMaxArg) || !within(dilation[i], 0) ||
        !within(output_padding[i], -kMaxArg)) {
      return {};
    }
    Checked out = 0;
    if (transposed) {
      out = (Checked(h) - 1) * stride[i] - Checked(2) * padding[i] +
            Checked(dilation[i]) * (r - 1) + output_padding[i] + 1;
    } else if (same) {
      out = h;
    } else {
      const Checked span =
          Checked(h) + Checked(2) * padding[i] - Checked(dilation[i]) * (r - 1) - 1;
      out = span.ok() ? Checked(span.value() / stride[i]) + 1 : span;
    }
    if (!out.ok()) return {};
    out_spatial[i] = out.value();
    if (out_spatial[i] < 0) return {};
  }
  const Checked in_spatial = Product(x->dims, 2, x->dims.size());
  const Checked kernel = Product(w->dims, 2, w->dims.size());
  const Checked out_sp = Product(out_spatial, 0, rank);
  // Each output (transposed: each input) point is a dot product over
  // (C/g)·R·S inputs.
  const Checked flops = transposed ? 2 * in_spatial * n * c * (k / groups) * kernel
                                   : 2 * out_sp * n * k * (c / groups) * kernel;
  const int64_t elem = DTypeBytes(x->dtype);
  const Checked bytes = elem * (in_spatial * n * c + w->Elements() + out_sp * n * k);
  static const char* const kIn[3][3] = {{"H"}, {"H", "W"}, {"D", "H", "W"}};
  static const char* const kOut[3][3] = {{"P"}, {"P", "Q"}, {"Z", "P", "Q"}};
  static const char* const kKernel[3][3] = {{"R"}, {"R", "S"}, {"T", "R", "S"}};
  std::string params = absl::StrCat("N=", n, ",C=", c);
  const size_t names = std::min<size_t>(rank, 3) - 1;
  for (size_t i = 0; i < rank && i < 3; ++i)
    absl::StrAppend(&params, ",", kIn[names][i], "=", x->dims[2 + i]);
  absl::StrAppend(&params, ",K=", k);
  for (size_t i = 0; i < rank && i < 3; ++i)
    absl::StrAppend(&params, ",", kOut[names][i], "=", out_spatial[i]);
  for (size_t i = 0; i < rank && i < 3; ++i)
    absl::StrAppend(&params, ",", kKernel[names][i], "=", w->dims[2 + i]);
  if (groups != 1) absl::StrAppend(&params, ",g=", groups);
  if (transposed) absl::StrAppend(&params, ",transposed");
  OpCost cost = Known(flops, bytes, absl::StrCat(params, ",", DTypeName(x->dtype)));
  cost.matrix_dims = {{'C', c / groups}, {'K', k / groups}};  // groups >= 1
  cost.matrix_dtype = x->dtype;
  return cost;
}

// ---- Elementwise and normalization families: FLOPs and bytes per element
// of the first tensor.
struct PerElement {
  int64_t flops;  // FLOPs per element
  int64_t bytes;  // element sizes moved per element (fprop)
};

const std::map<std::string, PerElement, std::less<>>& UnaryOps() {
  static const auto* ops = new std::map<std::string, PerElement, std::less<>>{
      // Activations: one FLOP, read x, write y.
      {"relu", {1, 2}},
      {"relu6", {1, 2}},
      {"elu", {1, 2}},
      {"celu", {1, 2}},
      {"selu", {1, 2}},
      {"leaky_relu", {1, 2}},
      {"hardtanh", {1, 2}},
      {"hardshrink", {1, 2}},
      {"softshrink", {1, 2}},
      {"softplus", {1, 2}},
      {"softsign", {1, 2}},
      {"tanhshrink", {1, 2}},
      {"threshold", {1, 2}},
      {"rrelu", {1, 2}},
      {"prelu", {1, 2}},
      {"logsigmoid", {1, 2}},
      {"hardswish", {1, 2}},
      {"hardsigmoid", {1, 2}},
      // Pointwise unary.
      {"abs", {1, 2}},
      {"neg", {1, 2}},
      {"reciprocal", {1, 2}},
      {"ceil", {1, 2}},
      {"floor", {1, 2}},
      {"frac", {1, 2}},
      {"round", {1, 2}},
      {"sign", {1, 2}},
      {"trunc", {1, 2}},
      {"clamp", {1, 2}},
      {"clamp_min", {1, 2}},
      {"clamp_max", {1, 2}},
      {"square", {1, 2}},
      // Transcendental: 20 FLOPs per element (PyProf's figure).
      {"exp", {20, 2}},
      {"exp2", {20, 2}},
      {"expm1", {20, 2}},
      {"log", {20, 2}},
      {"log2", {20, 2}},
      {"log10", {20, 2}},
      {"log1p", {20, 2}},
      {"sqrt", {20, 2}},
      {"rsqrt", {20, 2}},
      {"sin", {20, 2}},
      {"cos", {20, 2}},
      {"tan", {20, 2}},
      {"asin", {20, 2}},
      {"acos", {20, 2}},
      {"atan", {20, 2}},
      {"sinh", {20, 2}},
      {"cosh", {20, 2}},
      {"tanh", {20, 2}},
      {"sigmoid", {20, 2}},
      {"erf", {20, 2}},
      {"erfc", {20, 2}},
      {"erfinv", {20, 2}},
      {"gelu", {20, 2}},
      {"silu", {20, 2}},
      {"mish", {20, 2}},
      // Activation gradients (aten's backward kernels, PyProf's bprop bytes):
      // read grad and x, write grad_in.
      {"threshold_backward", {1, 3}},
      {"relu_backward", {1, 3}},
      {"leaky_relu_backward", {1, 3}},
      {"hardtanh_backward", {1, 3}},
      {"elu_backward", {1, 3}},
      {"softplus_backward", {1, 3}},
      {"hardswish_backward", {1, 3}},
      {"hardsigmoid_backward", {1, 3}},
      {"sigmoid_backward", {1, 3}},
      {"tanh_backward", {1, 3}},
      {"gelu_backward", {20, 3}},
      {"silu_backward", {20, 3}},
      {"mish_backward", {20, 3}},
      // Normalization: batch norm 8 FLOPs/element; fprop reads x twice
      // (statistics, transform) and writes y (+ one more pass: PyProf's 4);
      // bprop 5 passes. Layer norm uses the same counts.
      {"batch_norm", {8, 4}},
      {"native_batch_norm", {8, 4}},
      {"_batch_norm_impl_index", {8, 4}},
      {"cudnn_batch_norm", {8, 4}},
      {"_native_batch_norm_legit", {8, 4}},
      {"_native_batch_norm_legit_no_training", {8, 4}},
      {"native_batch_norm_backward", {8, 5}},
      {"_batch_norm_impl_index_backward", {8, 5}},
      {"cudnn_batch_norm_backward", {8, 5}},
      {"layer_norm", {8, 4}},
      {"native_layer_norm", {8, 4}},
      {"native_layer_norm_backward", {8, 5}},
      {"group_norm", {8, 4}},
      {"native_group_norm", {8, 4}},
      {"native_group_norm_backward", {8, 5}},
      // Softmax: 40 FLOPs/element (exp + reduce, exp + divide), fprop 3
      // passes, bprop 5; log_softmax 21 FLOPs/element.
      {"softmax", {40, 3}},
      {"_softmax", {40, 3}},
      {"_softmax_backward_data", {40, 5}},
      {"log_softmax", {21, 3}},
      {"_log_softmax", {21, 3}},
      {"_log_softmax_backward_data", {21, 5}},
      // Dropout: 5 FLOPs/element (random, compare, scale), read + write.
      {"dropout", {5, 2}},
      {"native_dropout", {5, 2}},
      {"feature_dropout", {5, 2}},
      {"native_dropout_backward", {1, 3}},
      // Copies: no FLOPs, read + write.
      {"clone", {0, 2}},
      {"_to_copy", {0, 2}},
      {"zero", {0, 1}},
      {"fill", {0, 1}},
      {"normal", {0, 1}},
      {"uniform", {0, 1}},
      {"bernoulli", {5, 2}},
  };
  return *ops;
}

OpCost Unary(const PerElement& per, const Inputs& in) {
  const OpInput* x = Tensor(in, 0);
  if (!x) return {};
  const Checked n = x->Elements();
  return Known(per.flops * n, per.bytes * n * DTypeBytes(x->dtype), GenericParams(in));
}

// Binary and ternary elementwise ops: the output has the broadcast shape of
// the tensor operands; bytes = every tensor input + the output.
struct ElementwiseKind {
  int64_t flops_per_element;
  bool bool_output;  // comparisons and logical ops write Bool
};

const std::map<std::string, ElementwiseKind, std::less<>>& ElementwiseOps() {
  static const auto* ops = new std::map<std::string, ElementwiseKind, std::less<>>{
      {"add", {1, false}},
      {"sub", {1, false}},
      {"rsub", {1, false}},
      {"mul", {1, false}},
      {"div", {1, false}},
      {"true_divide", {1, false}},
      {"floor_divide", {1, false}},
      {"remainder", {1, false}},
      {"fmod", {1, false}},
      {"maximum", {1, false}},
      {"minimum", {1, false}},
      {"masked_fill", {1, false}},
      {"eq", {1, true}},
      {"ne", {1, true}},
      {"lt", {1, true}},
      {"le", {1, true}},
      {"gt", {1, true}},
      {"ge", {1, true}},
      {"logical_and", {1, true}},
      {"logical_or", {1, true}},
      {"logical_xor", {1, true}},
      {"logical_not", {1, true}},
      {"pow", {20, false}},
      {"atan2", {20, false}},
      {"addcdiv", {3, false}},
      {"addcmul", {3, false}},
      {"lerp", {3, false}},
  };
  return *ops;
}

OpCost Elementwise(const ElementwiseKind& kind, const Inputs& in) {
  std::vector<int64_t> shape;
  const OpInput* first = nullptr;
  Checked in_bytes = 0;
  for (const OpInput& x : in) {
    if (!x.is_tensor) continue;
    if (!first) {
      first = &x;
      shape = x.dims;
    } else if (!Broadcast(shape, x.dims, &shape)) {
      return {};
    }
    in_bytes += x.Bytes();
  }
  if (!first) return {};
  const Checked out = Product(shape, 0, shape.size());
  const int64_t out_elem = kind.bool_output ? 1 : DTypeBytes(first->dtype);
  return Known(kind.flops_per_element * out, in_bytes + out * out_elem,
               absl::StrCat("T=", Dims(shape), ",", DTypes(in)));
}

// ---- Reductions.
OpCost Reduction(std::string_view op, const Inputs& in) {
  const OpInput* x = Tensor(in, 0);
  if (!x) return {};
  const Checked n = x->Elements();
  const int64_t elem = DTypeBytes(x->dtype);
  if (op == "sum") return Known(n, n * elem, GenericParams(in));
  if (op == "mean") return Known(n + 1, n * elem + elem, GenericParams(in));
  return Known(2 * n + 1, n * elem, GenericParams(in));  // norm
}

// ---- Losses. nll_loss(x[N,C] log-probabilities, target[N], weight, reduction,
// ...): one gather and one add per target; bytes = targets + the gathered
// values + the output. The backward writes a full grad_input.
OpCost NllLoss(const Inputs& in, bool backward) {
  const OpInput* x = TensorAt(in, backward ? 1 : 0);
  const OpInput* target = TensorAt(in, backward ? 2 : 1);
  if (!x || !target) return {};
  const Checked t = target->Elements();
  const int64_t elem = DTypeBytes(x->dtype);
  Checked bytes = target->Bytes() + t * elem;
  if (const OpInput* w = TensorAt(in, backward ? 3 : 2)) bytes += t * DTypeBytes(w->dtype);
  bytes += backward ? x->Bytes() : elem;
  return Known(t, bytes, GenericParams(in));
}

// cross_entropy = log_softmax + nll_loss (its children carry the cost when
// recorded).
OpCost CrossEntropy(const Inputs& in) {
  const OpInput* x = TensorAt(in, 0);
  const OpInput* target = TensorAt(in, 1);
  if (!x || !target) return {};
  const Checked n = x->Elements(), t = target->Elements();
  const int64_t elem = DTypeBytes(x->dtype);
  return Known(21 * n + t, 3 * n * elem + target->Bytes() + t * elem + elem, GenericParams(in));
}

// ---- Embedding(weight[V,D], indices): no FLOPs; read the indices, read and
// write one row per index. Its backward reads grad rows and updates weight
// rows (3 passes, PyProf).
OpCost Embedding(const Inputs& in) {
  const OpInput* w = TensorAt(in, 0);
  const OpInput* idx = TensorAt(in, 1);
  if (!w || !idx || w->dims.size() != 2) return {};
  const Checked rows = Checked(idx->Elements()) * w->dims[1] * DTypeBytes(w->dtype);
  return Known(
      0, idx->Bytes() + 2 * rows,
      absl::StrCat("V=", w->dims[0], ",D=", w->dims[1], ",I=", Dims(idx->dims), ",", DTypes(in)));
}

OpCost EmbeddingBackward(const Inputs& in) {
  const OpInput* grad = TensorAt(in, 0);
  const OpInput* idx = TensorAt(in, 1);
  if (!grad || !idx || grad->dims.empty()) return {};
  return Known(0, 3 * Checked(idx->Elements()) * grad->dims.back() * DTypeBytes(grad->dtype),
               GenericParams(in));
}

// index_select(x, dim, index): reads the index and the selected slices,
// writes them.
OpCost IndexSelect(const Inputs& in) {
  const OpInput* x = TensorAt(in, 0);
  const OpInput* idx = TensorAt(in, 2);
  if (!x || !idx || x->dims.empty() || in[1].value.empty()) return {};
  std::vector<int64_t> d;
  if (!ParseIntList(in[1].value, &d) || d.size() != 1) return {};
  int64_t dim = d[0] < 0 ? d[0] + static_cast<int64_t>(x->dims.size()) : d[0];
  if (dim < 0 || dim >= static_cast<int64_t>(x->dims.size())) return {};
  const Checked out =
      x->dims[dim] == 0 ? 0 : Checked(x->Elements() / x->dims[dim]) * idx->Elements();
  return Known(0, idx->Bytes() + 2 * out * DTypeBytes(x->dtype), GenericParams(in));
}

// copy_(self, src): read src, write self.
OpCost Copy(const Inputs& in) {
  const OpInput* dst = TensorAt(in, 0);
  const OpInput* src = TensorAt(in, 1);
  if (!dst || !src) return {};
  return Known(0, Checked(dst->Bytes()) + src->Bytes(), GenericParams(in));
}

// Views, metadata and allocations: no FLOPs, no data moved.
bool IsFreeOp(std::string_view op) {
  static const char* const kFree[] = {"view",
                                      "reshape",
                                      "_reshape_alias",
                                      "_unsafe_view",
                                      "t",
                                      "transpose",
                                      "permute",
                                      "expand",
                                      "expand_as",
                                      "squeeze",
                                      "unsqueeze",
                                      "as_strided",
                                      "select",
                                      "slice",
                                      "narrow",
                                      "detach",
                                      "alias",
                                      "flatten",
                                      "unflatten",
                                      "view_as",
                                      "reshape_as",
                                      "empty",
                                      "empty_like",
                                      "empty_strided",
                                      "new_empty",
                                      "new_empty_strided",
                                      "resize",
                                      "set",
                                      "lift_fresh",
                                      "numel",
                                      "size",
                                      "stride",
                                      "unbind",
                                      "split",
                                      "chunk",
                                      "requires_grad",
                                      "result_type",
                                      "is_same_size",
                                      "_has_compatible_shallow_copy_type",
                                      "item",
                                      "_local_scalar_dense",
                                      "scalar_tensor",
                                      "numpy_T",
                                      "movedim",
                                      "diagonal"};
  for (const char* name : kFree) {
    if (op == name) return true;
  }
  return false;
}

// Ops whose work is what they call: dispatch wrappers and factories that
// fill through zero_/fill_/copy_.
bool IsWrapperOp(std::string_view op) {
  static const char* const kWrappers[] = {"contiguous",
                                          "to",
                                          "type_as",
                                          "zeros",
                                          "ones",
                                          "full",
                                          "zeros_like",
                                          "ones_like",
                                          "full_like",
                                          "randn",
                                          "rand",
                                          "cross_entropy_loss_backward",
                                          "linear_backward",
                                          "convolution_backward_overrideable",
                                          "_foreach_add",
                                          "_foreach_mul"};
  for (const char* name : kWrappers) {
    if (op == name) return true;
  }
  return false;
}

}  // namespace

std::string BaseOpName(std::string_view op_name) {
  std::string_view name = op_name;
  if (StartsWith(name, "aten::")) name.remove_prefix(6);
  // Dunder forms: __iadd__ -> add, __rmul__ -> mul, __and__ -> and.
  if (StartsWith(name, "__") && EndsWith(name, "__") && name.size() > 4) {
    name = name.substr(2, name.size() - 4);
    if (name.size() > 1 && (name[0] == 'i' || name[0] == 'r') &&
        (name.substr(1) == "add" || name.substr(1) == "sub" || name.substr(1) == "mul" ||
         name.substr(1) == "div" || name.substr(1) == "pow" || name.substr(1) == "and" ||
         name.substr(1) == "or" || name.substr(1) == "xor")) {
      name.remove_prefix(1);
    }
    if (name == "truediv") name = "div";
    return std::string(name);
  }
  // In-place and out-variant underscores: add_ -> add (a leading '_' is part
  // of the name: _softmax).
  if (name.size() > 1 && name.back() == '_') name.remove_suffix(1);
  return std::string(name);
}

bool IsAutogradNodeName(std::string_view op_name) {
  if (StartsWith(op_name, "autograd::") ||
      op_name.find("AccumulateGrad") != std::string_view::npos) {
    return true;
  }
  // XxxBackward<digits>, the names of autograd nodes (aten's backward
  // kernels are lower case: threshold_backward).
  const size_t at = op_name.rfind("Backward");
  if (at == std::string_view::npos) return false;
  for (size_t i = at + 8; i < op_name.size(); ++i) {
    if (op_name[i] < '0' || op_name[i] > '9') return false;
  }
  return true;
}

std::string GenericParams(const std::vector<OpInput>& inputs) {
  std::vector<std::string> shapes;
  for (const OpInput& x : inputs) {
    if (x.is_tensor) shapes.push_back(Dims(x.dims));
  }
  if (shapes.empty()) return "";
  const std::string t =
      shapes.size() == 1 ? shapes[0] : absl::StrCat("[", absl::StrJoin(shapes, ","), "]");
  return absl::StrCat("T=", t, ",", DTypes(inputs));
}

namespace {

// nullopt for an op no built-in formula names.
std::optional<OpCost> BuiltinOpCost(std::string_view op_name, const std::vector<OpInput>& inputs) {
  if (IsAutogradNodeName(op_name)) {
    OpCost c;
    c.container = true;
    c.params = GenericParams(inputs);
    return c;
  }
  const std::string op = BaseOpName(op_name);
  OpCost cost;
  if (op == "linear") {
    cost = Linear(inputs);
  } else if (op == "mm") {
    cost = MatrixMultiply(TensorAt(inputs, 0), TensorAt(inputs, 1));
  } else if (op == "addmm") {
    cost = MatrixMultiply(TensorAt(inputs, 1), TensorAt(inputs, 2));
  } else if (op == "bmm") {
    cost = BatchMultiply(TensorAt(inputs, 0), TensorAt(inputs, 1));
  } else if (op == "baddbmm") {
    cost = BatchMultiply(TensorAt(inputs, 1), TensorAt(inputs, 2));
  } else if (op == "matmul" || op == "matmul_" || op == "dot" || op == "vdot" || op == "mv") {
    cost = Matmul(TensorAt(inputs, 0), TensorAt(inputs, 1));
  } else if (auto conv = ConvOps().find(op); conv != ConvOps().end()) {
    cost = Convolution(conv->second, inputs);
  } else if (auto un = UnaryOps().find(op); un != UnaryOps().end()) {
    cost = Unary(un->second, inputs);
  } else if (auto el = ElementwiseOps().find(op); el != ElementwiseOps().end()) {
    cost = Elementwise(el->second, inputs);
  } else if (op == "sum" || op == "mean" || op == "norm") {
    cost = Reduction(op, inputs);
  } else if (op == "nll_loss" || op == "nll_loss_forward" || op == "nll_loss_nd" ||
             op == "nll_loss2d" || op == "nll_loss2d_forward") {
    cost = NllLoss(inputs, false);
  } else if (op == "nll_loss_backward" || op == "nll_loss2d_backward") {
    cost = NllLoss(inputs, true);
  } else if (op == "cross_entropy_loss" || op == "cross_entropy") {
    cost = CrossEntropy(inputs);
  } else if (op == "embedding") {
    cost = Embedding(inputs);
  } else if (op == "embedding_backward" || op == "embedding_dense_backward") {
    cost = EmbeddingBackward(inputs);
  } else if (op == "index_select") {
    cost = IndexSelect(inputs);
  } else if (op == "copy") {
    cost = Copy(inputs);
  } else if (IsFreeOp(op)) {
    cost = Known(0, 0, GenericParams(inputs));
  } else if (IsWrapperOp(op)) {
    cost.container = true;
  } else {
    return std::nullopt;
  }
  return cost;
}

}  // namespace

bool HasBuiltinOpCost(std::string_view op_name) { return BuiltinOpCost(op_name, {}).has_value(); }

OpCost ComputeOpCost(std::string_view op_name, const std::vector<OpInput>& inputs,
                     Direction direction) {
  (void)direction;  // aten ops carry their own shapes (see the header)
  std::optional<OpCost> builtin = BuiltinOpCost(op_name, inputs);
  OpCost cost = builtin ? *std::move(builtin) : OpCost{};
  if (!builtin && !inputs.empty()) {  // a registered formula needs the shapes
    auto custom = CustomOpCost(op_name, inputs);
    if (custom && custom->first >= 0 && custom->second >= 0) {
      cost = Known(Checked(custom->first), Checked(custom->second), "");
    }
  }
  if (cost.params.empty()) cost.params = GenericParams(inputs);
  return cost;
}

}  // namespace analysis
}  // namespace neuronprof
