#include "core/gen/pointwise_emitter.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include <fmt/format.h>

namespace nova {
namespace {

std::string strip_aten(const std::string& target) {
  return target.rfind("aten.", 0) == 0 ? target.substr(5) : target;
}

std::int64_t normalize_dim(std::int64_t dim, std::size_t rank) {
  return dim < 0 ? dim + static_cast<std::int64_t>(rank) : dim;
}

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i];
  return out;
}

}  // namespace

std::vector<std::int64_t> contiguous_strides(const std::vector<std::int64_t>& shape) {
  std::vector<std::int64_t> s(shape.size(), 1);
  for (int d = static_cast<int>(shape.size()) - 2; d >= 0; --d) s[d] = s[d + 1] * shape[d + 1];
  return s;
}

std::string ravel(const std::vector<std::string>& coords, const std::vector<std::int64_t>& shape,
                  const char* suffix) {
  auto strides = contiguous_strides(shape);
  std::vector<std::string> terms;
  for (std::size_t d = 0; d < coords.size(); ++d) {
    if (shape[d] == 1 || coords[d] == "0") continue;
    terms.push_back(strides[d] == 1 ? coords[d] : fmt::format("{} * {}{}", coords[d], strides[d], suffix));
  }
  return terms.empty() ? "0" : join(terms, " + ");
}

namespace {

bool is_identity_op(const std::string& op) {
  static const std::set<std::string> ops = {
      "clone.default",      "detach.default",          "alias.default",
      "contiguous.default", "lift_fresh_copy.default", "dropout.default",
      "type_as.default",    "_to_copy.default",        "to.dtype",
      "lift_fresh_copy",    "detach_.default",         "positive.default"};
  return ops.count(op) > 0;
}

}  // namespace

const NodeArg* find_arg(const GraphNode& node, const std::string& name, int position) {
  for (const auto& a : node.args)
    if (a.name == name) return &a;
  if (position >= 0 && position < static_cast<int>(node.args.size())) return &node.args[position];
  return nullptr;
}

std::string aten_op(const GraphNode& node) { return strip_aten(node.target); }

std::vector<std::int64_t> reduced_dims(const GraphNode& n, std::size_t rank) {
  const NodeArg* d = find_arg(n, "dim", 1);
  std::vector<std::int64_t> dims;
  if (d && d->constant.is_number()) dims = {d->constant.get<std::int64_t>()};
  if (d && d->constant.is_array()) dims = d->constant.get<std::vector<std::int64_t>>();
  if (dims.empty())
    for (std::size_t i = 0; i < rank; ++i) dims.push_back(static_cast<std::int64_t>(i));
  for (auto& x : dims) x = x < 0 ? x + static_cast<std::int64_t>(rank) : x;
  std::sort(dims.begin(), dims.end());
  dims.erase(std::unique(dims.begin(), dims.end()), dims.end());
  return dims;
}

std::int64_t numel(const std::vector<std::int64_t>& shape) {
  std::int64_t n = 1;
  for (auto s : shape) n *= s;
  return n;
}

std::vector<std::string> unravel(const std::string& flat, const std::vector<std::int64_t>& shape,
                                 const char* suffix) {
  std::vector<std::string> coords(shape.size());
  std::int64_t stride = 1;
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
    if (shape[d] == 1)
      coords[d] = "0";
    else if (d == 0)
      coords[d] = stride == 1 ? flat : fmt::format("({} / {}{})", flat, stride, suffix);
    else if (stride == 1)
      coords[d] = fmt::format("({} % {}{})", flat, shape[d], suffix);
    else
      coords[d] = fmt::format("(({0} / {1}{3}) % {2}{3})", flat, stride, shape[d], suffix);
    stride *= shape[d];
  }
  return coords;
}

