#include "core/gen/conv2d_rule.h"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "core/gen/pointwise_rule.h"

namespace nova {
namespace {

// Limits of the direct kernel (beyond them the library convolution runs, with the epilogue fused
// into one pass after it): weights of a 32-channel tile, and taps (cin x kh x kw) per output.
constexpr std::int64_t kDirectWeights = 8192;
constexpr std::int64_t kDirectTaps = 512;

struct ConvShape {
  std::int64_t n, cin, h, w, cout, kh, kw, oh, ow;
  std::int64_t sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1, groups = 1;
  bool transposed = false;  // aten.conv_transpose2d: only the library form
};

std::vector<std::int64_t> pair_arg(const GraphNode& node, const char* name, int pos, std::int64_t fallback) {
  const NodeArg* a = find_arg(node, name, pos);
  if (!a || a->constant.is_null()) return {fallback, fallback};
  if (a->constant.is_number()) return {a->constant.get<std::int64_t>(), a->constant.get<std::int64_t>()};
  if (a->constant.is_array() && a->constant.size() == 1)
    return {a->constant[0].get<std::int64_t>(), a->constant[0].get<std::int64_t>()};
  if (a->constant.is_array() && a->constant.size() == 2) return a->constant.get<std::vector<std::int64_t>>();
  throw UnsupportedGroup(
      fmt::format("convolution argument {} = {} is not supported", name, a->constant.dump()));
}

ConvShape read_shape(const GroupContext& ctx, const GraphNode& conv, PointwiseEmitter& e) {
  const NodeArg* x = find_arg(conv, "input", 0);
  const NodeArg* w = find_arg(conv, "weight", 1);
  if (!x || !w || x->tensor.empty() || w->tensor.empty())
    throw UnsupportedGroup("convolution without tensor input or weight");
  const auto& xs = e.info(x->tensor).shape;
  const auto& ws = e.info(w->tensor).shape;
  const auto& os = conv.outputs.at(0).shape;
  if (xs.size() != 4 || ws.size() != 4 || os.size() != 4)
    throw UnsupportedGroup("only 2-D convolutions (NCHW) are supported");
  ConvShape s{xs[0], xs[1], xs[2], xs[3], ws[0], ws[2], ws[3], os[2], os[3]};
  bool conv2d = conv.target == "aten.conv2d.default";
  auto stride = pair_arg(conv, "stride", 3, 1), padding = pair_arg(conv, "padding", 4, 0),
       dilation = pair_arg(conv, "dilation", 5, 1);
  s.sh = stride[0], s.sw = stride[1], s.ph = padding[0], s.pw = padding[1], s.dh = dilation[0],
  s.dw = dilation[1];
  const NodeArg* g = find_arg(conv, "groups", conv2d ? 6 : 8);
  if (g && g->constant.is_number()) s.groups = g->constant.get<std::int64_t>();
  if (conv.target.find("conv_transpose") != std::string::npos) {
    s.transposed = true;  // the weight is [cin, cout / groups, kh, kw]: the library call computes it
  } else if (!conv2d) {
    const NodeArg* tr = find_arg(conv, "transposed", 6);
    if (tr && tr->constant.is_boolean() && tr->constant.get<bool>())
      throw UnsupportedGroup("transposed convolution");
  }
  (void)ctx;
  return s;
}

RuleOutput library_conv(const GroupContext& ctx, const GraphNode& conv, const std::string& why) {
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
  out.rule = "conv2d_library+epilogue";
  out.plan = plan;
  out.library_ops = {conv.target};
  return out;
}

// A tile configuration of kernels/nova/gemm_tf32x3.cuh with the gathered W operand.
struct GatherTile {
  const char* alias;
  int bm, bn, threads, min_blocks, smem_bytes;
};

// The tensor-core path (GenerationTarget::gemm_tf32x3; BuiltinGenerator::alternatives writes it beside
// the direct kernel or the library form): the convolution as an implicit GEMM, out[co, pixel] =
// weight[co, (ci, r, s)] x patches[(ci, r, s), pixel], on tensor cores through the 3xTF32 split; the
// patches are gathered from the NCHW input into shared memory (kernels/nova/conv_gather.cuh), zeros
// for the padding, and the epilogue is applied to the accumulators before the only store. Returns
// nothing where it does not apply (the caller's other forms then do): why_not says why.
std::optional<RuleOutput> tensor_core_conv(const GroupContext& ctx, const GraphNode& conv, const ConvShape& s,
                                           PointwiseEmitter& e, std::string& why_not) {
  const NodeArg* x = find_arg(conv, "input", 0);
  const NodeArg* w = find_arg(conv, "weight", 1);
  const NodeArg* b = find_arg(conv, "bias", 2);
  const bool has_bias = b && !b->tensor.empty();
  const int xi = ctx.input_index(x->tensor), wi = ctx.input_index(w->tensor),
            bi = has_bias ? ctx.input_index(b->tensor) : 0;
  const std::int64_t cin_g = s.cin / s.groups, cout_g = s.cout / s.groups, k = cin_g * s.kh * s.kw;
  const std::int64_t pixels = s.n * s.oh * s.ow;
  const double macs = double(pixels) * s.cout * k;
  if (wi < 0 || bi < 0)
    why_not = "its weight or bias is computed inside the group";
  else if (e.info(x->tensor).dtype != "float32" || ctx.inputs[static_cast<std::size_t>(wi)].dtype != "float32" ||
           ctx.outputs[0].dtype != "float32")
    why_not = "not float32";
  else if (!ctx.epilogue_preserves_coordinates())
    why_not = "its epilogue moves data between positions";
  else if (cout_g < 32)
    why_not = fmt::format("{} output channels per group: too few rows for a tensor-core tile", cout_g);
  else if (k % 4 != 0)
    why_not = fmt::format("{} weights per output channel: not a multiple of 4 (16-byte rows)", k);
  else if (macs < Conv2dRule::kTensorCoreMinMacs)
    why_not = fmt::format("{:.3g} M multiply-adds: too few to fill the GPU with tensor-core tiles", macs / 1e6);
  else if (pixels >= (std::int64_t{1} << 31) || s.cin * s.h * s.w >= (std::int64_t{1} << 31))
    why_not = "more pixels than a 32-bit index covers";
  if (!why_not.empty()) return std::nullopt;

  RuleOutput out;
  out.plan = ctx.base_plan();
  std::string params = ctx.kernel_params(), xname;
  std::vector<PlanArg> args = ctx.plan_args();
  if (xi >= 0) {
    xname = ctx.input_names[static_cast<std::size_t>(xi)];
  } else {
    // An input computed inside the group (an activation before the convolution) is materialized
    // first, as eager does, and the convolution reads it as one more parameter.
    auto computed = PointwiseRule::materialize_operands(ctx, conv, out.plan, out.kernels);
    xname = "nova_conv_input";
    params += ",\n    const float* __restrict__ " + xname;
    args.push_back({computed.at(x->tensor), "", nullptr, ""});
  }

  // 128 output channels per tile where a group has that many, else 64 channels by 128 pixels.
  static constexpr GatherTile kTiles[] = {{"nova::Tf32x3Gather_128x64", 128, 64, 128, 2, 100352},
                                          {"nova::Tf32x3Gather_64x128", 64, 128, 128, 2, 100352}};
  const GatherTile& tile = cout_g >= 128 ? kTiles[0] : kTiles[1];
  // K's index arithmetic in a table of 8 bytes per k in shared memory, where it leaves room for two
  // blocks per multiprocessor (K up to 1536); beyond, each element decodes its k.
  const std::int64_t kpad = (k + 31) / 32 * 32;
  const bool table = kpad <= Conv2dRule::kTableK;
  const std::int64_t smem = tile.smem_bytes + (table ? kpad * 8 : 0);
  const std::string geometry =
      fmt::format("{}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}", cin_g, s.h, s.w, s.kh, s.kw, s.sh, s.sw,
                  s.ph, s.pw, s.dh, s.dw, s.oh, s.ow);
  const std::string x_of_group = fmt::format("{} + (long long)grp * {}LL", xname, cin_g * s.h * s.w);
  const std::string gather =
      table ? fmt::format("  int2* const nova_taps = reinterpret_cast<int2*>(reinterpret_cast<char*>(nova_smem) + "
                          "{alias}::kSmemBytes);\n"
                          "  const nova::ConvNchwTableGather<{geometry}, {kpad}> gather{{\n"
                          "      {x}, {chw}LL, {pixels}, nova_taps}};\n"
                          "  gather.fill(nova_taps);  // K's taps, once per block\n"
                          "  __syncthreads();\n",
                          fmt::arg("alias", tile.alias), fmt::arg("geometry", geometry), fmt::arg("kpad", kpad),
                          fmt::arg("x", x_of_group), fmt::arg("chw", s.cin * s.h * s.w), fmt::arg("pixels", pixels))
            : fmt::format("  const nova::ConvNchwGather<{geometry}> gather{{\n"
                          "      {x}, {chw}LL, {pixels}}};\n",
                          fmt::arg("geometry", geometry), fmt::arg("x", x_of_group),
                          fmt::arg("chw", s.cin * s.h * s.w), fmt::arg("pixels", pixels));
  e.bind_register(conv.outputs[0].name, "conv", {"n", "co", "oh", "ow"});
  std::string value = e.value(ctx.outputs[0].name, {"n", "co", "oh", "ow"});
  std::string epilogue = e.take_code(4);
  const auto name_of = [&](int i) { return ctx.input_names[static_cast<std::size_t>(i)]; };
  std::string name = fmt::format("nova_g{}_conv2d_tf32x3", ctx.group.id);
  out.kernels += fmt::format(
      R"(#include "nova/gemm_tf32x3.cuh"
#include "nova/conv_gather.cuh"

// Convolution {cin}->{cout} channels in {groups} group(s), {kh}x{kw} kernel, stride {sh}x{sw}, padding
// {ph}x{pw}, dilation {dh}x{dw}, output {n}x{cout}x{oh}x{ow}, as an implicit GEMM per group:
// [{cout_g} x {k}] weights times [{k} x {pixels}] input patches, on tensor cores through the 3xTF32 split
// (fp32-accurate: each operand is split into a TF32 part and its remainder, three products summed in
// fp32). The patches are gathered into shared memory (zeros for the padding), {bm}x{bn} tiles, {threads}
// threads, a 4-stage cp.async pipeline{taps} in {smem} bytes; the epilogue is applied to the accumulators
// before the only store (kernels/nova/gemm_tf32x3.cuh, kernels/nova/conv_gather.cuh).
extern "C" __global__ void __launch_bounds__({threads}, {min_blocks}) {name}(
    {params}) {{
  if (!nova::aligned16({wname})) __trap();  // cp.async moves 16 bytes: fresh tensors always are
  extern __shared__ float4 nova_smem[];
  const int grp = blockIdx.z;
{gather}  {alias} tile;
  tile.mainloop_gather({wname} + (long long)grp * {wg}LL, {k}, {cout_g}, {k}, blockIdx.y * {bm}, blockIdx.x * {bn},
                       gather, nova_smem);
  tile.for_each([&](int row_index, int col_index, float acc) {{
    if (row_index >= {cout_g} || col_index >= {pixels}) return;
    const int co = grp * {cout_g} + row_index;
    const int n = col_index / {ohw}, pix = col_index - n * {ohw};
    const int oh = pix / {ow}, ow = pix - oh * {ow};
    const float conv = acc{bias};
{epilogue}    {out}[((long long)(n * {cout} + co) * {oh} + oh) * {ow} + ow] = nova::from_f<{otype}>({value});
  }});
}}

)",
      fmt::arg("cin", s.cin), fmt::arg("cout", s.cout), fmt::arg("groups", s.groups), fmt::arg("kh", s.kh),
      fmt::arg("kw", s.kw), fmt::arg("sh", s.sh), fmt::arg("sw", s.sw), fmt::arg("ph", s.ph), fmt::arg("pw", s.pw),
      fmt::arg("dh", s.dh), fmt::arg("dw", s.dw), fmt::arg("n", s.n), fmt::arg("oh", s.oh), fmt::arg("ow", s.ow),
      fmt::arg("h", s.h), fmt::arg("w", s.w), fmt::arg("cout_g", cout_g), fmt::arg("cin_g", cin_g),
      fmt::arg("k", k), fmt::arg("pixels", pixels), fmt::arg("bm", tile.bm), fmt::arg("bn", tile.bn),
      fmt::arg("threads", tile.threads), fmt::arg("min_blocks", tile.min_blocks), fmt::arg("smem", smem),
      fmt::arg("taps", table ? " and a table of K's taps" : ""),
      fmt::arg("alias", tile.alias), fmt::arg("name", name), fmt::arg("params", params),
      fmt::arg("wname", name_of(wi)), 
      fmt::arg("gather", gather),
      fmt::arg("wg", cout_g * k), fmt::arg("ohw", s.oh * s.ow),
      fmt::arg("bias", has_bias ? fmt::format(" + nova::to_f({}[co])", name_of(bi)) : ""),
      fmt::arg("epilogue", epilogue), fmt::arg("out", ctx.output_names[0]),
      fmt::arg("otype", ctx.output_storage_type(0)), fmt::arg("value", value));

