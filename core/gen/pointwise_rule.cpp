#include "core/gen/pointwise_rule.h"

#include <fmt/format.h>

namespace nova {
namespace {

struct ExtraBinding {
  std::string tensor, ref, param;
};

// Emits the body computing output `k` at `coords`, returns the value expression.
std::string compute(PointwiseEmitter& e, const GroupContext& ctx, std::size_t k,
                    const std::vector<std::string>& coords) {
  return e.value(ctx.outputs[k].name, coords);
}

void bind_all(PointwiseEmitter& e, const GroupContext& ctx, const std::vector<ExtraBinding>& extra) {
  ctx.bind_inputs(e);
  for (const auto& x : extra) e.bind_memory(x.tensor, x.param);
}

// Tries the 4-wide path: returns the loop body, or "" if a read cannot be vectorised.
std::string vector_body(const GroupContext& ctx, std::size_t k, const std::vector<ExtraBinding>& extra,
                        const std::set<std::string>& reads) {
  const auto& S = ctx.outputs[k].shape;
  PointwiseEmitter e(ctx.graph, ctx.group);
  bind_all(e, ctx, extra);
  std::vector<std::string> base = unravel("base", S);
  std::vector<std::vector<std::string>> lanes(4, base);
  for (int l = 0; l < 4; ++l)
    lanes[l].back() = l == 0 ? base.back() : fmt::format("({} + {})", base.back(), l);
  for (const auto& t : reads)
    if (!e.load_lanes_float4(t, S, lanes)) return {};
  std::vector<std::string> vals;
  for (int l = 0; l < 4; ++l) vals.push_back(compute(e, ctx, k, lanes[l]));
  std::string code = e.take_code(6);
  code += fmt::format("      *reinterpret_cast<float4*>({} + base) = make_float4({}, {}, {}, {});\n",
                      ctx.output_names[k], vals[0], vals[1], vals[2], vals[3]);
  return code;
}

}  // namespace

RuleOutput PointwiseRule::generate(const GroupContext& ctx,
                                   const std::map<std::string, std::string>& extra_memory,
                                   const std::string& kernel_prefix) {
  RuleOutput out;
  out.rule = "pointwise";
  out.plan = ctx.base_plan();
  std::vector<ExtraBinding> extra;
  for (const auto& [tensor, ref] : extra_memory)
    extra.push_back({tensor, ref, "tmp_" + GroupContext::c_identifier(tensor)});

  for (std::size_t k = 0; k < ctx.outputs.size(); ++k) {
    const auto& S = ctx.outputs[k].shape;
    const std::int64_t n = numel(S);
    // A scalar pass first: it also tells which tensors are read and whether coordinates are kept.
    PointwiseEmitter scalar(ctx.graph, ctx.group);
    bind_all(scalar, ctx, extra);
    std::string value = compute(scalar, ctx, k, unravel("i", S));
    std::string scalar_code = scalar.take_code(6);
    bool all_fp32 = ctx.outputs[k].dtype == "float32";
    std::string vec;
    if (all_fp32 && !S.empty() && S.back() % 4 == 0 && scalar.coordinates_preserved())
      vec = vector_body(ctx, k, extra, scalar.memory_reads());

    std::string name = fmt::format("nova_g{}_{}_{}", ctx.group.id, kernel_prefix, k);
    std::string params = ctx.kernel_params();
    for (const auto& x : extra) params += fmt::format(",\n    const float* __restrict__ {}", x.param);
    std::string body;
    int threads = 256;
    std::int64_t items = vec.empty() ? n : n / 4;
    if (vec.empty()) {
      body = fmt::format(
          "  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < {n}LL;\n"
          "       i += (long long)gridDim.x * blockDim.x) {{\n{code}      {out}[i] = "
          "nova::from_f<{t}>({v});\n  }}\n",
          fmt::arg("n", n), fmt::arg("code", scalar_code), fmt::arg("out", ctx.output_names[k]),
          fmt::arg("t", ctx.output_storage_type(k)), fmt::arg("v", value));
    } else {
      body = fmt::format(
          "  // 16-byte loads and stores: four consecutive elements of the last dimension per step.\n"
          "  for (long long v = blockIdx.x * (long long)blockDim.x + threadIdx.x; v < {items}LL;\n"
          "       v += (long long)gridDim.x * blockDim.x) {{\n      const long long base = v * 4;\n{code}  "
          "}}\n",
          fmt::arg("items", items), fmt::arg("code", vec));
    }
    out.kernels += fmt::format(
        "// {} = {} over {}{}\nextern \"C\" __global__ void __launch_bounds__({}) {}(\n    {}) {{\n{}}}\n\n",
        ctx.outputs[k].name, ctx.ops_summary(), ctx.outputs[k].dtype, GroupContext::shape_text(S), threads,
        name, params, body);
    PlanStep step;
    step.type = "kernel";
    step.kernel = name;
    step.grid = {grid_for(items, threads, ctx.target), 1, 1};
    step.block = {threads, 1, 1};
    step.args = ctx.plan_args();
    for (const auto& x : extra) step.args.push_back(PlanArg{x.ref, "", nullptr, ""});
    out.plan.steps.push_back(step);
    out.notes += fmt::format("output {}: {} elements, {}; ", ctx.outputs[k].name, n,
                             vec.empty() ? "one element per thread step" : "float4 vectors");
  }
  return out;
}

RuleOutput PointwiseRule::materialize(const GroupContext& ctx, const std::string& tensor,
                                      const std::string& temp_ref) {
  FusionGroup part = ctx.group;
  part.outputs = {tensor};
  GroupContext sub(ctx.graph, part, ctx.target);
  RuleOutput out = generate(sub, {}, "operand");
  for (auto& step : out.plan.steps)
    for (auto& a : step.args)
      if (a.ref == "output:0") a.ref = temp_ref;
  return out;
}

std::map<std::string, std::string> PointwiseRule::materialize_operands(const GroupContext& ctx,
                                                                       const GraphNode& anchor,
                                                                       LaunchPlan& plan,
                                                                       std::string& kernels) {
  std::map<std::string, std::string> computed;
  for (const auto& a : anchor.args) {
    if (a.tensor.empty() || ctx.input_index(a.tensor) >= 0 || computed.count(a.tensor)) continue;
    const GraphNode* producer = ctx.graph.producer(a.tensor);
    if (!producer) throw UnsupportedGroup("operand '" + a.tensor + "' has no producer");
    std::string ref = fmt::format("temp:{}", plan.temps.size());
    for (const auto& o : producer->outputs)
      if (o.name == a.tensor) plan.temps.push_back({o.name, o.shape, o.dtype});
    RuleOutput m = materialize(ctx, a.tensor, ref);
    kernels += m.kernels;
    for (auto& st : m.plan.steps) plan.steps.push_back(st);
    computed[a.tensor] = ref;
  }
  return computed;
}

}  // namespace nova