std::string PointwiseEmitter::storage_type(const std::string& dtype) {
  if (dtype == "float32") return "float";
  if (dtype == "float16") return "__half";
  if (dtype == "bfloat16") return "__nv_bfloat16";
  if (dtype == "float64") return "double";
  if (dtype == "bool") return "bool";
  if (dtype == "int64") return "long long";
  if (dtype == "int32") return "int";
  throw UnsupportedGroup("dtype " + dtype + " is not supported by the builtin generator");
}

std::string PointwiseEmitter::float_literal(const nlohmann::json& c) {
  if (c.is_string()) {
    std::string s = c.get<std::string>();
    if (s == "inf") return "__int_as_float(0x7f800000)";
    if (s == "-inf") return "__int_as_float(0xff800000)";
    if (s == "nan") return "__int_as_float(0x7fc00000)";
    throw UnsupportedGroup("constant '" + s + "' is not a number");
  }
  if (c.is_boolean()) return c.get<bool>() ? "1.0f" : "0.0f";
  if (!c.is_number()) throw UnsupportedGroup("constant " + c.dump() + " is not a number");
  double v = c.get<double>();
  if (std::isinf(v)) return v > 0 ? "__int_as_float(0x7f800000)" : "__int_as_float(0xff800000)";
  if (std::isnan(v)) return "__int_as_float(0x7fc00000)";
  return fmt::format("{:.9g}f", v).find_first_of(".e") == std::string::npos ? fmt::format("{:.9g}.0f", v)
                                                                            : fmt::format("{:.9g}f", v);
}

PointwiseEmitter::PointwiseEmitter(const ModelGraph& graph, const FusionGroup& group)
    : graph_(graph), group_(group), members_(group.nodes.begin(), group.nodes.end()) {
  for (const auto& t : graph.inputs) tensors_[t.name] = t;
  for (const auto& p : graph.params) tensors_[p.graph_input] = p.tensor;
  for (const auto& n : graph.nodes)
    for (std::size_t i = 0; i < n.outputs.size(); ++i) {
      tensors_[n.outputs[i].name] = n.outputs[i];
      producers_[n.outputs[i].name] = {&n, static_cast<int>(i)};
    }
}

const TensorInfo& PointwiseEmitter::info(const std::string& tensor) const {
  auto it = tensors_.find(tensor);
  if (it == tensors_.end()) throw UnsupportedGroup("unknown tensor '" + tensor + "'");
  return it->second;
}

void PointwiseEmitter::bind_memory(const std::string& tensor, const std::string& pointer) {
  bindings_[tensor] = Binding{false, pointer, {}};
}

void PointwiseEmitter::bind_register(const std::string& tensor, const std::string& expr,
                                     const std::vector<std::string>& coords) {
  bindings_[tensor] = Binding{true, expr, coords};
}

namespace {
std::string flat_key(const std::vector<std::string>& coords, const std::vector<std::int64_t>& shape) {
  std::string key = join(coords, ",") + "|";
  for (auto d : shape) key += std::to_string(d) + ",";
  return key;
}
}  // namespace

void PointwiseEmitter::note_flat(const std::vector<std::string>& coords,
                                 const std::vector<std::int64_t>& shape, const std::string& flat) {
  flats_[flat_key(coords, shape)] = flat;
}

std::string PointwiseEmitter::offset_of(const std::vector<std::string>& coords,
                                        const std::vector<std::int64_t>& shape) const {
  if (auto it = flats_.find(flat_key(coords, shape)); it != flats_.end()) return it->second;
  return ravel(coords, shape, offset_suffix_.c_str());
}

std::string PointwiseEmitter::fresh(const std::string& expr) {
  std::string name = fmt::format("v{}", counter_++);
  lines_.push_back(fmt::format("const float {} = {};", name, expr));
  return name;
}

std::string PointwiseEmitter::take_code(int indent) {
  std::string pad(static_cast<std::size_t>(indent), ' ');
  std::string out;
  for (const auto& l : lines_) out += pad + l + "\n";
  lines_.clear();
  return out;
}

