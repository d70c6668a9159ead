#include "core/graph/synthetic_model_graph.h"

#include <algorithm>
#include <functional>
#include <numeric>

namespace nova {
namespace {

using Shape = std::vector<std::int64_t>;

double numel(const Shape& s) {
  return std::accumulate(s.begin(), s.end(), 1.0, [](double a, std::int64_t b) { return a * b; });
}

Shape contiguous_stride(const Shape& s) {
  Shape stride(s.size(), 1);
  for (int i = static_cast<int>(s.size()) - 2; i >= 0; --i) stride[i] = stride[i + 1] * s[i + 1];
  return stride;
}

// Appends nodes, parameters and inputs to a ModelGraph the way intake would record them.
class GraphBuilder {
 public:
  GraphBuilder(std::string dtype, int element_bytes)
      : dtype_(std::move(dtype)), element_bytes_(element_bytes) {}

  std::string input(const std::string& name, const Shape& shape) {
    g.inputs.push_back(tensor(name, shape));
    return name;
  }
  std::string param(const std::string& name, const Shape& shape) {
    std::string input = "p_" + name;
    std::replace(input.begin(), input.end(), '.', '_');
    g.params.push_back(ParamInfo{name, input, tensor(input, shape), false});
    shapes_[input] = shape;
    return input;
  }
  // One node; `args` are (schema name, tensor) pairs, `constants` (schema name, value) pairs.
  std::string op(const std::string& op, OpClass cls, const std::string& scope, const std::string& scope_type,
                 std::vector<std::pair<std::string, std::string>> args, const Shape& out, double flops = -1,
                 std::vector<std::pair<std::string, nlohmann::json>> constants = {}, int line = 0,
                 const std::string& source = {}) {
    GraphNode n;
    n.id = static_cast<int>(g.nodes.size());
    n.op = op;
    n.target = "aten." + op + ".default";
    n.op_class = cls;
    n.scope = scope;
    n.scope_type = scope_type;
    double bytes = numel(out) * element_bytes_;
    for (auto& [name, t] : args) {
      n.args.push_back(NodeArg{name, t, nullptr});
      bytes += numel(shapes_[t]) * element_bytes_;
    }
    for (auto& [name, value] : constants) n.args.push_back(NodeArg{name, "", value});
    std::string value = op + (counts_[op]++ ? "_" + std::to_string(counts_[op] - 1) : "");
    n.outputs.push_back(tensor(value, out));
    n.flops = flops >= 0 ? flops : numel(out);
    n.bytes = bytes;
    n.file = file_;
    n.line = line;
    n.source_text = source;
    g.nodes.push_back(std::move(n));
    return value;
  }
  void set_file(std::string file) { file_ = std::move(file); }
  int last_id() const { return g.nodes.back().id; }

  ModelGraph g;

