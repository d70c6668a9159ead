#include "core/gen/gemm_rule.h"

#include <array>
#include <cmath>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "core/gen/anchor_views.h"
#include "core/gen/pointwise_rule.h"

namespace nova {
namespace {

std::string op_name(const GraphNode& n) {
  return n.target.rfind("aten.", 0) == 0 ? n.target.substr(5) : n.target;
}

// A GEMM as the kernel sees it: C[b, m, n] = sum_k A(b, m, k) * B(b, k, n) (+ bias[n]).
struct GemmShape {
  std::int64_t batch = 1, m = 0, n = 0, k = 0;
  std::string a, b, bias;      // tensor names
  bool b_transposed = false;   // B stored as [n, k] (a linear weight)
  double alpha = 1, beta = 1;  // addmm
  std::vector<std::int64_t> out_shape;
};

GemmShape read_gemm(const GraphNode& g, PointwiseEmitter& e) {
  GemmShape s;
  s.out_shape = g.outputs.at(0).shape;
  auto tensor = [&](const char* name, int pos) {
    const NodeArg* a = find_arg(g, name, pos);
    if (!a || a->tensor.empty()) throw UnsupportedGroup(g.target + ": argument " + name + " is not a tensor");
    return a->tensor;
  };
  std::string op = op_name(g);
  if (op == "linear.default") {
    s.a = tensor("input", 0);
    s.b = tensor("weight", 1);
    s.b_transposed = true;
    if (const NodeArg* b = find_arg(g, "bias", 2); b && !b->tensor.empty()) s.bias = b->tensor;
    const auto& as = e.info(s.a).shape;
    s.k = as.back();
    s.m = numel(as) / s.k;
    s.n = e.info(s.b).shape[0];
  } else if (op == "addmm.default" || op == "mm.default") {
    bool addmm = op == "addmm.default";
    s.a = tensor(addmm ? "mat1" : "self", addmm ? 1 : 0);
    s.b = tensor("mat2", addmm ? 2 : 1);
    if (addmm) {
      s.bias = tensor("self", 0);
      if (e.info(s.bias).shape.size() != 1) throw UnsupportedGroup("addmm with a non-vector bias");
      if (const NodeArg* b = find_arg(g, "beta", 3); b && b->constant.is_number())
        s.beta = b->constant.get<double>();
      if (const NodeArg* a = find_arg(g, "alpha", 4); a && a->constant.is_number())
        s.alpha = a->constant.get<double>();
    }
    s.m = e.info(s.a).shape[0];
    s.k = e.info(s.a).shape[1];
    s.n = e.info(s.b).shape[1];
  } else if (op == "bmm.default" || op == "matmul.default") {
    s.a = tensor("self", 0);
    s.b = tensor(op == "bmm.default" ? "mat2" : "other", 1);
    const auto& as = e.info(s.a).shape;
    const auto& bs = e.info(s.b).shape;
    if (as.size() < 2 || as.size() != bs.size())
      throw UnsupportedGroup(op + " with broadcast batch dimensions");
    for (std::size_t d = 0; d + 2 < as.size(); ++d)
      if (as[d] != bs[d]) throw UnsupportedGroup(op + " with broadcast batch dimensions");
    s.m = as[as.size() - 2];
    s.k = as.back();
    s.n = bs.back();
    s.batch = numel(as) / (s.m * s.k);
  } else {
    throw UnsupportedGroup("no GEMM rule for " + g.target);
  }
  return s;
}

RuleOutput library_gemm(const GroupContext& ctx, const GraphNode& g) {
  RuleOutput out;
  out.plan = ctx.base_plan();
  const auto& result = g.outputs.at(0);
  // The library call is the model's own op with its own arguments (what eager runs), then one fused
  // pass for the epilogue. Folding a scaling epilogue into addmm's alpha and beta is not done: with
  // beta != 1, addmm no longer takes cuBLASLt's fused-bias path and first copies the broadcast bias
  // into the whole result, an extra pass as large as the epilogue it saves. Calling mm without the
  // bias and adding it in the epilogue (what torch.compile does for fp32) was measured on the H200
  // (docs/perf-notes.md, sixth session, run E): a tie where cuBLAS runs the same kernel as eager,
  // and where it is faster (1.20x on mlp_block's 4096x3072 -> 768) cuBLAS picks another kernel whose
  // sums differ from eager's by 7.8e-4 at outputs near zero: it fails the 1e-4 check against eager.
  out.plan.temps.push_back({result.name, result.shape, result.dtype});
  PlanStep step;
  step.type = "library";
  step.op = g.target;
  // Operands computed inside the group (a transposed view, a scaled input) are materialized first.
  auto computed = PointwiseRule::materialize_operands(ctx, g, out.plan, out.kernels);
  for (const auto& a : g.args) step.args.push_back(ctx.library_arg(a, computed));
  step.out = "temp:0";
  out.plan.steps.push_back(step);
  out.library_ops = {g.target};
  if (ctx.outputs.size() == 1 && ctx.outputs[0].name == result.name) {
    // Operands that are only views (x.T, a permute) are what eager hands the library as they are:
    // copying them first only adds a pass.
    bool views = false, computes = false;
    for (const GraphNode* n : ctx.nodes())
      if (n != &g) (n->op_class == OpClass::DataMovement ? views : computes) = true;
    if (views && !computes)
      throw UnsupportedGroup(fmt::format(
          "eager's {} call is already the best form: its operands are views it reads as they are", g.target));
    out.plan.steps.back().out = "output:0";
    if (out.plan.temps.size() == 1) out.plan.temps.clear();  // the result temp is unused now
    out.rule = "gemm_library";
    out.notes = "the GEMM runs in the library; nothing to fuse after it";
    return out;
  }
  RuleOutput epi = PointwiseRule::generate(ctx, {{result.name, "temp:0"}}, "epilogue");
  out.kernels += epi.kernels;
  for (auto& st : epi.plan.steps) out.plan.steps.push_back(st);
  out.rule = "gemm_library+epilogue";
  out.notes = "the GEMM runs in the library (compute bound at these sizes), then one fused epilogue pass: " +
              epi.notes;
  return out;
}

// A rule output of one kernel launch over the group's inputs and outputs.
RuleOutput one_kernel(const GroupContext& ctx, const std::string& rule, const std::string& kernels,
                      const std::string& name, std::array<std::int64_t, 3> grid, std::int64_t threads,
                      std::int64_t shared_bytes, std::string notes) {
  RuleOutput out;
  out.rule = rule;
  out.kernels = kernels;
  out.plan = ctx.base_plan();
  PlanStep step;
  step.type = "kernel";
  step.kernel = name;
  step.grid = grid;
  step.block = {threads, 1, 1};
  step.shared_bytes = shared_bytes;
  step.args = ctx.plan_args();
  out.plan.steps.push_back(step);
  out.notes = std::move(notes);
  return out;
}

// Binds the GEMM result to the register `gemm` at its output coordinates (row and col, and bat for
// batched products, as C variables of the kernel) and emits the epilogue from it: returns the
// statements (indented by `indent`) and the expression of the group's output.
std::pair<std::string, std::string> epilogue_on_register(const GroupContext& ctx, const GraphNode& g,
                                                         const GemmShape& s, PointwiseEmitter& e,
                                                         int indent) {
  std::vector<std::string> coords;
  const auto& os = s.out_shape;
  if (op_name(g) == "linear.default") {
    std::vector<std::int64_t> lead(os.begin(), os.end() - 1);
    coords = unravel("row", lead);
    coords.push_back("col");
  } else {
    std::vector<std::int64_t> lead(os.begin(), os.end() - 2);
    coords = unravel("bat", lead);
    coords.push_back("row");
    coords.push_back("col");
  }
  e.bind_register(g.outputs[0].name, "gemm", coords);
  std::string value = e.value(ctx.outputs[0].name, coords);
  return {e.take_code(indent), value};
}

// A tile configuration of kernels/nova/gemm_tf32x3.cuh (the aliases at its end).
struct TensorCoreTile {
  const char* alias;
  int bm, bn, threads, min_blocks, smem_bytes;
};

// The tensor-core path (GenerationTarget::gemm_tf32x3; BuiltinGenerator::alternatives writes it beside
// the library form): fp32 linear layers on tensor cores through the 3xTF32 split, the epilogue
// applied to the accumulators before the only store. Returns nothing where the shapes do not fit a
// tile (the library path then applies). `views`: the outputs are views of the result (the attention's
// head split), and each element is stored into the outputs that hold it instead of an epilogue.
std::optional<RuleOutput> tensor_core_gemm(const GroupContext& ctx, const GraphNode& g, const GemmShape& s,
                                           PointwiseEmitter& e,
                                           const std::optional<std::vector<AnchorView>>& views) {
  if (op_name(g) != "linear.default" || s.batch != 1 || s.alpha != 1.0 || s.beta != 1.0 || s.k % 32 != 0)
    return std::nullopt;
  // 128x64 tiles were the fastest accurate form on every shape of the examples measured in the sixth
  // session but the 16384x4096x4096 seed (4% behind 128x128x64 there); 64x64 covers row counts that
  // are not a multiple of 128.
  static constexpr TensorCoreTile kTiles[] = {{"nova::Tf32x3_128x64", 128, 64, 128, 2, 98304},
                                              {"nova::Tf32x3_64x64", 64, 64, 128, 3, 65536}};
  const TensorCoreTile* tile = nullptr;
  for (const auto& t : kTiles)
    if (s.m % t.bm == 0 && s.n % t.bn == 0) {
      tile = &t;
      break;
    }
  if (!tile) return std::nullopt;
  std::string store;
  if (views) {
    std::vector<std::string> types;
    for (std::size_t o = 0; o < ctx.outputs.size(); ++o) types.push_back(ctx.output_storage_type(o));
    store = store_into_views(*views, ctx.output_names, types, s.n, "gemm", 4);
  } else {
    auto [epilogue, value] = epilogue_on_register(ctx, g, s, e, 4);
    store = epilogue + fmt::format("    {}[row * {}LL + col] = nova::from_f<{}>({});\n", ctx.output_names[0],
                                   s.n, ctx.output_storage_type(0), value);
  }
  const auto input = [&](const std::string& t) {
    return ctx.input_names[static_cast<std::size_t>(ctx.input_index(t))];
  };
  std::string bias = s.bias.empty() ? "" : fmt::format(" + nova::to_f({}[col])", input(s.bias));
  std::string name = fmt::format("nova_g{}_gemm_tf32x3", ctx.group.id);
  std::string kernel = fmt::format(
      R"(#include "nova/gemm_tf32x3.cuh"

// C[{m}x{n}] = A[{m}x{k}] * W[{n}x{k}]^T (a linear weight) on tensor cores through the 3xTF32 split
// (fp32-accurate: each operand is split into a TF32 part and its remainder, three products summed in
// fp32), with the epilogue applied to the accumulators before the only store. {bm}x{bn} tiles,
// {threads} threads, a 4-stage cp.async pipeline in {smem} bytes of shared memory
// (kernels/nova/gemm_tf32x3.cuh).
extern "C" __global__ void __launch_bounds__({threads}, {min_blocks}) {name}(
    {params}) {{
  if (!nova::aligned16({a}, {w})) __trap();  // cp.async moves 16 bytes: fresh tensors always are
  extern __shared__ float4 nova_smem[];
  {alias} tile;
  tile.mainloop({a}, {w}, {m}, {n}, {k}, nova_smem);
  tile.for_each([&](int row_index, int col_index, float acc) {{
    const long long row = row_index, col = col_index;
    const float gemm = acc{bias};
{store}  }});
}}

)",
      fmt::arg("m", s.m), fmt::arg("n", s.n), fmt::arg("k", s.k), fmt::arg("bm", tile->bm),
      fmt::arg("bn", tile->bn), fmt::arg("threads", tile->threads), fmt::arg("min_blocks", tile->min_blocks),
      fmt::arg("smem", tile->smem_bytes), fmt::arg("name", name), fmt::arg("params", ctx.kernel_params()),
      fmt::arg("a", input(s.a)), fmt::arg("w", input(s.b)), fmt::arg("alias", tile->alias),
      fmt::arg("bias", bias), fmt::arg("store", store));
  const std::int64_t tiles = (s.n / tile->bn) * (s.m / tile->bm);
  return one_kernel(
      ctx, "gemm_tf32x3", kernel, name, {s.n / tile->bn, s.m / tile->bm, 1}, tile->threads, tile->smem_bytes,
      fmt::format("tensor-core GEMM (3xTF32): {} tiles of {}x{}, {:.3g} M multiply-adds. "
                  "It sums in another order than eager's cuBLAS kernel: where eager's own rounding "
                  "exceeds the 1e-4 check against float64, expect it to fail the check against "
                  "eager while closer to float64",
                  tiles, tile->bm, tile->bn, double(s.m) * s.n * s.k / 1e6));
}

}  // namespace