std::optional<std::string> PointwiseEmitter::start(const std::string& tensor,
                                                   const std::vector<std::string>& coords,
                                                   std::vector<PendingNode>& stack) {
  const auto& shape = info(tensor).shape;
  if (coords.size() != shape.size())
    throw UnsupportedGroup(
        fmt::format("'{}' has {} dimensions, asked at {}", tensor, shape.size(), coords.size()));
  std::string key = tensor + "@" + join(coords, ",");
  if (auto it = memo_.find(key); it != memo_.end()) return it->second;
  std::string result;
  if (auto b = bindings_.find(tensor); b != bindings_.end()) {
    if (b->second.in_register) {
      if (b->second.coords != coords)
        throw UnsupportedGroup("'" + tensor +
                               "' (the anchor's result) is read at other coordinates than its own");
      result = b->second.pointer_or_expr;
    } else {
      reads_.insert(tensor);
      std::string offset = offset_of(coords, shape);
      result = fresh(fmt::format("nova::to_f({}[{}])", b->second.pointer_or_expr, offset));
    }
    memo_[key] = result;
    return result;
  }
  auto p = producers_.find(tensor);
  if (p == producers_.end() || !members_.count(p->second.first->id))
    throw UnsupportedGroup("value '" + tensor + "' is neither an input of the group nor computed in it");
  stack.push_back(PendingNode{eval_node(*p->second.first, p->second.second, coords), std::move(key)});
  return std::nullopt;
}

std::string PointwiseEmitter::value(const std::string& tensor, const std::vector<std::string>& coords) {
  // The work stack: node evaluations waiting for an operand, the innermost last. Each step resumes
  // the innermost one; it either finishes (its value answers the one below it) or asks for another
  // operand, which is known already or pushes the evaluation of the node that produces it.
  std::vector<PendingNode> stack;
  if (auto known = start(tensor, coords, stack)) return *known;
  for (;;) {
    const std::size_t top = stack.size() - 1;
    stack[top].evaluation.resume();
    if (stack[top].evaluation.done()) {
      std::string result = stack[top].evaluation.result();
      memo_[stack[top].key] = result;
      stack.pop_back();
      if (stack.empty()) return result;
      stack.back().evaluation.answer(std::move(result));
      continue;
    }
    NodeEvaluation::Request r = stack[top].evaluation.take_request();
    if (auto known = start(r.tensor, r.coords, stack)) stack[top].evaluation.answer(std::move(*known));
  }
}

std::vector<std::string> PointwiseEmitter::broadcast_coords(const std::string& tensor,
                                                            const std::vector<std::int64_t>& out_shape,
                                                            const std::vector<std::string>& coords) const {
  const auto& t = info(tensor).shape;
  if (t.size() > out_shape.size())
    throw UnsupportedGroup("'" + tensor + "' has more dimensions than the result it broadcasts to");
  std::size_t lead = out_shape.size() - t.size();
  std::vector<std::string> src(t.size());
  for (std::size_t i = 0; i < t.size(); ++i)
    src[i] = (t[i] == 1 && out_shape[lead + i] != 1) ? "0" : coords[lead + i];
  return src;
}

NodeEvaluation::Operand PointwiseEmitter::broadcast_operand(const std::string& tensor,
                                                            const std::vector<std::int64_t>& out_shape,
                                                            const std::vector<std::string>& coords) const {
  return NodeEvaluation::Operand::of(tensor, broadcast_coords(tensor, out_shape, coords));
}