 private:
  TensorInfo tensor(const std::string& name, const Shape& shape) {
    shapes_[name] = shape;
    return TensorInfo{name, shape, contiguous_stride(shape), dtype_};
  }
  std::string dtype_;
  int element_bytes_;
  std::string file_;
  std::map<std::string, Shape> shapes_;
  std::map<std::string, int> counts_;
};

constexpr const char* kLinear = "torch.nn.modules.linear.Linear";
constexpr const char* kLayerNorm = "torch.nn.modules.normalization.LayerNorm";

// The four core-ATen nodes of nn.Linear on a [B, T, in] input: view, permute(weight), addmm, view.
std::string linear(GraphBuilder& b, const std::string& scope, const std::string& x, std::int64_t rows,
                   std::int64_t seq, std::int64_t in, std::int64_t out, int line,
                   std::vector<int>* ids = nullptr) {
  std::string w = b.param(scope + ".weight", {out, in});
  std::string bias = b.param(scope + ".bias", {out});
  std::string src = "return F.linear(input, self.weight, self.bias)";
  std::string flat = b.op("view", OpClass::DataMovement, scope, kLinear, {{"self", x}}, {rows * seq, in}, 0,
                          {{"size", {rows * seq, in}}}, line, src);
  std::string wt = b.op("permute", OpClass::DataMovement, scope, kLinear, {{"self", w}}, {in, out}, 0,
                        {{"dims", {1, 0}}}, line, src);
  std::string mm =
      b.op("addmm", OpClass::Matmul, scope, kLinear, {{"self", bias}, {"mat1", flat}, {"mat2", wt}},
           {rows * seq, out}, 2.0 * rows * seq * in * out, {}, line, src);
  if (ids) ids->push_back(b.last_id());
  return b.op("view", OpClass::DataMovement, scope, kLinear, {{"self", mm}}, {rows, seq, out}, 0,
              {{"size", {rows, seq, out}}}, line, src);
}

std::string layer_norm(GraphBuilder& b, const std::string& scope, const std::string& x, const Shape& shape,
                       int line) {
  std::string w = b.param(scope + ".weight", {shape.back()});
  std::string bias = b.param(scope + ".bias", {shape.back()});
  return b.op("layer_norm", OpClass::Normalization, scope, kLayerNorm,
              {{"input", x}, {"weight", w}, {"bias", bias}}, shape, 5 * numel(shape),
              {{"normalized_shape", {shape.back()}}, {"eps", 1e-5}}, line, "return F.layer_norm(input, ...)");
}

}  // namespace

ModelGraph make_seed_demo_graph() {
  GraphBuilder b("float32", 4);
  b.g.model_path = "examples/conv2d_min_add_multiply.py";
  b.g.model_form = "kernelbench";
  b.g.capture_route = "torch.export";
  b.set_file("examples/conv2d_min_add_multiply.py");
  std::string x = b.input("x", {128, 3, 32, 32});
  std::string w = b.param("conv_weight", {16, 3, 3, 3});
  std::string cb = b.param("conv_bias", {16});
  std::string bias = b.param("bias", {16, 1, 1});
  Shape out = {128, 16, 30, 30};
  std::string conv = b.op("convolution", OpClass::Convolution, "", "",
                          {{"input", x}, {"weight", w}, {"bias", cb}}, out, 2.0 * numel(out) * 3 * 3 * 3,
                          {{"stride", {1, 1}}, {"padding", {0, 0}}, {"dilation", {1, 1}}, {"groups", 1}}, 29,
                          "x = F.conv2d(x, conv_weight, bias=conv_bias)");
  std::string mn = b.op("minimum", OpClass::Elementwise, "", "", {{"self", conv}}, out, -1, {{"other", 0.5}},
                        30, "x = torch.min(x, torch.tensor(constant_value))");
  std::string add = b.op("add", OpClass::Elementwise, "", "", {{"self", mn}, {"other", bias}}, out, -1, {},
                         31, "x = x + bias");
  std::string mul = b.op("mul", OpClass::Elementwise, "", "", {{"self", add}}, out, -1, {{"other", 2.0}}, 32,
                         "x = x * scaling_factor");
  b.g.outputs.push_back(b.g.nodes.back().outputs.front());
  FusionGroup group;
  group.id = 0;
  group.kind = "conv+epilogue";
  group.anchor = 0;
  group.nodes = {0, 1, 2, 3};
  group.inputs = {x, w, cb, bias};
  group.outputs = {mul};
  b.g.groups.push_back(group);
  return std::move(b.g);
}

ModelGraph make_transformer_graph(int node_count) {
  constexpr int kPerBlock = 43, kFixed = 6;
  const std::int64_t B = 8, T = 512, D = 768, H = 12, hd = 64, F = 3072, V = 32000;
  node_count = std::max(node_count, 50);
  const int blocks = std::max(1, (node_count - kFixed) / kPerBlock);

  GraphBuilder b("float16", 2);
  b.g.model_path = "synthetic/transformer.py";
  b.g.model_form = "functional";
  b.g.capture_route = "torch.export";
  b.set_file("synthetic/transformer.py");
  std::string h = b.input("x", {B, T, D});
  std::string pos = b.param("embed.pos", {T, D});
  h = b.op("add", OpClass::Elementwise, "embed", "model.Embedding", {{"self", h}, {"other", pos}}, {B, T, D},
           -1, {}, 12, "return x + self.pos");

  int group_id = 0;
  for (int i = 0; i < blocks; ++i) {
    std::string L = "layers." + std::to_string(i);
    std::string A = L + ".attn";
    const char* kAttn = "model.Attention";
    std::string n1 = layer_norm(b, L + ".ln1", h, {B, T, D}, 40);
    std::string q = linear(b, A + ".q_proj", n1, B, T, D, D, 21);
    std::string k = linear(b, A + ".k_proj", n1, B, T, D, D, 22);
    std::string v = linear(b, A + ".v_proj", n1, B, T, D, D, 23);
    auto heads = [&](const std::string& t) {
      std::string r = b.op("view", OpClass::DataMovement, A, kAttn, {{"self", t}}, {B, T, H, hd}, 0,
                           {{"size", {B, T, H, hd}}}, 24, "q = q.view(B, T, H, hd).transpose(1, 2)");
      return b.op("permute", OpClass::DataMovement, A, kAttn, {{"self", r}}, {B, H, T, hd}, 0,
                  {{"dims", {0, 2, 1, 3}}}, 24, "q = q.view(B, T, H, hd).transpose(1, 2)");
    };
    q = heads(q);
    k = heads(k);
    v = heads(v);
    std::string kt = b.op("transpose", OpClass::DataMovement, A, kAttn, {{"self", k}}, {B, H, hd, T}, 0,
                          {{"dim0", -2}, {"dim1", -1}}, 25, "att = q @ k.transpose(-2, -1)");
    std::string s = b.op("matmul", OpClass::Matmul, A, kAttn, {{"self", q}, {"other", kt}}, {B, H, T, T},
                         2.0 * B * H * T * T * hd, {}, 25, "att = q @ k.transpose(-2, -1)");
    s = b.op("mul", OpClass::Elementwise, A, kAttn, {{"self", s}}, {B, H, T, T}, -1, {{"other", 0.125}}, 26,
             "att = att * self.scale");
    s = b.op("_softmax", OpClass::Reduction, A, kAttn, {{"self", s}}, {B, H, T, T}, 5.0 * B * H * T * T,
             {{"dim", -1}, {"half_to_float", false}}, 27, "att = att.softmax(dim=-1)");
    std::string o = b.op("matmul", OpClass::Matmul, A, kAttn, {{"self", s}, {"other", v}}, {B, H, T, hd},
                         2.0 * B * H * T * T * hd, {}, 28, "y = att @ v");
    o = b.op("permute", OpClass::DataMovement, A, kAttn, {{"self", o}}, {B, T, H, hd}, 0,
             {{"dims", {0, 2, 1, 3}}}, 29, "y = y.transpose(1, 2).contiguous().view(B, T, D)");
    o = b.op("clone", OpClass::DataMovement, A, kAttn, {{"self", o}}, {B, T, H, hd}, 0,
             {{"memory_format", "contiguous_format"}}, 29,
             "y = y.transpose(1, 2).contiguous().view(B, T, D)");
    o = b.op("view", OpClass::DataMovement, A, kAttn, {{"self", o}}, {B, T, D}, 0, {{"size", {B, T, D}}}, 29,
             "y = y.transpose(1, 2).contiguous().view(B, T, D)");
    o = linear(b, A + ".o_proj", o, B, T, D, D, 30);
    h = b.op("add", OpClass::Elementwise, L, "model.Block", {{"self", h}, {"other", o}}, {B, T, D}, -1, {},
             41, "x = x + self.attn(self.ln1(x))");
    std::string n2 = layer_norm(b, L + ".ln2", h, {B, T, D}, 42);
    std::vector<int> fused;
    std::string f = linear(b, L + ".mlp.fc1", n2, B, T, D, F, 34, &fused);
    fused.push_back(b.last_id());
    f = b.op("gelu", OpClass::Elementwise, L + ".mlp", "model.MLP", {{"self", f}}, {B, T, F}, 8.0 * B * T * F,
             {{"approximate", "tanh"}}, 35, "x = F.gelu(self.fc1(x), approximate='tanh')");
    fused.push_back(b.last_id());
    b.g.groups.push_back(FusionGroup{group_id++, "gemm+epilogue", fused.front(), fused, {}, {f}, 0, 0, {}});
    f = linear(b, L + ".mlp.fc2", f, B, T, F, D, 36);
    h = b.op("add", OpClass::Elementwise, L, "model.Block", {{"self", h}, {"other", f}}, {B, T, D}, -1, {},
             43, "x = x + self.mlp(self.ln2(x))");
  }
  h = layer_norm(b, "norm", h, {B, T, D}, 50);
  h = linear(b, "head", h, B, T, D, V, 51);
  for (int pad = static_cast<int>(b.g.nodes.size()); pad < node_count; ++pad)
    h = b.op(pad % 2 ? "mul" : "add", OpClass::Elementwise, "head", kLinear, {{"self", h}}, {B, T, V}, -1,
             {{"other", pad % 2 ? 0.5 : 1.0}}, 52, "logits = logits * self.temperature + self.offset");
  b.g.outputs.push_back(b.g.nodes.back().outputs.front());
  return std::move(b.g);
}

}  // namespace nova