RuleOutput GemmRule::generate(const GroupContext& ctx) {
  const GraphNode& g = *ctx.anchor();
  PointwiseEmitter e(ctx.graph, ctx.group);
  ctx.bind_inputs(e);
  GemmShape s = read_gemm(g, e);
  const double macs = double(s.batch) * s.m * s.n * s.k;
  int ai = ctx.input_index(s.a), bi = ctx.input_index(s.b), ci = s.bias.empty() ? 0 : ctx.input_index(s.bias);
  bool fp32 =
      ctx.outputs[0].dtype == "float32" && e.info(s.a).dtype == "float32" && e.info(s.b).dtype == "float32";
  const bool operands = ai >= 0 && bi >= 0 && ci >= 0 && fp32;
  const bool own_kernel = operands && ctx.epilogue_preserves_coordinates();
  if (macs > kTiledLimit && operands && ctx.target.gemm_tf32x3) {
    auto views = own_kernel ? std::nullopt : anchor_views(ctx);
    if (own_kernel || views)
      if (auto r = tensor_core_gemm(ctx, g, s, e, views)) return *r;
  }
  if (macs > kTiledLimit || !own_kernel) return library_gemm(ctx, g);

  auto [epilogue, value] = epilogue_on_register(ctx, g, s, e, 10);
  std::string A = ctx.input_names[static_cast<std::size_t>(ai)],
              B = ctx.input_names[static_cast<std::size_t>(bi)];
  std::string a_at = fmt::format("{}[a_base + (long long)(r) * {} + (kk)]", A, s.k);
  std::string b_at = s.b_transposed ? fmt::format("{}[b_base + (long long)(c) * {} + (kk)]", B, s.k)
                                    : fmt::format("{}[b_base + (long long)(kk) * {} + (c)]", B, s.n);
  std::string beta = s.beta == 1.0 ? "" : PointwiseEmitter::float_literal(s.beta) + " * ";
  std::string bias = s.bias.empty() ? ""
                                    : fmt::format(" + {}nova::to_f({}[col])", beta,
                                                  ctx.input_names[static_cast<std::size_t>(ci)]);
  std::string alpha = s.alpha == 1.0 ? "" : PointwiseEmitter::float_literal(s.alpha) + " * ";
  std::string name = fmt::format("nova_g{}_gemm_tiled", ctx.group.id);
  const int BM = 64, BN = 64, BK = 16;
  std::string kernel = fmt::format(
      R"(// Tiled GEMM, C[{batch}x{m}x{n}] = A[{m}x{k}] * B[{k}x{n}]{bt}, fp32 FMA, with the epilogue applied to the
// accumulators. 64x64 output tile per block of 256 threads, 4x4 outputs per thread, 16-deep K steps
// staged in shared memory (A stored k-major so both tiles are read without bank conflicts).
extern "C" __global__ void __launch_bounds__(256) {name}(
    {params}) {{
  __shared__ float As[{BK}][{BM} + 4];
  __shared__ float Bs[{BK}][{BN} + 4];
  const long long bat = blockIdx.z;
  const long long a_base = bat * {mk}LL, b_base = bat * {kn}LL;
  const int tile_m = blockIdx.y * {BM}, tile_n = blockIdx.x * {BN};
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  float acc[4][4] = {{}};
  for (int k0 = 0; k0 < {k}; k0 += {BK}) {{
    for (int t = threadIdx.x; t < {BM} * {BK}; t += 256) {{
      const int r = tile_m + t / {BK}, kk = k0 + t % {BK};
      As[t % {BK}][t / {BK}] = (r < {m} && kk < {k}) ? {a_at} : 0.0f;
    }}
    for (int t = threadIdx.x; t < {BN} * {BK}; t += 256) {{
{bload}
    }}
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < {BK}; ++kk) {{
      float a[4], b[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) a[i] = As[kk][ty + 16 * i];
#pragma unroll
      for (int j = 0; j < 4; ++j) b[j] = Bs[kk][tx + 16 * j];
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }}
    __syncthreads();
  }}
#pragma unroll
  for (int i = 0; i < 4; ++i) {{
    const long long row = tile_m + ty + 16 * i;
    if (row >= {m}) continue;
#pragma unroll
    for (int j = 0; j < 4; ++j) {{
      const long long col = tile_n + tx + 16 * j;
      if (col >= {n}) continue;
      const float gemm = {alpha}acc[i][j]{bias};
{epilogue}          {out}[{out_index}] = nova::from_f<{otype}>({value});
    }}
  }}
}}

)",
      fmt::arg("batch", s.batch), fmt::arg("m", s.m), fmt::arg("n", s.n), fmt::arg("k", s.k),
      fmt::arg("bt", s.b_transposed ? " (B stored transposed, a linear weight)" : ""), fmt::arg("name", name),
      fmt::arg("params", ctx.kernel_params()), fmt::arg("BK", BK), fmt::arg("BM", BM), fmt::arg("BN", BN),
      fmt::arg("mk", s.m * s.k), fmt::arg("kn", s.k * s.n), fmt::arg("a_at", a_at),
      fmt::arg("bload",
               s.b_transposed
                   ? fmt::format("      const int c = tile_n + t / {BK}, kk = k0 + t % {BK};\n"
                                 "      Bs[t % {BK}][t / {BK}] = (c < {n} && kk < {k}) ? {b_at} : 0.0f;",
                                 fmt::arg("BK", BK), fmt::arg("n", s.n), fmt::arg("k", s.k),
                                 fmt::arg("b_at", b_at))
                   : fmt::format("      const int c = tile_n + t % {BN}, kk = k0 + t / {BN};\n"
                                 "      Bs[t / {BN}][t % {BN}] = (c < {n} && kk < {k}) ? {b_at} : 0.0f;",
                                 fmt::arg("BN", BN), fmt::arg("n", s.n), fmt::arg("k", s.k),
                                 fmt::arg("b_at", b_at))),
      fmt::arg("alpha", alpha), fmt::arg("bias", bias), fmt::arg("epilogue", epilogue),
      fmt::arg("out", ctx.output_names[0]),
      fmt::arg("out_index", fmt::format("(bat * {}LL + row) * {}LL + col", s.m, s.n)),
      fmt::arg("otype", ctx.output_storage_type(0)), fmt::arg("value", value));
  const std::array<std::int64_t, 3> grid = {(s.n + BN - 1) / BN, (s.m + BM - 1) / BM, s.batch};
  return one_kernel(
      ctx, "gemm_tiled", kernel, name, grid, 256, 0,
      fmt::format("one launch of {} tiles; {:.3g} M multiply-adds", grid[0] * grid[1] * grid[2], macs / 1e6));
}

}  // namespace nova
