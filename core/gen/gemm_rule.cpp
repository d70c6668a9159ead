#include "core/gen/gemm_rule.h"

#include <array>
#include <cmath>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "core/gen/anchor_views.h"
#include "core/gen/gemm_shape.h"
#include "core/gen/gemm_tf32x3_rule.h"
#include "core/gen/pointwise_rule.h"

namespace nova {
namespace {

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

}  // namespace

RuleOutput GemmRule::generate(const GroupContext& ctx) {
  const GraphNode& g = *ctx.anchor();
  PointwiseEmitter e(ctx.graph, ctx.group);
  ctx.bind_inputs(e);
  GemmShape s = GemmShape::read(g, e);
  const double macs = double(s.batch) * s.m * s.n * s.k;
  int ai = ctx.input_index(s.a), bi = ctx.input_index(s.b), ci = s.bias.empty() ? 0 : ctx.input_index(s.bias);
  bool fp32 =
      ctx.outputs[0].dtype == "float32" && e.info(s.a).dtype == "float32" && e.info(s.b).dtype == "float32";
  const bool operands = ai >= 0 && bi >= 0 && ci >= 0 && fp32;
  const bool own_kernel = operands && ctx.epilogue_preserves_coordinates();
  // The tensor-core form past the tiled kernel's size, and from GemmTf32x3Rule::kMinMacs where the
  // tiled kernel cannot read the operands (views, masks, computed operands) or would leave most of the
  // GPU idle (a small M x N with a long K: the tensor-core form splits K).
  const std::int64_t tiled_blocks = (s.n + 63) / 64 * ((s.m + 63) / 64) * s.batch;
  const bool tiled_fills = own_kernel && tiled_blocks >= ctx.target.sm_count / 2;
  if (ctx.target.gemm_tf32x3 && fp32 &&
      (macs > kTiledLimit || (macs >= GemmTf32x3Rule::kMinMacs && !tiled_fills))) {
    const bool coordinates = ctx.epilogue_in_place();
    auto views = coordinates ? std::nullopt : anchor_views(ctx);
    if (coordinates || views)
      if (auto r = GemmTf32x3Rule::generate(ctx, s, e, views)) return *r;
  }
  if (macs > kTiledLimit || !own_kernel) return library_gemm(ctx, g);

  auto [epilogue, value] = s.epilogue_on_register(ctx, e, 10);
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
