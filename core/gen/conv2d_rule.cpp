#include "core/gen/conv2d_rule.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/gen/conv_operands.h"
#include "core/gen/conv_shape.h"
#include "core/gen/conv_tf32x3_rule.h"
#include "core/gen/depthwise_conv_rule.h"
#include "core/gen/pointwise_rule.h"

namespace nova {
namespace {

// Limits of the direct kernel (beyond them the library convolution runs, with the epilogue fused
// into one pass after it): weights of a 32-channel tile, and taps (cin x kh x kw) per output.
constexpr std::int64_t kDirectWeights = 8192;
constexpr std::int64_t kDirectTaps = 512;

RuleOutput library_conv(const GroupContext& ctx, const GraphNode& conv, const ConvShape& shape,
                        const std::string& why) {
  RuleOutput out;
  LaunchPlan plan = ctx.base_plan();
  const auto& result = conv.outputs.at(0);
  plan.temps.push_back({result.name, result.shape, result.dtype});
  PlanStep step;
  step.type = "library";
  step.op = conv.target;
  // Operands computed inside the group (a transposed view, a scaled input) are materialized first.
  auto computed = PointwiseRule::materialize_operands(ctx, conv, plan, out.kernels);
  for (const auto& a : conv.args) step.args.push_back(ctx.library_arg(a, computed));
  step.out = "temp:0";
  plan.steps.push_back(step);
  bool conv_is_output = ctx.outputs.size() == 1 && ctx.outputs[0].name == result.name;
  if (conv_is_output) {
    plan.steps.back().out = "output:0";
    if (plan.temps.size() == 1) plan.temps.clear();  // the result temp is unused now
    out.notes = "the convolution runs in the library (" + why + "); nothing to fuse after it";
  } else {
    RuleOutput epi = PointwiseRule::generate(ctx, {{result.name, "temp:0"}}, "epilogue");
    out.kernels += epi.kernels;
    for (auto& s : epi.plan.steps) plan.steps.push_back(s);
    out.notes =
        "the convolution runs in the library (" + why + "), then one fused epilogue pass: " + epi.notes;
  }
  out.rule = shape.dims == 3 ? "conv3d_library+epilogue" : "conv2d_library+epilogue";
  out.plan = plan;
  out.library_ops = {conv.target};
  return out;
}

}  // namespace

RuleOutput Conv2dRule::generate(const GroupContext& ctx) {
  const GraphNode& conv = *ctx.anchor();
  PointwiseEmitter e(ctx.graph, ctx.group);
  ctx.bind_inputs(e);
  ConvShape s = ConvShape::read(conv, e);
  const ConvOperands o(ctx, conv);

  if (ctx.target.gemm_tf32x3)
    if (auto r = ConvTf32x3Rule::generate(ctx, conv, s, e)) return *r;
  if (s.transposed) return library_conv(ctx, conv, s, "a transposed convolution");
  if (s.dims == 3) return library_conv(ctx, conv, s, "a 3-D convolution: the direct kernel is 2-D only");
  if (auto r = DepthwiseConvRule::generate(ctx, conv, s, e)) return *r;
  const std::int64_t taps = s.cin * s.kh * s.kw;
  std::string why;
  if (s.groups != 1)
    why = "grouped convolution";
  else if (o.xi < 0 || o.wi < 0 || o.bi < 0)
    why = "its input is computed inside the group";
  else if (ctx.inputs[static_cast<std::size_t>(o.xi)].dtype != "float32")
    why = "not float32";
  else if (std::min<std::int64_t>(s.cout, 32) * taps > kDirectWeights)
    why = fmt::format("{} weights per 32-channel tile: more than the direct kernel's {}",
                      std::min<std::int64_t>(s.cout, 32) * taps, kDirectWeights);
  else if (taps > kDirectTaps)
    why = fmt::format("{} taps per output are too many for the direct kernel", taps);
  else if (!ctx.epilogue_preserves_coordinates())
    why = "its epilogue moves data between positions";
  if (!why.empty()) return library_conv(ctx, conv, s, why);

  // Register blocking: each thread computes `rows` output rows x `chans` output channels at one
  // output column. A weight read from shared memory serves `rows` outputs, an input value read
  // from memory serves `chans` channels and up to kh rows. Fewer rows per thread where the grid
  // would otherwise leave the GPU underfilled (small images).
  const int threads = 128;
  const std::int64_t chans = std::min<std::int64_t>(8, (s.cout + 3) / 4 * 4);
  const std::int64_t co_tiles = (s.cout + chans - 1) / chans;
  std::int64_t rows = std::min<std::int64_t>(4, s.oh);
  while (rows > 1 &&
         s.n * ((s.oh + rows - 1) / rows) * s.ow * co_tiles < std::int64_t{ctx.target.sm_count} * 512)
    rows /= 2;
  const std::int64_t row_tiles = (s.oh + rows - 1) / rows;
  const std::int64_t pixels = s.n * row_tiles * s.ow;  // threads per channel tile
  if (pixels >= (std::int64_t{1} << 31) - threads)
    return library_conv(ctx, conv, s, "more output pixels than the direct kernel's 32-bit index covers");

  // The epilogue, computed in registers from the convolution's accumulator.
  const std::string conv_out = conv.outputs[0].name;
  e.bind_register(conv_out, "conv", {"n", "co", "oh", "ow"});
  std::string value = e.value(ctx.outputs[0].name, {"n", "co", "oh", "ow"});
  std::string epilogue = e.take_code(6);
  const bool padded = s.ph || s.pw;
  std::string xname = o.name(ctx, o.xi);
  std::string wname = o.name(ctx, o.wi);
  std::string load =
      padded ? fmt::format("(ih >= 0 && ih < {h} && iw >= 0 && iw < {w}) ? xc[ih * {w} + iw] : 0.0f",
                           fmt::arg("h", s.h), fmt::arg("w", s.w))
             : fmt::format("xc[ih * {w} + iw]", fmt::arg("w", s.w));
  std::string name = fmt::format("nova_g{}_conv2d_direct", ctx.group.id);
  std::string kernel = fmt::format(
      R"(// Direct convolution {cin}->{cout} channels, {kh}x{kw} kernel, stride {sh}x{sw}, padding {ph}x{pw},
// dilation {dh}x{dw}, output {n}x{cout}x{oh}x{ow}, with the epilogue in registers. Register blocking: a
// thread computes {rows} output row(s) x {chans} output channels at one output column ({rows}x{chans}
// accumulators); a block shares one tile of {chans} channels whose weights sit in shared memory as
// [tap][channel], read 16 bytes at a time and reused for the {rows} rows; each input value is read
// once per tap and reused for the {chans} channels. Loads and stores are coalesced along the width.
extern "C" __global__ void __launch_bounds__({threads}) {name}(
    {params}) {{
  constexpr int kRows = {rows}, kChans = {chans}, kTaps = {taps};
  __shared__ __align__(16) float w_tile[kTaps * kChans];  // [ci][kh][kw][channel]
  const int co0 = blockIdx.y * kChans;
  for (int t = threadIdx.x; t < kTaps * kChans; t += blockDim.x) {{
    const int co = co0 + t % kChans, tap = t / kChans;
    w_tile[t] = co < {cout} ? {wname}[co * kTaps + tap] : 0.0f;
  }}
  __syncthreads();
  const int p = blockIdx.x * blockDim.x + threadIdx.x;  // (image, row tile, output column)
  if (p >= {pixels}) return;
  const int n = p / {tile_px};
  const int oh0 = (p / {ow}) % {row_tiles} * kRows;
  const int ow = p % {ow};
  float acc[kRows][kChans] = {{}};
#pragma unroll {ci_unroll}
  for (int ci = 0; ci < {cin}; ++ci) {{
    const float* xc = {xname} + ((long long)n * {cin} + ci) * {hw};
#pragma unroll
    for (int kh = 0; kh < {kh}; ++kh) {{
#pragma unroll
      for (int kw = 0; kw < {kw}; ++kw) {{
        const float4* wq = reinterpret_cast<const float4*>(w_tile + ((ci * {kh} + kh) * {kw} + kw) * kChans);
        float wv[kChans];
#pragma unroll
        for (int q = 0; q < kChans / 4; ++q) {{
          const float4 w4 = wq[q];
          wv[4 * q] = w4.x, wv[4 * q + 1] = w4.y, wv[4 * q + 2] = w4.z, wv[4 * q + 3] = w4.w;
        }}
        const int iw = ow * {sw} - {pw} + kw * {dw};
#pragma unroll
        for (int r = 0; r < kRows; ++r) {{
          // Rows past the end of the image recompute the last row (in bounds); they are not stored.
          const int ih = min(oh0 + r, {oh} - 1) * {sh} - {ph} + kh * {dh};
          const float xv = {load};
#pragma unroll
          for (int c = 0; c < kChans; ++c) acc[r][c] = fmaf(xv, wv[c], acc[r][c]);
        }}
      }}
    }}
  }}
#pragma unroll
  for (int r = 0; r < kRows; ++r) {{
    const int oh = oh0 + r;
    if (oh >= {oh}) break;
#pragma unroll
    for (int c = 0; c < kChans; ++c) {{
      const int co = co0 + c;
      if (co >= {cout}) break;
      const float conv = acc[r][c]{bias};
{epilogue}      {out}[((long long)(n * {cout} + co) * {oh} + oh) * {ow} + ow] = nova::from_f<{otype}>({value});
    }}
  }}
}}

)",
      fmt::arg("cin", s.cin), fmt::arg("cout", s.cout), fmt::arg("kh", s.kh), fmt::arg("kw", s.kw),
      fmt::arg("sh", s.sh), fmt::arg("sw", s.sw), fmt::arg("ph", s.ph), fmt::arg("pw", s.pw),
      fmt::arg("dh", s.dh), fmt::arg("dw", s.dw), fmt::arg("n", s.n), fmt::arg("rows", rows),
      fmt::arg("chans", chans), fmt::arg("threads", threads), fmt::arg("name", name),
      fmt::arg("params", ctx.kernel_params()), fmt::arg("taps", taps), fmt::arg("wname", wname),
      fmt::arg("pixels", pixels), fmt::arg("tile_px", row_tiles * s.ow), fmt::arg("row_tiles", row_tiles),
      fmt::arg("oh", s.oh), fmt::arg("ow", s.ow), fmt::arg("xname", xname), fmt::arg("hw", s.h * s.w),
      fmt::arg("ci_unroll", s.cin <= 4 ? s.cin : 1), fmt::arg("load", load),
      fmt::arg("bias",
               o.has_bias ? fmt::format(" + nova::to_f({}[co])", o.name(ctx, o.bi))
                        : ""),
      fmt::arg("epilogue", epilogue), fmt::arg("out", ctx.output_names[0]),
      fmt::arg("otype", ctx.output_storage_type(0)), fmt::arg("value", value));

  RuleOutput out;
  out.rule = "conv2d_direct";
  out.kernels = kernel;
  out.plan = ctx.base_plan();
  PlanStep step;
  step.type = "kernel";
  step.kernel = name;
  step.grid = {(pixels + threads - 1) / threads, co_tiles, 1};
  step.block = {threads, 1, 1};
  step.args = ctx.plan_args();
  out.plan.steps.push_back(step);
  out.notes =
      fmt::format("direct kernel, {} threads x {} channel tile(s), {} output row(s) x {} channels per thread",
                  pixels, co_tiles, rows, chans);
  return out;
}

}  // namespace nova