bool PointwiseEmitter::load_lanes_float4(const std::string& tensor,
                                         const std::vector<std::int64_t>& out_shape,
                                         const std::vector<std::vector<std::string>>& lanes) {
  const TensorInfo& t = info(tensor);
  auto c0 = broadcast_coords(tensor, out_shape, lanes[0]);
  if (c0 == broadcast_coords(tensor, out_shape, lanes[1])) return true;  // one scalar serves all lanes
  auto b = bindings_.find(tensor);
  if (b == bindings_.end() || b->second.in_register || t.shape.empty() ||
      t.shape.back() != out_shape.back() || t.dtype != "float32")
    return false;
  std::string var = fmt::format("q{}", counter_++);
  std::string address = fmt::format("reinterpret_cast<const float4*>({} + ({}))", b->second.pointer_or_expr,
                                    offset_of(c0, t.shape));
  lines_.push_back(fmt::format("const float4 {} = *{};", var, address));
  float4_reads_.insert(tensor);
  static const char* comp[] = {"x", "y", "z", "w"};
  for (std::size_t l = 0; l < 4; ++l)
    preload(tensor, broadcast_coords(tensor, out_shape, lanes[l]), fmt::format("{}.{}", var, comp[l]));
  return true;
}

void PointwiseEmitter::preload(const std::string& tensor, const std::vector<std::string>& coords,
                               const std::string& expr) {
  reads_.insert(tensor);
  memo_[tensor + "@" + join(coords, ",")] = expr;
}

NodeEvaluation::Operand PointwiseEmitter::operand(const GraphNode& node, const std::string& arg_name,
                                                  int position, const std::vector<std::int64_t>& out_shape,
                                                  const std::vector<std::string>& coords) const {
  const NodeArg* a = find_arg(node, arg_name, position);
  if (!a) throw UnsupportedGroup(fmt::format("{} has no argument '{}'", node.target, arg_name));
  if (!a->tensor.empty()) return broadcast_operand(a->tensor, out_shape, coords);
  return NodeEvaluation::Operand::known(float_literal(a->constant));
}

