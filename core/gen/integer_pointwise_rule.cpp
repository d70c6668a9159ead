#include "core/gen/integer_pointwise_rule.h"

#include <map>

#include <fmt/format.h>

#include "core/gen/pointwise_emitter.h"

namespace nova {
namespace {

constexpr int kThreads = 128;

// The C operator of each ATen op this rule writes.
const std::map<std::string, const char*>& operators() {
  static const std::map<std::string, const char*> ops = {
      {"aten.add.Tensor", "+"}, {"aten.add.Scalar", "+"}, {"aten.sub.Tensor", "-"},
      {"aten.sub.Scalar", "-"}, {"aten.mul.Tensor", "*"}, {"aten.mul.Scalar", "*"}};
  return ops;
}

}  // namespace

bool IntegerPointwiseRule::applies_to(const GroupContext& ctx) {
  if (ctx.outputs.empty()) return false;
  for (const auto& out : ctx.outputs)
    if (out.dtype != "int64") return false;
  for (const GraphNode* n : ctx.nodes())
    if (!operators().count(n->target)) return false;
  return true;
}

RuleOutput IntegerPointwiseRule::generate(const GroupContext& ctx) {
  // Every tensor the kernel reads or computes (the group's inputs, then each node's result) -> its C
  // expression at element i.
  std::map<std::string, std::string> value;
  const auto& shape = ctx.outputs.at(0).shape;
  const std::int64_t count = numel(shape);
  for (const auto& out : ctx.outputs)
    if (out.shape != shape) throw UnsupportedGroup("its int64 results differ in shape");
  for (std::size_t i = 0; i < ctx.inputs.size(); ++i) {
    const TensorInfo& in = ctx.inputs[i];
    if (in.dtype != "int64") throw UnsupportedGroup(fmt::format("its input {} is {}, not int64", in.name, in.dtype));
    const std::int64_t n = numel(in.shape);
    if (n != 1 && in.shape != shape)
      throw UnsupportedGroup(fmt::format("its input {} broadcasts other than from one element", in.name));
    value[in.name] = fmt::format("{}[{}]", ctx.input_names[i], n == 1 ? "0" : "i");
  }
  std::string body;
  int t = 0;
  for (const GraphNode* n : ctx.nodes()) {
    const char* op = operators().at(n->target);
    std::vector<std::string> operands;
    for (const auto& a : n->args) {
      if (a.name == "alpha") {
        if (!(a.constant.is_number_integer() && a.constant.get<std::int64_t>() == 1))
          throw UnsupportedGroup(fmt::format("{} has an alpha other than 1", n->target));
        continue;
      }
      if (!a.tensor.empty()) {
        auto it = value.find(a.tensor);
        if (it == value.end()) throw UnsupportedGroup(fmt::format("{} reads {}, not an int64 value", n->target, a.tensor));
        operands.push_back(it->second);
      } else if (a.constant.is_number_integer()) {
        operands.push_back(fmt::format("{}LL", a.constant.get<std::int64_t>()));
      } else {
        throw UnsupportedGroup(fmt::format("{} has a constant {} that is not an integer", n->target, a.constant.dump()));
      }
    }
    if (operands.size() != 2 || n->outputs.size() != 1 || n->outputs[0].dtype != "int64")
      throw UnsupportedGroup(fmt::format("{} is not a binary int64 op", n->target));
    const std::int64_t own = numel(n->outputs[0].shape);
    if (own != 1 && n->outputs[0].shape != shape)
      throw UnsupportedGroup(fmt::format("{} broadcasts other than from one element", n->target));
    const std::string var = fmt::format("nova_t{}", t++);
    body += fmt::format("  const long long {} = {} {} {};\n", var, operands[0], op, operands[1]);
    value[n->outputs[0].name] = var;
  }
  std::string stores;
  for (std::size_t o = 0; o < ctx.outputs.size(); ++o) {
    auto it = value.find(ctx.outputs[o].name);
    if (it == value.end()) throw UnsupportedGroup(fmt::format("its result {} is not computed by the group", ctx.outputs[o].name));
    stores += fmt::format("  {}[i] = {};\n", ctx.output_names[o], it->second);
  }
  const std::string name = fmt::format("nova_g{}_pointwise_int64", ctx.group.id);
  RuleOutput r;
  r.rule = "pointwise_int64";
  r.kernels = fmt::format(
      "// {ops} in 64-bit integers (exact), one thread per element of {count}.\n"
      "extern \"C\" __global__ void __launch_bounds__({T}) {name}(\n    {params}) {{\n"
      "  const long long i = blockIdx.x * {T}LL + threadIdx.x;\n  if (i >= {count}LL) return;\n{body}{stores}}}\n\n",
      fmt::arg("ops", ctx.ops_summary()), fmt::arg("count", count), fmt::arg("T", kThreads), fmt::arg("name", name),
      fmt::arg("params", ctx.kernel_params()), fmt::arg("body", body), fmt::arg("stores", stores));
  r.plan = ctx.base_plan();
  PlanStep s;
  s.type = "kernel";
  s.kernel = name;
  s.grid = {(count + kThreads - 1) / kThreads, 1, 1};
  s.block = {kThreads, 1, 1};
  s.args = ctx.plan_args();
  r.plan.steps.push_back(s);
  r.notes = fmt::format("{} int64 element(s), one thread each, exact integer arithmetic", count);
  return r;
}

}  // namespace nova
