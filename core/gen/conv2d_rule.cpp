#include "core/gen/conv2d_rule.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/gen/pointwise_rule.h"

namespace nova {
namespace {

struct ConvShape {
  std::int64_t n, cin, h, w, cout, kh, kw, oh, ow;
  std::int64_t sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1, groups = 1;
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
  if (!conv2d) {
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

  const std::int64_t taps = s.cin * s.kh * s.kw;
  const std::int64_t co_tile = std::min<std::int64_t>(s.cout, 32);
  std::string why;
  if (s.groups != 1)
    why = "grouped convolution";
  else if (xi < 0 || wi < 0 || bi < 0)
    why = "its input is computed inside the group";
  else if (ctx.inputs[static_cast<std::size_t>(xi)].dtype != "float32")
    why = "not float32";
  else if (co_tile * taps * 4 > 32 * 1024)
    why = fmt::format("{} weights per channel tile exceed the shared-memory tile", co_tile * taps);
  else if (taps > 512)
    why = fmt::format("{} taps per output are too many for the direct kernel", taps);
  else if (!ctx.epilogue_preserves_coordinates())
    why = "its epilogue moves data between positions";
  if (!why.empty()) return library_conv(ctx, conv, why);

  // The epilogue, computed in registers from the convolution's accumulator.
  const std::string conv_out = conv.outputs[0].name;
  e.bind_register(conv_out, "conv", {"n", "co", "oh", "ow"});
  std::string value = e.value(ctx.outputs[0].name, {"n", "co", "oh", "ow"});
  std::string epilogue = e.take_code(4);
  const std::int64_t co_tiles = (s.cout + co_tile - 1) / co_tile;
  const bool padded = s.ph || s.pw;
  const int threads = 128;
  std::string xname = ctx.input_names[static_cast<std::size_t>(xi)];
  std::string wname = ctx.input_names[static_cast<std::size_t>(wi)];
  std::string load =
      padded ? fmt::format(
                   "(ih >= 0 && ih < {h} && iw >= 0 && iw < {w}) ? xn[(ci * {h} + ih) * {w} + iw] : 0.0f",
                   fmt::arg("h", s.h), fmt::arg("w", s.w))
             : fmt::format("xn[(ci * {h} + ih) * {w} + iw]", fmt::arg("h", s.h), fmt::arg("w", s.w));
  std::string name = fmt::format("nova_g{}_conv2d_direct", ctx.group.id);
  std::string kernel = fmt::format(
      R"(// Direct convolution {cin}->{cout} channels, {kh}x{kw} kernel, stride {sh}x{sw}, padding {ph}x{pw},
// dilation {dh}x{dw}, with the epilogue in registers. One thread per output pixel computes a tile of
// {tile} output channels; the tile's weights sit in shared memory and every input tap is read once
// per tile and reused {tile} times. Stores are coalesced along the output width.
extern "C" __global__ void __launch_bounds__({threads}) {name}(
    {params}) {{
  __shared__ float w_tile[{tile} * {taps}];
  const int co0 = blockIdx.y * {tile};
  for (int t = threadIdx.x; t < {tile} * {taps}; t += blockDim.x) {{
    const int co = co0 + t / {taps};
    w_tile[t] = co < {cout} ? {wname}[(long long)co * {taps} + t % {taps}] : 0.0f;
  }}
  __syncthreads();
  const long long p = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (p >= {pixels}LL) return;
  const long long n = p / {ohw}LL;
  const long long oh = (p / {ow}LL) % {oh}LL;
  const long long ow = p % {ow}LL;
  const float* xn = {xname} + n * {chw}LL;
  float acc[{tile}];
#pragma unroll
  for (int c = 0; c < {tile}; ++c) acc[c] = 0.0f;
#pragma unroll {ci_unroll}
  for (int ci = 0; ci < {cin}; ++ci) {{
#pragma unroll
    for (int kh = 0; kh < {kh}; ++kh) {{
      const long long ih = oh * {sh} - {ph} + kh * {dh};
#pragma unroll
      for (int kw = 0; kw < {kw}; ++kw) {{
        const long long iw = ow * {sw} - {pw} + kw * {dw};
        const float xv = {load};
#pragma unroll
        for (int c = 0; c < {tile}; ++c) acc[c] = fmaf(xv, w_tile[c * {taps} + (ci * {kh} + kh) * {kw} + kw], acc[c]);
      }}
    }}
  }}
#pragma unroll
  for (int c = 0; c < {tile}; ++c) {{
    const long long co = co0 + c;
    if (co >= {cout}) break;
    const float conv = acc[c]{bias};
{epilogue}    {out}[((n * {cout} + co) * {oh} + oh) * {ow} + ow] = nova::from_f<{otype}>({value});
  }}
}}

)",
      fmt::arg("cin", s.cin), fmt::arg("cout", s.cout), fmt::arg("kh", s.kh), fmt::arg("kw", s.kw),
      fmt::arg("sh", s.sh), fmt::arg("sw", s.sw), fmt::arg("ph", s.ph), fmt::arg("pw", s.pw),
      fmt::arg("dh", s.dh), fmt::arg("dw", s.dw), fmt::arg("tile", co_tile), fmt::arg("threads", threads),
      fmt::arg("name", name), fmt::arg("params", ctx.kernel_params()), fmt::arg("taps", taps),
      fmt::arg("wname", wname), fmt::arg("pixels", s.n * s.oh * s.ow), fmt::arg("ohw", s.oh * s.ow),
      fmt::arg("oh", s.oh), fmt::arg("ow", s.ow), fmt::arg("xname", xname),
      fmt::arg("chw", s.cin * s.h * s.w), fmt::arg("ci_unroll", s.cin <= 4 ? s.cin : 1),
      fmt::arg("load", load),
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
  step.grid = {(s.n * s.oh * s.ow + threads - 1) / threads, co_tiles, 1};
  step.block = {threads, 1, 1};
  step.args = ctx.plan_args();
  out.plan.steps.push_back(step);
  out.notes = fmt::format("direct kernel, {} pixels x {} channel tile(s) of {}", s.n * s.oh * s.ow, co_tiles,
                          co_tile);
  return out;
}

}  // namespace nova