  out.rule = "conv2d_tf32x3";
  PlanStep step;
  step.type = "kernel";
  step.kernel = name;
  step.grid = {(pixels + tile.bn - 1) / tile.bn, (cout_g + tile.bm - 1) / tile.bm, s.groups};
  step.block = {tile.threads, 1, 1};
  step.shared_bytes = smem;
  step.args = std::move(args);
  out.plan.steps.push_back(step);
  out.notes = fmt::format(
      "{}tensor-core implicit GEMM (3xTF32): {} tiles of {}x{}, {:.3g} M multiply-adds. It sums in another "
      "order than eager's cuDNN kernel: where eager's own rounding exceeds the 1e-4 check against float64, "
      "expect it to differ from eager while as close to float64",
      xi >= 0 ? "" : "its input materialized first, then a ", step.grid[0] * step.grid[1] * step.grid[2], tile.bm,
      tile.bn, macs / 1e6);
  return out;
}

}  // namespace

RuleOutput Conv2dRule::generate(const GroupContext& ctx) {
  const GraphNode& conv = *ctx.anchor();
  PointwiseEmitter e(ctx.graph, ctx.group);
  ctx.bind_inputs(e);
  ConvShape s = read_shape(ctx, conv, e);
  const NodeArg* x = find_arg(conv, "input", 0);
  const NodeArg* w = find_arg(conv, "weight", 1);
  const NodeArg* b = find_arg(conv, "bias", 2);
  bool has_bias = b && !b->tensor.empty();
  int xi = ctx.input_index(x->tensor), wi = ctx.input_index(w->tensor),
      bi = has_bias ? ctx.input_index(b->tensor) : 0;

  std::string why;
  if (s.transposed) return library_conv(ctx, conv, "a transposed convolution");
  if (ctx.target.gemm_tf32x3) {
    if (auto r = tensor_core_conv(ctx, conv, s, e, why)) return *r;
    why.clear();  // the other forms, each with its own reason
  }
  const std::int64_t taps = s.cin * s.kh * s.kw;
  if (s.groups != 1)
    why = "grouped convolution";
  else if (xi < 0 || wi < 0 || bi < 0)
    why = "its input is computed inside the group";
  else if (ctx.inputs[static_cast<std::size_t>(xi)].dtype != "float32")
    why = "not float32";
  else if (std::min<std::int64_t>(s.cout, 32) * taps > kDirectWeights)
    why = fmt::format("{} weights per 32-channel tile: more than the direct kernel's {}",
                      std::min<std::int64_t>(s.cout, 32) * taps, kDirectWeights);
  else if (taps > kDirectTaps)
    why = fmt::format("{} taps per output are too many for the direct kernel", taps);
  else if (!ctx.epilogue_preserves_coordinates())
    why = "its epilogue moves data between positions";
  if (!why.empty()) return library_conv(ctx, conv, why);

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
    return library_conv(ctx, conv, "more output pixels than the direct kernel's 32-bit index covers");

  // The epilogue, computed in registers from the convolution's accumulator.
  const std::string conv_out = conv.outputs[0].name;
  e.bind_register(conv_out, "conv", {"n", "co", "oh", "ow"});
  std::string value = e.value(ctx.outputs[0].name, {"n", "co", "oh", "ow"});
  std::string epilogue = e.take_code(6);
  const bool padded = s.ph || s.pw;
  std::string xname = ctx.input_names[static_cast<std::size_t>(xi)];
  std::string wname = ctx.input_names[static_cast<std::size_t>(wi)];
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
               has_bias ? fmt::format(" + nova::to_f({}[co])", ctx.input_names[static_cast<std::size_t>(bi)])
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