NodeEvaluation PointwiseEmitter::eval_node(const GraphNode& node, int output_index,
                                           std::vector<std::string> coords) {
  // A coroutine: every operand is awaited in its own statement, in the order the values are
  // emitted (the operands of one op from the last to the first, as the recursive form evaluated the
  // arguments of its format calls), so the kernels stay byte for byte what they were.
  visited_.insert(node.id);
  const std::string op = strip_aten(node.target);
  const auto& out_shape = node.outputs.at(static_cast<std::size_t>(output_index)).shape;
  const std::size_t rank = out_shape.size();
  auto X = [&](const char* name = "self", int pos = 0) {
    return operand(node, name, pos, out_shape, coords);
  };
  auto constant = [&](const char* name, int pos, const nlohmann::json& fallback) -> nlohmann::json {
    const NodeArg* a = find_arg(node, name, pos);
    if (!a) return fallback;
    if (!a->tensor.empty())
      throw UnsupportedGroup(fmt::format("{}: argument '{}' must be a constant", op, name));
    return a->constant.is_null() ? fallback : a->constant;
  };
  auto lit = [&](const char* name, int pos, double fallback) {
    return float_literal(constant(name, pos, fallback));
  };
  auto self_tensor = [&]() -> std::string {
    const NodeArg* a = find_arg(node, "self", 0);
    if (!a || a->tensor.empty()) throw UnsupportedGroup(op + ": its input is not a tensor");
    return a->tensor;
  };
  auto int_list = [&](const char* name, int pos) {
    return constant(name, pos, nlohmann::json::array()).get<std::vector<std::int64_t>>();
  };

  // ---- identity and casts ----
  if (is_identity_op(op)) {
    if (op == "dropout.default" && constant("train", 2, false).get<bool>())
      throw UnsupportedGroup("dropout in training mode is random: not fused");
    std::string v = co_await broadcast_operand(self_tensor(), out_shape, coords);
    std::string dtype = node.outputs[0].dtype;
    if (dtype == "float16" || dtype == "bfloat16")  // round like the cast does
      co_return fresh(fmt::format("nova::to_f(nova::from_f<{}>({}))", storage_type(dtype), v));
    co_return v;
  }

  // ---- elementwise binary ----
  if (op == "add.Tensor" || op == "add.Scalar" || op == "sub.Tensor" || op == "sub.Scalar") {
    std::string alpha = lit("alpha", 2, 1.0);
    std::string other = co_await X("other", 1);
    if (alpha != "1.0f") other = fmt::format("({} * {})", alpha, other);
    std::string self = co_await X();
    co_return fresh(fmt::format("{} {} {}", self, op[0] == 'a' ? "+" : "-", other));
  }
  if (op == "rsub.Scalar" || op == "rsub.Tensor") {
    std::string alpha = lit("alpha", 2, 1.0);
    std::string self = co_await X();
    std::string other = co_await X("other", 1);
    co_return fresh(fmt::format("{} - {} * {}", other, alpha, self));
  }
  // Ops of two operands (`self` and `other` or `exponent`) in one expression: the second is emitted
  // first.
  static const std::map<std::string, std::pair<const char*, const char*>> binary = {
      {"mul.Tensor", {"{} * {}", "other"}},
      {"mul.Scalar", {"{} * {}", "other"}},
      {"minimum.default", {"nova::minimumf_({}, {})", "other"}},
      {"min.other", {"nova::minimumf_({}, {})", "other"}},
      {"maximum.default", {"nova::maximumf_({}, {})", "other"}},
      {"max.other", {"nova::maximumf_({}, {})", "other"}},
      {"pow.Tensor_Tensor", {"powf({}, {})", "exponent"}},
      {"pow.Scalar", {"powf({}, {})", "exponent"}}};
  if (auto it = binary.find(op); it != binary.end()) {
    std::string second = co_await X(it->second.second, 1);
    std::string first = co_await X();
    co_return fresh(fmt::format(fmt::runtime(it->second.first), first, second));
  }
  if (op == "div.Tensor" || op == "div.Scalar") {
    auto rm = constant("rounding_mode", 2, nullptr);
    std::string other = co_await X("other", 1);
    std::string self = co_await X();
    if (!rm.is_null())
      co_return fresh(fmt::format("{}({} / {})", rm == "floor" ? "floorf" : "truncf", self, other));
    co_return fresh(fmt::format("{} / {}", self, other));
  }
  if (op == "pow.Tensor_Scalar") {
    auto e = constant("exponent", 1, 1.0);
    std::string x = co_await X();
    if (e.is_number() && e.get<double>() == 2.0) co_return fresh(fmt::format("{} * {}", x, x));
    co_return fresh(fmt::format("powf({}, {})", x, float_literal(e)));
  }
  static const std::map<std::string, std::string> comparisons = {{"gt", ">"},  {"lt", "<"},  {"ge", ">="},
                                                                 {"le", "<="}, {"eq", "=="}, {"ne", "!="}};
  if (auto dot = op.find('.'); dot != std::string::npos && comparisons.count(op.substr(0, dot))) {
    std::string other = co_await X("other", 1);
    std::string self = co_await X();
    co_return fresh(fmt::format("({} {} {}) ? 1.0f : 0.0f", self, comparisons.at(op.substr(0, dot)), other));
  }
  if (op == "where.self") {
    std::string other = co_await X("other", 2);
    std::string self = co_await X("self", 1);
    std::string condition = co_await X("condition", 0);
    co_return fresh(fmt::format("({} != 0.0f) ? {} : {}", condition, self, other));
  }
  if (op == "masked_fill.Scalar" || op == "masked_fill.Tensor") {
    std::string self = co_await X();
    std::string value = co_await X("value", 2);
    std::string mask = co_await X("mask", 1);
    co_return fresh(fmt::format("({} != 0.0f) ? {} : {}", mask, value, self));
  }
  if (op == "logical_not.default") {
    std::string x = co_await X();
    co_return fresh(fmt::format("({} == 0.0f) ? 1.0f : 0.0f", x));
  }

  // ---- elementwise unary ----
  static const std::map<std::string, std::string> unary = {
      {"relu.default", "nova::reluf_({})"},
      {"sigmoid.default", "nova::sigmoidf_({})"},
      {"tanh.default", "tanhf({})"},
      {"exp.default", "expf({})"},
      {"log.default", "logf({})"},
      {"abs.default", "fabsf({})"},
      {"neg.default", "-({})"},
      {"sqrt.default", "sqrtf({})"},
      {"rsqrt.default", "rsqrtf({})"},
      {"reciprocal.default", "1.0f / ({})"},
      {"erf.default", "erff({})"},
      {"silu.default", "nova::siluf_({})"},
      {"hardswish.default", "nova::hardswishf_({})"},
      {"hardsigmoid.default", "nova::hardsigmoidf_({})"},
      {"mish.default", "nova::mishf_({})"},
      {"selu.default", "nova::seluf_({})"},
      {"log1p.default", "log1pf({})"},
      {"expm1.default", "expm1f({})"},
      {"sin.default", "sinf({})"},
      {"cos.default", "cosf({})"},
      {"square.default", "({0}) * ({0})"},
      {"sign.default", "(float)((0.0f < {0}) - ({0} < 0.0f))"},
  };
  if (auto it = unary.find(op); it != unary.end()) {
    std::string x = co_await X();
    co_return fresh(fmt::format(fmt::runtime(it->second), x));
  }
  // Ops of one operand and constants.
  if (op == "gelu.default") {
    auto approx = constant("approximate", 1, "none");
    std::string x = co_await X();
    co_return fresh(fmt::format("nova::{}({})", approx == "tanh" ? "gelu_tanh" : "gelu_erf", x));
  }
  if (op == "leaky_relu.default") {
    std::string slope = lit("negative_slope", 1, 0.01);
    std::string x = co_await X();
    co_return fresh(fmt::format("nova::leaky_reluf_({}, {})", x, slope));
  }
  if (op == "hardtanh.default") {
    std::string max = lit("max_val", 2, 1.0), min = lit("min_val", 1, -1.0);
    std::string x = co_await X();
    co_return fresh(fmt::format("nova::hardtanhf_({}, {}, {})", x, min, max));
  }
  if (op == "softplus.default") {
    std::string threshold = lit("threshold", 2, 20.0), beta = lit("beta", 1, 1.0);
    std::string x = co_await X();
    co_return fresh(fmt::format("nova::softplusf_({}, {}, {})", x, beta, threshold));
  }
  if (op == "elu.default") {
    std::string x = co_await X();
    co_return fresh(fmt::format("{2} * ({0} > 0.0f ? {0} : {1} * expm1f({0} * {3}))", x, lit("alpha", 1, 1.0),
                                lit("scale", 2, 1.0), lit("input_scale", 3, 1.0)));
  }
  // Batch norm in eval form (running statistics): per element of channel c (dimension 1),
  // (x - mean[c]) / sqrt(var[c] + eps) * weight[c] + bias[c]. The per-channel reads are not numpy
  // broadcasts of the result's coordinates, so no 16-byte path is taken through them.
  if (op == "batch_norm.default" || op == "_native_batch_norm_legit_no_training.default") {
    const bool legit = op != "batch_norm.default";
    if (!legit && constant("training", 5, false).get<bool>())
      throw UnsupportedGroup("batch norm in training form (batch statistics): no builtin rule");
    if (rank < 2 || output_index != 0) throw UnsupportedGroup(op + " without a channel dimension");
    remapped_ = true;
    const std::string eps = lit("eps", legit ? 6 : 7, 1e-5);
    auto channel = [&](const char* name, int pos) -> std::optional<NodeEvaluation::Operand> {
      const NodeArg* a = find_arg(node, name, pos);
      if (!a || a->tensor.empty()) return std::nullopt;
      return NodeEvaluation::Operand::of(a->tensor, {coords[1]});
    };
    auto mean = channel("running_mean", 3), var = channel("running_var", 4);
    if (!mean || !var) throw UnsupportedGroup(op + " without running statistics");
    std::string y = co_await X("input", 0);
    std::string m = co_await std::move(*mean);
    std::string v = co_await std::move(*var);
    y = fresh(fmt::format("({} - {}) * rsqrtf({} + {})", y, m, v, eps));
    if (auto w = channel("weight", 1)) {
      std::string wv = co_await std::move(*w);
      y = fresh(fmt::format("{} * {}", y, wv));
    }
    if (auto b = channel("bias", 2)) {
      std::string bv = co_await std::move(*b);
      y = fresh(fmt::format("{} + {}", y, bv));
    }
    co_return y;
  }
  if (op == "clamp.default" || op == "clamp.Tensor" || op == "clamp_min.default" ||
      op == "clamp_max.default") {
    std::string v = co_await X();
    bool has_min = op != "clamp_max.default", has_max = op != "clamp_min.default";
    const char* min_name = "min";
    int max_pos = op == "clamp_max.default" ? 1 : 2;
    if (has_min) {
      const NodeArg* a = find_arg(node, min_name, 1);
      if (a && (!a->tensor.empty() || !a->constant.is_null())) {
        std::string min = co_await X(min_name, 1);
        v = fresh(fmt::format("nova::maximumf_({}, {})", v, min));
      }
    }
    if (has_max) {
      const NodeArg* a = find_arg(node, "max", max_pos);
      if (a && (!a->tensor.empty() || !a->constant.is_null())) {
        std::string max = co_await X("max", max_pos);
        v = fresh(fmt::format("nova::minimumf_({}, {})", v, max));
      }
    }
    co_return v;
  }

  // ---- generated tensors ----
  if (op == "ones.default" || op == "ones_like.default") co_return "1.0f";
  if (op == "zeros.default" || op == "zeros_like.default") co_return "0.0f";
  if (op == "full.default") co_return float_literal(constant("fill_value", 1, 0.0));
  if (op == "full_like.default") co_return float_literal(constant("fill_value", 1, 0.0));
  if (op == "scalar_tensor.default") co_return float_literal(constant("s", 0, 0.0));
  if (op == "triu.default" || op == "tril.default") {
    index_dependent_ = true;
    if (rank < 2) throw UnsupportedGroup(op + " needs at least two dimensions");
    auto diag = constant("diagonal", 1, 0).get<std::int64_t>();
    std::string x = co_await X();
    std::string cmp = op == "triu.default" ? ">=" : "<=";
    co_return fresh(
        fmt::format("(({} - {}) {} {}LL) ? {} : 0.0f", coords[rank - 1], coords[rank - 2], cmp, diag, x));
  }

  // ---- views: map the coordinates back to the viewed tensor ----
  const std::string src = (op.rfind("split", 0) == 0 || is_identity_op(op)) ? self_tensor() : [&] {
    const NodeArg* a = find_arg(node, "self", 0);
    if (!a) a = find_arg(node, "input", 0);
    if (!a || a->tensor.empty()) throw UnsupportedGroup("no builtin rule for " + node.target);
    return a->tensor;
  }();
  const auto& src_shape = info(src).shape;
  std::vector<std::string> s(coords);
  if (op != "expand.default" && op != "expand_as.default" && op != "broadcast_to.default") remapped_ = true;
  std::optional<NodeEvaluation::Operand> viewed;
  if (op == "view.default" || op == "_unsafe_view.default" || op == "reshape.default" ||
      op == "flatten.using_ints" || op == "view_as.default" || op == "reshape_as.default") {
    // A noted flat index of these coordinates is the view's flat index as it is.
    std::string flat;
    if (auto known = flats_.find(flat_key(coords, out_shape)); known != flats_.end()) {
      flat = known->second;
    } else {
      flat = fmt::format("i{}", counter_++);
      lines_.push_back(fmt::format("const long long {} = {};", flat, ravel(coords, out_shape)));
    }
    viewed = NodeEvaluation::Operand::of(src, unravel(flat, src_shape));
  } else if (op == "transpose.int" || op == "t.default") {
    std::int64_t d0 = 0, d1 = 1;
    if (op == "transpose.int") {
      d0 = normalize_dim(constant("dim0", 1, 0).get<std::int64_t>(), rank);
      d1 = normalize_dim(constant("dim1", 2, 1).get<std::int64_t>(), rank);
    }
    if (rank >= 2) std::swap(s[static_cast<std::size_t>(d0)], s[static_cast<std::size_t>(d1)]);
    viewed = NodeEvaluation::Operand::of(src, s);
  } else if (op == "numpy_T.default") {  // x.T: every dimension reversed
    std::reverse(s.begin(), s.end());
    viewed = NodeEvaluation::Operand::of(src, s);
  } else if (op == "permute.default") {
    auto dims = int_list("dims", 1);
    std::vector<std::string> m(rank);
    for (std::size_t i = 0; i < rank; ++i)
      m[static_cast<std::size_t>(normalize_dim(dims[i], rank))] = coords[i];
    viewed = NodeEvaluation::Operand::of(src, m);
  } else if (op == "expand.default" || op == "broadcast_to.default" || op == "expand_as.default") {
    viewed = broadcast_operand(src, out_shape, coords);
  } else if (op == "unsqueeze.default") {
    auto dim = normalize_dim(constant("dim", 1, 0).get<std::int64_t>(), rank);
    s.erase(s.begin() + dim);
    viewed = NodeEvaluation::Operand::of(src, s);
  } else if (op == "squeeze.dim" || op == "squeeze.dims" || op == "squeeze.default") {
    std::vector<std::string> m;
    std::size_t j = 0;
    for (std::size_t d = 0; d < src_shape.size(); ++d) {
      if (src_shape[d] == 1 && (j >= coords.size() || src_shape.size() - d > coords.size() - j))
        m.push_back("0");
      else
        m.push_back(coords[j++]);
    }
    viewed = NodeEvaluation::Operand::of(src, m);
  } else if (op == "select.int") {
    auto dim = normalize_dim(constant("dim", 1, 0).get<std::int64_t>(), src_shape.size());
    auto index = constant("index", 2, 0).get<std::int64_t>();
    if (index < 0) index += src_shape[static_cast<std::size_t>(dim)];
    s.insert(s.begin() + dim, fmt::format("{}LL", index));
    viewed = NodeEvaluation::Operand::of(src, s);
  } else if (op == "slice.Tensor") {
    auto dim = static_cast<std::size_t>(normalize_dim(constant("dim", 1, 0).get<std::int64_t>(), rank));
    auto start_j = constant("start", 2, 0);
    std::int64_t start = start_j.is_null() ? 0 : start_j.get<std::int64_t>();
    if (start < 0) start += src_shape[dim];
    std::int64_t step = constant("step", 4, 1).get<std::int64_t>();
    s[dim] = fmt::format("({}LL + {} * {}LL)", start, coords[dim], step);
    viewed = NodeEvaluation::Operand::of(src, s);
  } else if (op == "split.Tensor" || op == "split_with_sizes.default") {
    auto dim = static_cast<std::size_t>(normalize_dim(constant("dim", 2, 0).get<std::int64_t>(), rank));
    std::int64_t offset = 0;
    if (op == "split.Tensor") {
      offset = constant("split_size", 1, 1).get<std::int64_t>() * output_index;
    } else {
      auto sizes = int_list("split_sizes", 1);
      for (int k = 0; k < output_index; ++k) offset += sizes[static_cast<std::size_t>(k)];
    }
    if (offset) s[dim] = fmt::format("({} + {}LL)", coords[dim], offset);
    viewed = NodeEvaluation::Operand::of(src, s);
  }
  if (!viewed) throw UnsupportedGroup("no builtin rule for " + node.target);
  std::string v = co_await std::move(*viewed);
  co_return v;
}

}  // namespace nova
