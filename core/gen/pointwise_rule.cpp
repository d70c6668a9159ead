#include "core/gen/pointwise_rule.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "core/gen/code_text.h"

namespace nova {
namespace {

struct ExtraBinding {
  std::string tensor, ref, param;
};

// Launch shape of every pointwise kernel: blocks of 128 threads, one 16-byte vector (or kScalarSteps
// elements) per thread, and a grid that covers the tensor in one pass. No minimum of blocks per SM in the
// launch bounds: the kernels are small (26 registers for swish_bias_clamp), so 16 blocks fit on an
// SM. Measured on the H200 for swish_bias_clamp, cold, against torch.compile in the same runs
// (docs/perf-notes.md, "pointwise v6"): one vector per thread in blocks of 128 threads 67.46-67.49 us
// against 68.18-68.19 (1.01x, three runs); 256 threads 67.39; 64 threads 83.5; two vectors per thread
// in blocks of 128 (revision 5) 68.13-68.26, a tie; four vectors 70.8; 256 threads with 4 steps
// strided over the tensor 68.9; a single resident wave striding over the tensor 75.6.
constexpr int kThreads = 128;
// Kernels without a 16-byte path (index remapping views, fp16/bf16 results, a last dimension not a
// multiple of 4) take kScalarSteps elements per thread, kThreads apart, so a block covers as many
// bytes of an fp32 tensor as a vector block does. With one element per thread such a pass was bound
// by block launches: tiny_transformer's scores epilogue (2^22 floats) took 43.07 us in all, 30.50
// with 4 elements per thread (docs/perf-notes.md, "revision 7").
constexpr int kScalarSteps = 4;

// How the statements of one kernel are written.
// No streaming cache hints (__ldcs/__stcs): measured on the H200 they made the groups that used
// them 3-9% slower (docs/perf-notes.md, "kernels v2 measured").
struct Style {
  bool int32 = false;  // 32-bit index math (every tensor under 2^31 elements)
  const char* index_type() const { return int32 ? "int" : "long long"; }
  const char* literal_suffix() const { return int32 ? "" : "LL"; }
};

std::string compute(PointwiseEmitter& e, const GroupContext& ctx, std::size_t k,
                    const std::vector<std::string>& coords) {
  return e.value(ctx.outputs[k].name, coords);
}

void bind_all(PointwiseEmitter& e, const GroupContext& ctx, const std::vector<ExtraBinding>& extra,
              const Style& style) {
  ctx.bind_inputs(e);
  for (const auto& x : extra) e.bind_memory(x.tensor, x.param);
  e.set_int32_offsets(style.int32);
}

std::string scalar_store(const GroupContext& ctx, std::size_t k, const std::string& index,
                         const std::string& value) {
  return fmt::format("{}[{}] = nova::from_f<{}>({});\n", ctx.output_names[k], index,
                     ctx.output_storage_type(k), value);
}

// Statements computing output `k` at the elements whose flat indices are the variables in
// `index` (one independent step each): all loads first, then the math, then the stores.
std::string scalar_steps(const GroupContext& ctx, std::size_t k, const std::vector<ExtraBinding>& extra,
                         const Style& style, const std::vector<std::string>& index, int indent) {
  PointwiseEmitter e(ctx.graph, ctx.group);
  bind_all(e, ctx, extra, style);
  std::vector<std::string> vals;
  for (const auto& i : index) {
    auto coords = unravel(i, ctx.outputs[k].shape, style.literal_suffix());
    e.note_flat(coords, ctx.outputs[k].shape, i);
    vals.push_back(compute(e, ctx, k, coords));
  }
  std::string code = e.take_code(indent);
  for (std::size_t u = 0; u < index.size(); ++u)
    code += std::string(static_cast<std::size_t>(indent), ' ') + scalar_store(ctx, k, index[u], vals[u]);
  return code;
}

// The 16-byte form of scalar_steps: each index names the first of four consecutive elements of the
// last dimension. Returns "" if a read cannot be vectorised; `float4_tensors` gets the tensors
// read with 16-byte loads.
std::string vector_steps(const GroupContext& ctx, std::size_t k, const std::vector<ExtraBinding>& extra,
                         const Style& style, const std::set<std::string>& reads,
                         const std::vector<std::string>& index, int indent,
                         std::set<std::string>* float4_tensors = nullptr) {
  const auto& S = ctx.outputs[k].shape;
  PointwiseEmitter e(ctx.graph, ctx.group);
  bind_all(e, ctx, extra, style);
  std::vector<std::vector<std::vector<std::string>>> lanes;
  for (const auto& i : index) {
    std::vector<std::string> base = unravel(i, S, style.literal_suffix());
    e.note_flat(base, S, i);
    lanes.emplace_back(4, base);
    for (int l = 1; l < 4; ++l)
      lanes.back()[static_cast<std::size_t>(l)].back() = fmt::format("({} + {})", base.back(), l);
  }
  for (const auto& step : lanes)
    for (const auto& t : reads)
      if (!e.load_lanes_float4(t, S, step)) return {};
  std::vector<std::array<std::string, 4>> vals(index.size());
  for (std::size_t u = 0; u < index.size(); ++u)
    for (std::size_t l = 0; l < 4; ++l) vals[u][l] = compute(e, ctx, k, lanes[u][l]);
  std::string code = e.take_code(indent);
  const std::string pad(static_cast<std::size_t>(indent), ' ');
  for (std::size_t u = 0; u < index.size(); ++u) {
    std::string value =
        fmt::format("make_float4({}, {}, {}, {})", vals[u][0], vals[u][1], vals[u][2], vals[u][3]);
    std::string address = fmt::format("reinterpret_cast<float4*>({} + {})", ctx.output_names[k], index[u]);
    code += pad + fmt::format("*{} = {};\n", address, value);
  }
  if (float4_tensors) *float4_tensors = e.float4_reads();
  return code;
}

// The grid-stride loop over `vectors` float4 vectors, one per thread per pass; the grid covers the
// tensor in one pass, so each thread normally runs it once. `steps(names, indent)` writes the
// statements for the vector whose first element's flat index is `names[0]`.
template <typename Steps>
std::string vector_loop(const std::string& idx, const std::string& suffix, std::int64_t vectors,
                        Steps steps) {
  return fmt::format(
      "    const {idx} stride = ({idx})gridDim.x * {T};\n"
      "    for ({idx} pos = blockIdx.x * ({idx}){T} + threadIdx.x; pos < {count}{sfx}; pos += stride) {{\n"
      "      const {idx} base0 = pos * 4;\n{main}    }}\n",
      fmt::arg("idx", idx), fmt::arg("T", kThreads), fmt::arg("count", vectors), fmt::arg("sfx", suffix),
      fmt::arg("main", steps(std::vector<std::string>{"base0"}, 6)));
}

// The loop of a kernel without a 16-byte path: kScalarSteps elements per thread, kThreads apart, a
// block per chunk of kThreads * kScalarSteps elements. `one` holds the statements for element `flat0`.
std::string scalar_loop(const std::string& idx, const std::string& suffix, std::int64_t count,
                        const std::string& one) {
  return fmt::format(
      "  // {U} elements per thread, {T} apart: block b covers elements [{C} b, {C} (b + 1)).\n"
      "  for ({idx} chunk = blockIdx.x * ({idx}){C}; chunk < {n}{sfx}; chunk += ({idx})gridDim.x * {C}) {{\n"
      "#pragma unroll\n"
      "    for (int u = 0; u < {U}; ++u) {{\n"
      "      const {idx} flat0 = chunk + u * {T} + threadIdx.x;\n"
      "      if (flat0 < {n}{sfx}) {{\n{one}      }}\n    }}\n  }}\n",
      fmt::arg("U", kScalarSteps), fmt::arg("T", kThreads), fmt::arg("C", kThreads * kScalarSteps),
      fmt::arg("idx", idx), fmt::arg("n", count), fmt::arg("sfx", suffix), fmt::arg("one", one));
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
    // A scalar pass first: it tells which tensors are read and whether coordinates are kept.
    PointwiseEmitter probe(ctx.graph, ctx.group);
    bind_all(probe, ctx, extra, Style{});
    compute(probe, ctx, k, unravel("i", S));
    const bool fp32 = ctx.outputs[k].dtype == "float32";
    const bool try_vector = fp32 && !S.empty() && S.back() % 4 == 0 && probe.reads_in_place();
    const std::int64_t vectors = n / 4;
    const std::int64_t items = try_vector ? vectors : n;
    const std::int64_t grid = std::max<std::int64_t>(1, (items + kThreads - 1) / kThreads);

    // Style: 32-bit indices when every index the loops form stays under 2^31.
    Style style;
    std::int64_t largest = n;
    std::map<std::string, std::int64_t> sizes;
    for (const auto& t : ctx.inputs) sizes[t.name] = numel(t.shape);
    for (const auto& x : extra) sizes[x.tensor] = numel(probe.info(x.tensor).shape);
    for (const auto& [name, size] : sizes) largest = std::max(largest, size);
    style.int32 = largest + std::int64_t{4} * grid * kThreads < (std::int64_t{1} << 31) - 1;
    const std::string idx = style.index_type(), sfx = style.literal_suffix();

    std::set<std::string> float4_tensors;
    std::string vector_loops;
    if (try_vector &&
        !vector_steps(ctx, k, extra, style, probe.memory_reads(), {"base"}, 6, &float4_tensors).empty())
      vector_loops = vector_loop(idx, sfx, vectors, [&](const std::vector<std::string>& names, int indent) {
        return vector_steps(ctx, k, extra, style, probe.memory_reads(), names, indent);
      });

    std::string name = fmt::format("nova_g{}_{}_{}", ctx.group.id, kernel_prefix, k);
    std::string params = ctx.kernel_params();
    // A library step's result (a temp) is read through its own element type: fp16 and bf16 models'
    // library calls return fp16 and bf16 tensors.
    for (const auto& x : extra)
      params += fmt::format(",\n    const {}* __restrict__ {}",
                            PointwiseEmitter::storage_type(probe.info(x.tensor).dtype), x.param);
    std::string body;
    std::int64_t launch_grid = grid;
    if (vector_loops.empty()) {
      launch_grid = std::max<std::int64_t>(1, (n + kThreads * kScalarSteps - 1) / (kThreads * kScalarSteps));
      body += scalar_loop(idx, sfx, n, scalar_steps(ctx, k, extra, style, {"flat0"}, 8));
    } else {
      std::vector<std::string> pointers = {ctx.output_names[k]};
      for (const auto& t : float4_tensors) {
        int i = ctx.input_index(t);
        if (i >= 0) pointers.push_back(ctx.input_names[static_cast<std::size_t>(i)]);
        for (const auto& x : extra)
          if (x.tensor == t) pointers.push_back(x.param);
      }
      std::string list;
      for (const auto& p : pointers) list += (list.empty() ? "" : ", ") + p;
      body += fmt::format(
          "  if (nova::aligned16({list})) {{\n"
          "    // 16-byte loads and stores: four consecutive elements of the last dimension per step.\n"
          "{vec}    return;\n  }}\n"
          "  // A pointer is not 16-byte aligned (a view into a buffer): one element per step.\n"
          "  for ({idx} flat = blockIdx.x * ({idx})blockDim.x + threadIdx.x; flat < {n}{sfx};\n"
          "       flat += ({idx})gridDim.x * blockDim.x) {{\n{one}  }}\n",
          fmt::arg("list", list), fmt::arg("vec", vector_loops), fmt::arg("idx", idx), fmt::arg("n", n),
          fmt::arg("sfx", sfx), fmt::arg("one", scalar_steps(ctx, k, extra, style, {"flat"}, 4)));
    }
    std::string how =
        fmt::format("{} elements{}; {} blocks of {} threads covering it in one pass, {} per thread{}", n,
                    vector_loops.empty() ? "" : fmt::format(" as {} float4 vectors", vectors), launch_grid,
                    kThreads, vector_loops.empty() ? fmt::format("{} elements", kScalarSteps) : "one vector",
                    style.int32 ? ", 32-bit index math" : "");
    out.kernels += fmt::format(
        "// {} = {} over {}{}\n// {}.\nextern \"C\" __global__ void __launch_bounds__({}) {}(\n    {}) "
        "{{\n{}}}\n\n",
        comment_safe(ctx.outputs[k].name), comment_safe(ctx.ops_summary()),
        comment_safe(ctx.outputs[k].dtype), GroupContext::shape_text(S), how, kThreads, name, params, body);
    PlanStep step;
    step.type = "kernel";
    step.kernel = name;
    step.grid = {launch_grid, 1, 1};
    step.block = {kThreads, 1, 1};
    step.args = ctx.plan_args();
    for (const auto& x : extra) step.args.push_back(PlanArg{x.ref, "", nullptr, ""});
    out.plan.steps.push_back(step);
    out.notes += fmt::format("output {}: {}; ", ctx.outputs[k].name, how);
  }
  return out;
}

RuleOutput PointwiseRule::materialize(const GroupContext& ctx, const std::string& tensor,
                                      const std::string& temp_ref) {
  FusionGroup part = ctx.group;
  part.outputs = {tensor};
  GroupContext sub(ctx.graph, part, ctx.target);
  // Named after the operand: a group may materialize several, each its own kernel.
  RuleOutput out = generate(sub, {}, "operand_" + GroupContext::c_identifier(tensor));
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
