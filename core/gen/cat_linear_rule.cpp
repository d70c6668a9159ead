#include "core/gen/cat_linear_rule.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "core/gen/gemm_shape.h"

namespace nova {
namespace {

constexpr int kThreads = 256;
constexpr std::int64_t kColumnsPerThread = 4;
constexpr std::int64_t kPlainUnit = kThreads * kColumnsPerThread;  // columns of a read piece per block
constexpr std::int64_t kPooledUnit = kThreads / 32;                 // channels of a pooled piece per block

bool is_gemm(const GraphNode& n) {
  const std::string op = aten_op(n);
  return op == "linear.default" || op == "addmm.default" || op == "mm.default";
}

bool in_group(const GroupContext& ctx, const GraphNode* n) {
  return n && std::find(ctx.group.nodes.begin(), ctx.group.nodes.end(), n->id) != ctx.group.nodes.end();
}

// The group's node that computes `tensor` (as its first result), or null.
const GraphNode* producer_in_group(const GroupContext& ctx, const std::string& tensor) {
  const GraphNode* n = ctx.graph.producer(tensor);
  return in_group(ctx, n) && n->outputs.at(0).name == tensor ? n : nullptr;
}

// Views that keep the elements in row-major order.
bool is_order_preserving_view(const GraphNode& n) {
  static const std::set<std::string> ops = {"flatten.using_ints", "view.default",    "reshape.default",
                                            "_unsafe_view.default", "squeeze.dim",  "squeeze.dims",
                                            "squeeze.default"};
  return ops.count(aten_op(n)) > 0;
}

std::vector<std::int64_t> ints(const NodeArg* a) {
  std::vector<std::int64_t> v;
  if (!a) return v;
  if (a->constant.is_number_integer()) v.push_back(a->constant.get<std::int64_t>());
  if (a->constant.is_array())
    for (const auto& x : a->constant)
      if (x.is_number_integer()) v.push_back(x.get<std::int64_t>());
  return v;
}

enum class Combine { Sum, Mean, Max };

// A piece of the concatenation: its columns, and where it is a reduction to one value per (row, channel),
// that reduction's input and window.
struct Piece {
  std::string tensor;
  std::int64_t width = 0, offset = 0;   // its columns, and its first column in the concatenation
  std::int64_t first_unit = 0, units = 0;
  bool pooled = false;
  Combine combine = Combine::Sum;
  std::string input;                    // the reduction's input
  std::vector<std::int64_t> input_shape;
  std::int64_t window = 0;              // elements reduced per value
  std::vector<int> path;                // the group nodes from the reduction to the piece
};

// The number of trailing dimensions of an input of `rank` that `node` reduces to one value each
// (keeping them or not), or 0 where it is not such a reduction; `combine` gets its kind.
std::size_t trailing_reduction(const GraphNode& node, std::size_t rank, Combine& combine) {
  const std::string op = aten_op(node);
  if (op.rfind("adaptive_", 0) == 0 || op.rfind("_adaptive_", 0) == 0) {
    const std::size_t k = op.find("3d") != std::string::npos ? 3 : 2;
    const auto size = ints(find_arg(node, "output_size", 1));
    if (size.empty() || rank < k + 1) return 0;
    for (auto s : size)
      if (s != 1) return 0;
    combine = op.find("max") != std::string::npos ? Combine::Max : Combine::Mean;
    return k;
  }
  if (op != "mean.dim" && op != "sum.dim_IntList" && op != "amax.default") return 0;
  combine = op == "mean.dim" ? Combine::Mean : op == "amax.default" ? Combine::Max : Combine::Sum;
  const auto dims = reduced_dims(node, rank);
  for (std::size_t i = 0; i < dims.size(); ++i)
    if (dims[i] != static_cast<std::int64_t>(rank - dims.size() + i)) return 0;
  return dims.size() < rank ? dims.size() : 0;  // all dimensions: not one value per row
}

// The piece `tensor` of `rows` rows and `width` columns: a reduction to one value per (row, channel)
// where views inside the group lead back to one, else read as it is (the emitter follows it).
Piece read_piece(const GroupContext& ctx, const PointwiseEmitter& probe, const std::string& tensor,
                 std::int64_t rows, std::int64_t width) {
  Piece p;
  p.tensor = tensor;
  p.width = width;
  std::string t = tensor;
  std::vector<int> path;
  const GraphNode* n = producer_in_group(ctx, t);
  while (n && is_order_preserving_view(*n)) {
    path.push_back(n->id);
    const NodeArg* in = find_arg(*n, "self", 0);
    if (!in || in->tensor.empty()) return p;
    t = in->tensor;
    n = producer_in_group(ctx, t);
  }
  if (!n) return p;
  const NodeArg* in = find_arg(*n, "self", 0);
  if (!in || in->tensor.empty()) return p;
  const auto& shape = probe.info(in->tensor).shape;
  Combine combine = Combine::Sum;
  const std::size_t k = trailing_reduction(*n, shape.size(), combine);
  if (k == 0) return p;
  std::int64_t window = 1;
  for (std::size_t d = shape.size() - k; d < shape.size(); ++d) window *= shape[d];
  if (window == 0 || numel(shape) / window != rows * width) return p;  // not one value per (row, channel)
  p.pooled = true;
  p.combine = combine;
  p.input = in->tensor;
  p.input_shape = shape;
  p.window = window;
  path.push_back(n->id);
  p.path = std::move(path);
  return p;
}

}  // namespace

bool CatLinearRule::applies_to(const GroupContext& ctx) {
  const GraphNode* g = ctx.anchor();
  if (!g || !is_gemm(*g)) return false;
  PointwiseEmitter probe(ctx.graph, ctx.group);
  std::string a;
  try {
    a = GemmShape::read(*g, probe).a;
  } catch (const UnsupportedGroup&) {
    return false;  // the GEMM rules say why
  }
  const GraphNode* cat = producer_in_group(ctx, a);
  return cat && aten_op(*cat) == "cat.default";
}

RuleOutput CatLinearRule::generate(const GroupContext& ctx) {
  const GraphNode& g = *ctx.anchor();
  PointwiseEmitter probe(ctx.graph, ctx.group);
  ctx.bind_inputs(probe);
  const GemmShape s = GemmShape::read(g, probe);
  const GraphNode& cat = *producer_in_group(ctx, s.a);
  const auto& cat_shape = probe.info(s.a).shape;
  if (cat_shape.size() != 2)
    throw UnsupportedGroup(fmt::format("a concatenation of {} dimensions feeding {}: the cat rule takes rows of one matrix",
                                       cat_shape.size(), g.target));
  const auto dim = ints(find_arg(cat, "dim", 1));
  if (dim.empty() || (dim[0] != 1 && dim[0] != -1))
    throw UnsupportedGroup("a concatenation along the rows feeding " + g.target + ": the cat rule splits K only");
  if (s.n > kMaxOutputs)
    throw UnsupportedGroup(fmt::format("a concatenation feeding a GEMM of {} outputs: the cat rule keeps at most {} "
                                       "outputs a thread, and wider GEMMs are the library's (eager kept)",
                                       s.n, kMaxOutputs));
  if (ctx.input_index(s.b) < 0)
    throw UnsupportedGroup("the GEMM's weight is computed inside the group: the cat rule reads it as it is");
  if (!s.bias.empty() && ctx.input_index(s.bias) < 0)
    throw UnsupportedGroup("the GEMM's bias is computed inside the group: the cat rule reads it as it is");
  if (s.m > 65535) throw UnsupportedGroup(fmt::format("{} rows: more than a grid's y dimension", s.m));
  if (ctx.outputs.size() != 1 || !ctx.epilogue_preserves_coordinates())
    throw UnsupportedGroup("the cat rule's epilogue takes elementwise ops to one output");

  // The pieces, in the concatenation's order, with their columns and their blocks (units).
  const NodeArg* list = find_arg(cat, "tensors", 0);
  std::vector<Piece> pieces;
  std::int64_t offset = 0, units = 0;
  for (const auto& item : list ? list->constant : nlohmann::json::array()) {
    if (!item.is_object() || !item.contains("tensor") || !item["tensor"].is_string())
      throw UnsupportedGroup("a concatenation of a value that is not a tensor");
    const std::string t = item["tensor"].get<std::string>();
    const auto& shape = probe.info(t).shape;
    if (shape.size() != 2 || shape[0] != s.m)
      throw UnsupportedGroup(fmt::format("a concatenated piece {} of shape {}: the cat rule takes [{}, columns]", t,
                                         GroupContext::shape_text(shape), s.m));
    if (shape[1] == 0) continue;  // torch.cat skips it too
    Piece p = read_piece(ctx, probe, t, s.m, shape[1]);
    p.offset = offset;
    p.first_unit = units;
    p.units = p.pooled ? (p.width + kPooledUnit - 1) / kPooledUnit : (p.width + kPlainUnit - 1) / kPlainUnit;
    offset += p.width;
    units += p.units;
    pieces.push_back(std::move(p));
  }
  if (pieces.empty() || offset != s.k) throw UnsupportedGroup("a concatenation whose columns are not the GEMM's K");

  const std::string W = ctx.input_names[static_cast<std::size_t>(ctx.input_index(s.b))];
  const auto weight_at = [&](const std::string& col) {
    return s.b_transposed ? fmt::format("nova::to_f({}[nova_n * {}LL + {}])", W, s.k, col)
                          : fmt::format("nova::to_f({}[({}) * {}LL + nova_n])", W, col, s.n);
  };
  std::set<int> seen = {g.id, cat.id};
  std::string branches;
  std::int64_t pooled_columns = 0, pooled_reads = 0;
  for (const Piece& p : pieces) {
    PointwiseEmitter e(ctx.graph, ctx.group);
    ctx.bind_inputs(e);
    const std::string head = fmt::format("  {}if (nova_unit < {}) {{\n", p.first_unit == 0 ? "" : "} else ",
                                         p.first_unit + p.units);
    if (!p.pooled) {
      const std::string v = e.value(p.tensor, {"r", "nova_j"});
      branches += head + fmt::format(
          "    // {tensor}: columns {lo}..{hi} of the concatenation, {per} a thread, read as they are.\n"
          "    const long long nova_j0 = (nova_unit - {first}) * {unit}LL;\n"
          "#pragma unroll\n"
          "    for (int nova_i = 0; nova_i < {per}; ++nova_i) {{\n"
          "      const long long nova_j = nova_j0 + nova_i * {threads} + threadIdx.x;\n"
          "      if (nova_j >= {width}LL) break;\n"
          "{code}"
          "      const float nova_x = {v};\n"
          "#pragma unroll\n"
          "      for (int nova_n = 0; nova_n < {n}; ++nova_n) acc[nova_n] = fmaf(nova_x, {w}, acc[nova_n]);\n"
          "    }}\n",
          fmt::arg("tensor", p.tensor), fmt::arg("lo", p.offset), fmt::arg("hi", p.offset + p.width - 1),
          fmt::arg("per", kColumnsPerThread), fmt::arg("first", p.first_unit), fmt::arg("unit", kPlainUnit),
          fmt::arg("threads", kThreads), fmt::arg("width", p.width), fmt::arg("code", e.take_code(6)),
          fmt::arg("v", v), fmt::arg("n", s.n), fmt::arg("w", weight_at(fmt::format("{}LL + nova_j", p.offset))));
    } else {
      const std::vector<std::string> xc = unravel("nova_flat", p.input_shape);
      e.note_flat(xc, p.input_shape, "nova_flat");
      const std::string v = e.value(p.input, xc);
      const char* init = p.combine == Combine::Max ? "-INFINITY" : "0.0f";
      const std::string fold = p.combine == Combine::Max ? fmt::format("nova_red = nova::maximumf_(nova_red, {});", v)
                                                         : fmt::format("nova_red += {};", v);
      const std::string value = p.combine == Combine::Mean ? fmt::format("nova_red / {}.0f", p.window) : "nova_red";
      branches += head + fmt::format(
          "    // {tensor}: columns {lo}..{hi} of the concatenation, the {what} of {window} elements of {input} per\n"
          "    // value: a warp per channel walks its window (coalesced), a shuffle reduction, then lane 0 multiplies.\n"
          "    const long long nova_c = (nova_unit - {first}) * {unit}LL + (threadIdx.x >> 5);\n"
          "    if (nova_c < {width}LL) {{\n"
          "      float nova_red = {init};\n"
          "      for (long long nova_s = threadIdx.x & 31; nova_s < {window}LL; nova_s += 32) {{\n"
          "        const long long nova_flat = (r * {width}LL + nova_c) * {window}LL + nova_s;\n"
          "{code}"
          "        {fold}\n"
          "      }}\n"
          "      nova_red = nova::{warp}(nova_red);\n"
          "      if ((threadIdx.x & 31) == 0) {{\n"
          "        const float nova_x = {value};\n"
          "#pragma unroll\n"
          "        for (int nova_n = 0; nova_n < {n}; ++nova_n) acc[nova_n] = fmaf(nova_x, {w}, acc[nova_n]);\n"
          "      }}\n"
          "    }}\n",
          fmt::arg("tensor", p.tensor), fmt::arg("lo", p.offset), fmt::arg("hi", p.offset + p.width - 1),
          fmt::arg("what", p.combine == Combine::Max ? "max" : p.combine == Combine::Mean ? "mean" : "sum"),
          fmt::arg("window", p.window), fmt::arg("input", p.input), fmt::arg("first", p.first_unit),
          fmt::arg("unit", kPooledUnit), fmt::arg("width", p.width), fmt::arg("init", init),
          fmt::arg("code", e.take_code(8)), fmt::arg("fold", fold),
          fmt::arg("warp", p.combine == Combine::Max ? "warp_max" : "warp_sum"), fmt::arg("value", value),
          fmt::arg("n", s.n), fmt::arg("w", weight_at(fmt::format("{}LL + nova_c", p.offset))));
      for (int id : p.path) seen.insert(id);
      pooled_columns += p.width;
      pooled_reads += p.width * p.window;
    }
    for (int id : e.visited_nodes()) seen.insert(id);
  }
  branches += "  }\n";

  // The sum: the slices of each output added in a fixed order, the bias, the epilogue, the store.
  PointwiseEmitter epilogue(ctx.graph, ctx.group);
  ctx.bind_inputs(epilogue);
  auto [epilogue_code, value] = s.epilogue_on_register(ctx, epilogue, 4);
  for (int id : epilogue.visited_nodes()) seen.insert(id);
  for (const GraphNode* n : ctx.nodes())
    if (!seen.count(n->id)) throw UnsupportedGroup(n->target + " is off the cat rule's path");

  RuleOutput out;
  out.plan = ctx.base_plan();
  const std::string partials_ref = fmt::format("temp:{}", out.plan.temps.size());
  out.plan.temps.push_back({"nova_partials", {units, s.m, s.n}, "float32"});
  const std::string params = ctx.kernel_params() + ",\n    float* __restrict__ nova_partials";
  std::vector<PlanArg> args = ctx.plan_args();
  args.push_back({partials_ref, "", nullptr, ""});
  const std::string name = fmt::format("nova_g{}_cat_linear", ctx.group.id);
  const std::string alpha = s.alpha == 1.0 ? "" : PointwiseEmitter::float_literal(s.alpha) + " * ";
  const std::string beta = s.beta == 1.0 ? "" : PointwiseEmitter::float_literal(s.beta) + " * ";
  const std::string bias =
      s.bias.empty() ? ""
                     : fmt::format(" + {}nova::to_f({}[col])", beta,
                                   ctx.input_names[static_cast<std::size_t>(ctx.input_index(s.bias))]);
  out.kernels = fmt::format(
      R"(// {m} rows x {n} outputs over a concatenation of {pieces} pieces (K = {k}), never written: each block
// (blockIdx.x: a slice of one piece, blockIdx.y: a row) multiplies its slice into the {n} outputs and
// stores its partial sums; {name}_sum adds the {units} slices.
extern "C" __global__ void __launch_bounds__({threads}) {name}(
    {params}) {{
  __shared__ float nova_warps[{warps}][{n}];
  const long long r = blockIdx.y;
  const long long nova_unit = blockIdx.x;
  float acc[{n}];
#pragma unroll
  for (int nova_n = 0; nova_n < {n}; ++nova_n) acc[nova_n] = 0.0f;
{branches}  // The block's partial sums: each warp's by shuffles, then the warps' in a fixed order.
#pragma unroll
  for (int nova_n = 0; nova_n < {n}; ++nova_n) {{
    const float nova_v = nova::warp_sum(acc[nova_n]);
    if ((threadIdx.x & 31) == 0) nova_warps[threadIdx.x >> 5][nova_n] = nova_v;
  }}
  __syncthreads();
  if (threadIdx.x < {n}) {{
    float nova_t = 0.0f;
#pragma unroll
    for (int w = 0; w < {warps}; ++w) nova_t += nova_warps[w][threadIdx.x];
    nova_partials[(nova_unit * {m}LL + r) * {n}LL + threadIdx.x] = nova_t;
  }}
}}

// The {units} slices of each output added in a fixed order (deterministic), the bias, then the epilogue.
extern "C" __global__ void __launch_bounds__(256) {name}_sum(
    {params}) {{
  for (long long i = blockIdx.x * 256LL + threadIdx.x; i < {mn}LL; i += (long long)gridDim.x * 256LL) {{
    const long long row = i / {n}, col = i - row * {n};
    float acc = 0.0f;
    for (int u = 0; u < {units}; ++u) acc += nova_partials[u * {mn}LL + i];
    const float gemm = {alpha}acc{bias};
{epilogue}    {out}[i] = nova::from_f<{otype}>({value});
  }}
}}

)",
      fmt::arg("m", s.m), fmt::arg("n", s.n), fmt::arg("k", s.k), fmt::arg("pieces", pieces.size()),
      fmt::arg("units", units), fmt::arg("name", name), fmt::arg("threads", kThreads), fmt::arg("params", params),
      fmt::arg("warps", kThreads / 32), fmt::arg("branches", branches), fmt::arg("mn", s.m * s.n),
      fmt::arg("alpha", alpha), fmt::arg("bias", bias), fmt::arg("epilogue", epilogue_code),
      fmt::arg("out", ctx.output_names[0]), fmt::arg("otype", ctx.output_storage_type(0)), fmt::arg("value", value));

  PlanStep partial;
  partial.type = "kernel";
  partial.kernel = name;
  partial.grid = {units, s.m, 1};
  partial.block = {kThreads, 1, 1};
  partial.args = args;
  out.plan.steps.push_back(partial);
  PlanStep sum;
  sum.type = "kernel";
  sum.kernel = name + "_sum";
  sum.grid = {std::min<std::int64_t>((s.m * s.n + 255) / 256, 8 * ctx.target.sm_count), 1, 1};
  sum.block = {256, 1, 1};
  sum.args = args;
  out.plan.steps.push_back(sum);
  out.rule = "cat_linear";
  out.notes = fmt::format(
      "the concatenation (K = {}) is never written: {} blocks ({} slices of the pieces for each of {} rows) multiply "
      "their slice into the {} outputs{}, and a second kernel adds the slices in a fixed order with the bias and the "
      "epilogue",
      s.k, units * s.m, units, s.m, s.n,
      pooled_columns ? fmt::format("; {} columns are pooled on the fly ({} elements read for them)", pooled_columns,
                                   pooled_reads)
                     : "");
  return out;
}

}  // namespace nova
