#include "core/gen/conv_tf32x3_rule.h"

#include <fmt/format.h>

#include "core/gen/pointwise_rule.h"

namespace nova {
namespace {

// A tile configuration of kernels/nova/gemm_tf32x3.cuh with the gathered W operand.
struct GatherTile {
  const char* alias;
  int bm, bn, threads, min_blocks, smem_bytes;
};

}  // namespace

std::optional<RuleOutput> ConvTf32x3Rule::generate(const GroupContext& ctx, const GraphNode& conv, const ConvShape& s,
                                                   PointwiseEmitter& e) {
  const NodeArg* x = find_arg(conv, "input", 0);
  const NodeArg* w = find_arg(conv, "weight", 1);
  const NodeArg* b = find_arg(conv, "bias", 2);
  const bool has_bias = b && !b->tensor.empty();
  const int xi = ctx.input_index(x->tensor), wi = ctx.input_index(w->tensor),
            bi = has_bias ? ctx.input_index(b->tensor) : 0;
  const std::int64_t cin_g = s.cin / s.groups, cout_g = s.cout / s.groups, k = cin_g * s.kh * s.kw;
  const std::int64_t pixels = s.n * s.oh * s.ow;
  const double macs = double(pixels) * s.cout * k;
  const bool applies =
      wi >= 0 && bi >= 0 &&  // the weight and bias are the group's inputs
      e.info(x->tensor).dtype == "float32" && ctx.inputs[static_cast<std::size_t>(wi)].dtype == "float32" &&
      ctx.outputs[0].dtype == "float32" &&        // 3xTF32 is an fp32 method
      ctx.epilogue_preserves_coordinates() &&     // the epilogue runs on the accumulators
      cout_g >= 32 &&                             // rows enough for a tensor-core tile
      k % 4 == 0 &&                               // 16-byte weight rows for cp.async
      macs >= kMinMacs &&                         // work enough to fill the GPU with tiles
      pixels < (std::int64_t{1} << 31) && s.cin * s.h * s.w < (std::int64_t{1} << 31);  // 32-bit indices
  if (!applies) return std::nullopt;

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
  const bool table = kpad <= kTableK;
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
      fmt::arg("cout_g", cout_g), fmt::arg("k", k), fmt::arg("pixels", pixels), fmt::arg("bm", tile.bm), fmt::arg("bn", tile.bn),
      fmt::arg("threads", tile.threads), fmt::arg("min_blocks", tile.min_blocks), fmt::arg("smem", smem),
      fmt::arg("taps", table ? " and a table of K's taps" : ""),
      fmt::arg("alias", tile.alias), fmt::arg("name", name), fmt::arg("params", params),
      fmt::arg("wname", name_of(wi)), fmt::arg("gather", gather), fmt::arg("wg", cout_g * k),
      fmt::arg("ohw", s.oh * s.ow),
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

}  // namespace nova
