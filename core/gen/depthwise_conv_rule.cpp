#include "core/gen/depthwise_conv_rule.h"

#include <fmt/format.h>

#include "core/gen/conv_operands.h"

namespace nova {

std::optional<RuleOutput> DepthwiseConvRule::generate(const GroupContext& ctx, const GraphNode& conv,
                                                      const ConvShape& s, PointwiseEmitter& e) {
  if (s.dims != 2 || s.transposed || s.groups != s.cin || s.groups < 2 || s.cout % s.cin != 0) return std::nullopt;
  const ConvOperands o(ctx, conv);
  if (o.xi < 0 || o.wi < 0 || o.bi < 0 || ctx.inputs[static_cast<std::size_t>(o.xi)].dtype != "float32" ||
      ctx.inputs[static_cast<std::size_t>(o.wi)].dtype != "float32" || ctx.outputs[0].dtype != "float32" ||
      !ctx.epilogue_preserves_coordinates())
    return std::nullopt;
  const std::int64_t mult = s.cout / s.cin;
  // The band: as many output rows as the tile holds, at most 64; fewer where the grid would leave the GPU
  // with under four blocks per multiprocessor.
  const std::int64_t in_cols = (s.ow - 1) * s.sw + (s.kw - 1) * s.dw + 1;
  const auto tile_bytes = [&](std::int64_t band) {
    return ((band - 1) * s.sh + (s.kh - 1) * s.dh + 1) * in_cols * 4 + s.kh * s.kw * 4;
  };
  std::int64_t band = std::min<std::int64_t>(64, s.oh);
  while (band > 1 && tile_bytes(band) > kMaxTileBytes) band /= 2;
  const std::int64_t planes = s.n * s.cout;
  while (band > 1 && planes * ((s.oh + band - 1) / band) < 4 * ctx.target.sm_count) band /= 2;
  if (tile_bytes(band) > kMaxTileBytes) return std::nullopt;
  const std::int64_t bands = (s.oh + band - 1) / band;
  if (planes * bands >= (std::int64_t{1} << 31) || s.n * s.cin * s.h * s.w >= (std::int64_t{1} << 31) ||
      planes * s.oh * s.ow >= (std::int64_t{1} << 31))
    return std::nullopt;  // 32-bit indices

  e.bind_register(conv.outputs[0].name, "conv", {"n", "co", "oh", "ow"});
  const std::string value = e.value(ctx.outputs[0].name, {"n", "co", "oh", "ow"});
  const std::string epilogue = e.take_code(4);
  const std::string name = fmt::format("nova_g{}_conv2d_depthwise", ctx.group.id);
  const int threads = 256;
  RuleOutput out;
  out.kernels = fmt::format(
      R"(#include "nova/depthwise.cuh"

// Depthwise convolution: {cin} channels{mult_note}, {kh}x{kw} kernel, stride {sh}x{sw}, padding {ph}x{pw},
// dilation {dh}x{dw}, output {n}x{cout}x{oh}x{ow}. A block per band of {band} output rows of one output plane:
// the band's input rows (zeros for the padding) and the channel's weights in shared memory, then {threads}
// threads each summing outputs of the band from the tile, the epilogue applied before the only store
// (kernels/nova/depthwise.cuh).
extern "C" __global__ void __launch_bounds__({threads}) {name}(
    {params}) {{
  using Band = nova::DepthwiseBand<{h}, {w}, {kh}, {kw}, {sh}, {sw}, {ph}, {pw}, {dh}, {dw}, {oh}, {ow}, {band}>;
  __shared__ float nova_tile[Band::kSmemFloats];
  const int plane = blockIdx.x / Band::kBands, band = blockIdx.x - plane * Band::kBands;  // plane = n * {cout} + co
  const int n = plane / {cout}, co = plane - n * {cout};
  Band::load({xname} + ((long long)n * {cin} + co / {mult}) * {hw}, {wname} + co * {taps}, band, nova_tile,
             threadIdx.x, blockDim.x);
  __syncthreads();
  Band::compute(nova_tile, band, threadIdx.x, blockDim.x, [&](int oh, int ow, float acc) {{
    const float conv = acc{bias};
{epilogue}    {out}[((long long)plane * {oh} + oh) * {ow} + ow] = nova::from_f<{otype}>({value});
  }});
}}

)",
      fmt::arg("cin", s.cin), fmt::arg("mult_note", mult > 1 ? fmt::format(" x {} outputs each", mult) : ""),
      fmt::arg("kh", s.kh), fmt::arg("kw", s.kw), fmt::arg("sh", s.sh), fmt::arg("sw", s.sw), fmt::arg("ph", s.ph),
      fmt::arg("pw", s.pw), fmt::arg("dh", s.dh), fmt::arg("dw", s.dw), fmt::arg("n", s.n), fmt::arg("cout", s.cout),
      fmt::arg("oh", s.oh), fmt::arg("ow", s.ow), fmt::arg("band", band), fmt::arg("threads", threads),
      fmt::arg("name", name), fmt::arg("params", ctx.kernel_params()), fmt::arg("h", s.h), fmt::arg("w", s.w),
      fmt::arg("xname", o.name(ctx, o.xi)), fmt::arg("mult", mult), fmt::arg("hw", s.h * s.w), fmt::arg("wname", o.name(ctx, o.wi)),
      fmt::arg("taps", s.kh * s.kw),
      fmt::arg("bias", o.has_bias ? fmt::format(" + nova::to_f({}[co])", o.name(ctx, o.bi)) : ""),
      fmt::arg("epilogue", epilogue), fmt::arg("out", ctx.output_names[0]),
      fmt::arg("otype", ctx.output_storage_type(0)), fmt::arg("value", value));
  out.rule = "conv2d_depthwise";
  out.plan = ctx.base_plan();
  PlanStep step;
  step.type = "kernel";
  step.kernel = name;
  step.grid = {planes * bands, 1, 1};
  step.block = {threads, 1, 1};
  step.args = ctx.plan_args();
  out.plan.steps.push_back(step);
  out.notes = fmt::format("depthwise kernel: {} planes x {} band(s) of {} output rows, {} bytes of shared memory each",
                          planes, bands, band, tile_bytes(band));
  return out;
}

}  // namespace nova
