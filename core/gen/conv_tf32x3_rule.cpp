#include "core/gen/conv_tf32x3_rule.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/gen/conv_operands.h"
#include "core/gen/tensor_core_tile.h"

namespace nova {
namespace {

// The tiles with the gathered W operand: 128 output channels per tile where a group has that many, else
// 64 channels by 128 pixels; four stages, or three where K's table needs the room.
constexpr TensorCoreTile kTiles4[] = {{"nova::Tf32x3Gather_128x64", 128, 64, 128, 2, 100352},
                                      {"nova::Tf32x3Gather_64x128", 64, 128, 128, 2, 100352}};
constexpr TensorCoreTile kTiles3[] = {{"nova::Tf32x3Gather3_128x64", 128, 64, 128, 2, 75264},
                                      {"nova::Tf32x3Gather3_64x128", 64, 128, 128, 2, 75264}};

const TensorCoreTile& gather_tile(int stages, std::int64_t cout_g) {
  const auto& tiles = stages == 4 ? kTiles4 : kTiles3;
  return cout_g >= 128 ? tiles[0] : tiles[1];
}

// Sizes along (depth,) height and width as the kernels' comments print them: "DxHxW", or "HxW" in 2-D.
std::string extent(const ConvShape& s, std::int64_t d, std::int64_t h, std::int64_t w) {
  return s.dims == 3 ? fmt::format("{}x{}x{}", d, h, w) : fmt::format("{}x{}", h, w);
}

// The output's coordinates as the epilogue names them.
std::vector<std::string> output_coords(const ConvShape& s) {
  return s.dims == 3 ? std::vector<std::string>{"n", "co", "od", "oh", "ow"}
                     : std::vector<std::string>{"n", "co", "oh", "ow"};
}

}  // namespace

std::optional<RuleOutput> ConvTf32x3Rule::generate(const GroupContext& ctx, const GraphNode& conv, const ConvShape& s,
                                                   PointwiseEmitter& e) {
  if (s.transposed) return generate_transposed(ctx, conv, s, e);
  const ConvOperands o(ctx, conv);
  const bool three = s.dims == 3;
  const std::int64_t cin_g = s.cin / s.groups, cout_g = s.cout / s.groups, k = cin_g * s.taps();
  const std::int64_t opix = s.out_pixels(), pixels = s.n * opix, volume = s.d * s.h * s.w;
  const double macs = double(pixels) * s.cout * k;
  // K's index arithmetic in a table of 8 bytes per k in shared memory, where it leaves room for two
  // blocks per multiprocessor: beside four stages up to K = 1536, beside three up to 4608. Past that a
  // 2-D convolution's elements decode their k; a 3-D one is left to the library.
  const std::int64_t kpad = (k + 31) / 32 * 32;
  const int stages = kpad <= kTableK ? 4 : kpad <= kTableK3 ? 3 : 4;
  const bool table = kpad <= kTableK3;
  const bool applies =
      k % 4 == 0 &&                               // 16-byte weight rows for cp.async
      macs >= kMinMacs &&                         // work enough to fill the GPU with tiles
      (table || !three) &&                        // the 3-D gather has a table only
      pixels < (std::int64_t{1} << 31) && s.cin * volume < (std::int64_t{1} << 31) &&  // 32-bit indices
      o.tensor_core_ready(ctx, e, cout_g);        // last: it dry-runs the epilogue
  if (!applies) return std::nullopt;

  RuleOutput out;
  std::string params;
  std::vector<PlanArg> args;
  const std::string xname = o.begin(ctx, conv, out, params, args);

  const TensorCoreTile& tile = gather_tile(stages, cout_g);
  const std::int64_t smem = tile.smem_bytes + (table ? kpad * 8 : 0);
  const std::string geometry =
      three ? fmt::format("{}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}", cin_g, s.d,
                          s.h, s.w, s.kd, s.kh, s.kw, s.sd, s.sh, s.sw, s.pd, s.ph, s.pw, s.dd, s.dh, s.dw, s.od,
                          s.oh, s.ow)
            : fmt::format("{}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}", cin_g, s.h, s.w, s.kh, s.kw, s.sh,
                          s.sw, s.ph, s.pw, s.dh, s.dw, s.oh, s.ow);
  const std::string x_of_group = fmt::format("{} + (long long)grp * {}LL", xname, cin_g * volume);
  const std::string gather =
      table ? fmt::format("  int2* const nova_taps = reinterpret_cast<int2*>(reinterpret_cast<char*>(nova_smem) + "
                          "{alias}::kSmemBytes);\n"
                          "  const nova::{type}<{geometry}, {kpad}> gather{{\n"
                          "      {x}, {chw}LL, {pixels}, nova_taps}};\n"
                          "  gather.fill(nova_taps);  // K's taps, once per block\n"
                          "  __syncthreads();\n",
                          fmt::arg("alias", tile.alias), fmt::arg("geometry", geometry), fmt::arg("kpad", kpad),
                          fmt::arg("type", three ? "ConvNcdhwTableGather" : "ConvNchwTableGather"),
                          fmt::arg("x", x_of_group), fmt::arg("chw", s.cin * volume), fmt::arg("pixels", pixels))
            : fmt::format("  const nova::ConvNchwGather<{geometry}> gather{{\n"
                          "      {x}, {chw}LL, {pixels}}};\n",
                          fmt::arg("geometry", geometry), fmt::arg("x", x_of_group),
                          fmt::arg("chw", s.cin * volume), fmt::arg("pixels", pixels));
  const std::vector<std::string> coords = output_coords(s);
  // The output position of a pixel p of an image (its od, oh, ow), as the epilogue names them.
  const auto position = [&](const std::string& p) {
    return three ? fmt::format("const int od = ({p}) / {ohw}, oh = (({p}) - od * {ohw}) / {ow}, "
                               "ow = ({p}) - od * {ohw} - oh * {ow};",
                               fmt::arg("p", p), fmt::arg("ohw", s.oh * s.ow), fmt::arg("ow", s.ow))
                 : fmt::format("const int oh = ({p}) / {ow}, ow = ({p}) - oh * {ow};", fmt::arg("p", p),
                               fmt::arg("ow", s.ow));
  };
  // Where an image's output pixels come in fours, four consecutive pixels of a channel are
  // contiguous: the tile is staged through shared memory and stored 16 bytes at a time.
  const bool staged = opix % 4 == 0;
  e.bind_register(conv.outputs[0].name, "conv", coords);
  std::string value = e.value(ctx.outputs[0].name, coords);
  std::string epilogue = e.take_code(staged ? 6 : 4);
  const std::string dim = three ? "3d" : "2d";
  std::string name = fmt::format("nova_g{}_conv{}_tf32x3", ctx.group.id, dim);
  const std::string bias = o.has_bias ? fmt::format(" + nova::to_f({}[co])", o.name(ctx, o.bi)) : "";
  std::string body;
  if (staged)
    body = fmt::format(
        R"(  tile.store_rows(nova_smem, blockIdx.y * {bm}, blockIdx.x * {bn},
                  [&](int row_index, int col_index, const float (&accs)[4]) {{
    if (row_index >= {cout_g} || col_index >= {pixels}) return;
    const int co = grp * {cout_g} + row_index;
    const int n = col_index / {opix}, pix0 = col_index - n * {opix};
    float nova_v[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) {{
      {position}
      const float acc = accs[j];
      const float conv = acc{bias};
{epilogue}      nova_v[j] = {value};
    }}
    *reinterpret_cast<float4*>({out} + (long long)(n * {cout} + co) * {opix} + pix0) =
        make_float4(nova_v[0], nova_v[1], nova_v[2], nova_v[3]);
  }});
)",
        fmt::arg("bm", tile.bm), fmt::arg("bn", tile.bn), fmt::arg("cout_g", cout_g), fmt::arg("pixels", pixels),
        fmt::arg("opix", opix), fmt::arg("position", position("pix0 + j")), fmt::arg("bias", bias),
        fmt::arg("epilogue", epilogue), fmt::arg("value", value), fmt::arg("out", ctx.output_names[0]),
        fmt::arg("cout", s.cout));
  else
    body = fmt::format(
        R"(  tile.for_each([&](int row_index, int col_index, float acc) {{
    if (row_index >= {cout_g} || col_index >= {pixels}) return;
    const int co = grp * {cout_g} + row_index;
    const int n = col_index / {opix}, pix = col_index - n * {opix};
    {position}
    const float conv = acc{bias};
{epilogue}    {out}[(long long)(n * {cout} + co) * {opix} + pix] = nova::from_f<{otype}>({value});
  }});
)",
        fmt::arg("cout_g", cout_g), fmt::arg("pixels", pixels), fmt::arg("opix", opix),
        fmt::arg("position", position("pix")), fmt::arg("bias", bias), fmt::arg("epilogue", epilogue),
        fmt::arg("value", value), fmt::arg("out", ctx.output_names[0]), fmt::arg("cout", s.cout),
        fmt::arg("otype", ctx.output_storage_type(0)));
  out.kernels += fmt::format(
      R"(#include "nova/gemm_tf32x3.cuh"
#include "nova/conv_gather.cuh"

// {dims}-D convolution {cin}->{cout} channels in {groups} group(s), {ksize} kernel, stride {stride}, padding
// {padding}, dilation {dilation}, output {output}, as an implicit GEMM per group:
// [{cout_g} x {k}] weights times [{k} x {pixels}] input patches, on tensor cores through the 3xTF32 split
// (fp32-accurate: each operand is split into a TF32 part and its remainder, three products summed in
// fp32). The patches are gathered into shared memory (zeros for the padding), {bm}x{bn} tiles, {threads}
// threads, a {stages}-stage cp.async pipeline{taps} in {smem} bytes; the epilogue is applied to the
// accumulators {store} (kernels/nova/gemm_tf32x3.cuh, kernels/nova/conv_gather.cuh).
extern "C" __global__ void __launch_bounds__({threads}, {min_blocks}) {name}(
    {params}) {{
  if (!nova::aligned16({wname})) __trap();  // cp.async moves 16 bytes: fresh tensors always are
  extern __shared__ float4 nova_smem[];
  const int grp = blockIdx.z;
{gather}  {alias} tile;
  tile.mainloop_gather({wname} + (long long)grp * {wg}LL, {k}, {cout_g}, {k}, blockIdx.y * {bm}, blockIdx.x * {bn},
                       gather, nova_smem);
{body}}}

)",
      fmt::arg("dims", s.dims), fmt::arg("cin", s.cin), fmt::arg("cout", s.cout), fmt::arg("groups", s.groups),
      fmt::arg("ksize", extent(s, s.kd, s.kh, s.kw)), fmt::arg("stride", extent(s, s.sd, s.sh, s.sw)),
      fmt::arg("padding", extent(s, s.pd, s.ph, s.pw)), fmt::arg("dilation", extent(s, s.dd, s.dh, s.dw)),
      fmt::arg("output", fmt::format("{}x{}x{}", s.n, s.cout, extent(s, s.od, s.oh, s.ow))),
      fmt::arg("cout_g", cout_g), fmt::arg("k", k),
      fmt::arg("pixels", pixels), fmt::arg("bm", tile.bm), fmt::arg("bn", tile.bn), fmt::arg("threads", tile.threads),
      fmt::arg("min_blocks", tile.min_blocks), fmt::arg("stages", stages), fmt::arg("smem", smem),
      fmt::arg("taps", table ? " and a table of K's taps" : ""), fmt::arg("alias", tile.alias),
      fmt::arg("name", name), fmt::arg("params", params), fmt::arg("wname", o.name(ctx, o.wi)),
      fmt::arg("gather", gather), fmt::arg("wg", cout_g * k), fmt::arg("body", body),
      fmt::arg("store", staged ? "and staged through shared memory for 16-byte stores" : "before the only store"));

  out.rule = "conv" + dim + "_tf32x3";
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
      o.xi >= 0 ? "" : "its input materialized first, then a ", step.grid[0] * step.grid[1] * step.grid[2], tile.bm,
      tile.bn, macs / 1e6);
  return out;
}

std::optional<RuleOutput> ConvTf32x3Rule::generate_transposed(const GroupContext& ctx, const GraphNode& conv,
                                                              const ConvShape& s, PointwiseEmitter& e) {
  const ConvOperands o(ctx, conv);
  const bool three = s.dims == 3;
  const std::int64_t cin_g = s.cin / s.groups, cout_g = s.cout / s.groups;
  // Per output phase (o = o' * stride + phase along each axis) only the taps with (phase + padding - r *
  // dilation) divisible by the stride contribute (TransposedAxis in kernels/nova/conv_gather.cuh). Per axis:
  // the busiest phase's taps, and the multiply-adds of all phases (taps times outputs).
  struct Axis {
    std::int64_t busiest = 0, useful = 0;
  };
  const auto axis = [](std::int64_t taps, std::int64_t stride, std::int64_t pad, std::int64_t dil, std::int64_t out) {
    Axis a;
    for (std::int64_t ph = 0; ph < stride; ++ph) {
      std::int64_t n = 0;
      for (std::int64_t r = 0; r < taps; ++r) n += ((ph + pad - r * dil) % stride + stride) % stride == 0;
      a.busiest = std::max(a.busiest, n);
      a.useful += n * (ph < out ? (out - ph + stride - 1) / stride : 0);
    }
    return a;
  };
  const Axis ad = axis(s.kd, s.sd, s.pd, s.dd, s.od), ah = axis(s.kh, s.sh, s.ph, s.dh, s.oh),
             aw = axis(s.kw, s.sw, s.pw, s.dw, s.ow);
  const auto most = [](std::int64_t out, std::int64_t stride) { return (out + stride - 1) / stride; };
  const std::int64_t phases = s.sd * s.sh * s.sw;
  const std::int64_t max_k = cin_g * ad.busiest * ah.busiest * aw.busiest;
  const std::int64_t kpad = (max_k + 31) / 32 * 32, lda = (max_k + 3) / 4 * 4;
  const std::int64_t volume = s.d * s.h * s.w, out_volume = s.od * s.oh * s.ow;
  // Multiply-adds actually done: every output takes the taps of its phase.
  const double macs = double(s.n) * s.cout * cin_g * double(ad.useful) * double(ah.useful) * double(aw.useful);
  const int stages = kpad <= kTableK ? 4 : 3;
  const bool applies =
      max_k > 0 &&                             // some phase has taps
      kpad <= kTableK3 &&                      // the phase's taps in a shared-memory table
      macs >= kMinMacs &&                      // work enough to fill the GPU with tiles
      (s.od + s.sd - 1) / s.sd <= 512 && phases * s.groups <= 65535 &&  // the table's reach, the grid's z
      s.n * out_volume < (std::int64_t{1} << 31) && s.cin * volume < (std::int64_t{1} << 31) &&
      s.cout * out_volume < (std::int64_t{1} << 31) &&  // 32-bit indices
      o.tensor_core_ready(ctx, e, cout_g);              // last: it dry-runs the epilogue
  if (!applies) return std::nullopt;

  RuleOutput out;
  std::string params;
  std::vector<PlanArg> args;
  const std::string xname = o.begin(ctx, conv, out, params, args);
  // The weights laid out per group and phase as the tile's A operand: [groups][phases][cout_g][lda], each
  // row the phase's K (its input channels x its taps), zeros past it.
  const std::int64_t weights_floats = s.groups * phases * cout_g * lda;
  const std::string weights_ref = fmt::format("temp:{}", out.plan.temps.size());
  out.plan.temps.push_back({"nova_phase_weights", {s.groups, phases, cout_g, lda}, "float32"});
  params += ",\n    float* __restrict__ nova_phase_weights";
  args.push_back({weights_ref, "", nullptr, ""});

  const TensorCoreTile& tile = gather_tile(stages, cout_g);
  const std::int64_t smem = tile.smem_bytes + kpad * 8;
  const std::string geometry =
      fmt::format("{}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}", cin_g, s.d, s.h,
                  s.w, s.kd, s.kh, s.kw, s.sd, s.sh, s.sw, s.pd, s.ph, s.pw, s.dd, s.dh, s.dw, s.od, s.oh, s.ow, kpad);
  const std::string gather_type = "nova::ConvTransposedTableGather<" + geometry + ">";
  const std::vector<std::string> coords = output_coords(s);
  e.bind_register(conv.outputs[0].name, "conv", coords);
  const std::string value = e.value(ctx.outputs[0].name, coords);
  const std::string epilogue = e.take_code(4);
  const std::string dim = three ? "3d" : "2d";
  const std::string name = fmt::format("nova_g{}_conv_transpose{}_tf32x3", ctx.group.id, dim);
  const std::string weights_name = name + "_weights";
  const std::string bias = o.has_bias ? fmt::format(" + nova::to_f({}[co])", o.name(ctx, o.bi)) : "";
  out.kernels += fmt::format(
      R"(#include "nova/gemm_tf32x3.cuh"
#include "nova/conv_gather.cuh"

// The weights of the transposed convolution ([{cin}][{cout_g}][taps], groups of {cin_g} input channels) laid
// out per group and output phase as the implicit GEMM's A operand: [{groups}][{phases}][{cout_g}][{lda}], row
// co of a phase holding, for k = ci * taps + t, the weight of input channel ci at the phase's tap t, zeros past
// the phase's K.
extern "C" __global__ void __launch_bounds__(256) {weights_name}(
    {params}) {{
  for (long long i = blockIdx.x * 256LL + threadIdx.x; i < {total}LL; i += (long long)gridDim.x * 256LL) {{
    const int kk = (int)(i % {lda}), co = (int)(i / {lda} % {cout_g}), z = (int)(i / ({lda}LL * {cout_g}));
    const int grp = z / {phases};
    {gather_type} g{{nullptr, 0, 1, nullptr}};
    g.phase(z % {phases});
    float v = 0.0f;
    if (kk < g.k) {{
      const int taps = g.td * g.th * g.tw, ci = kk / taps;
      int rd, rh, rw;
      g.tap(kk - ci * taps, rd, rh, rw);
      v = nova::to_f({wname}[((((long long)(grp * {cin_g} + ci) * {cout_g} + co) * {kd} + rd) * {kh} + rh) * {kw} + rw]);
    }}
    nova_phase_weights[i] = v;
  }}
}}

// {dims}-D transposed convolution {cin}->{cout} channels in {groups} group(s), {ksize} kernel, stride {stride},
// padding {padding}, dilation {dilation}, output {output}, as {phases} implicit GEMMs per group, one per output
// phase (the outputs o = o' * stride + phase, which take only the taps with (phase + padding - r * dilation)
// divisible by the stride: a convolution of the input with stride 1 and per-tap offsets): [{cout_g} x K]
// weights times [K x pixels] input patches, K up to {max_k}, on tensor cores through the 3xTF32 split
// (fp32-accurate). The patches are gathered into shared memory through a table of the phase's taps (zeros
// outside the input), {bm}x{bn} tiles, {threads} threads, a {stages}-stage cp.async pipeline, {smem} bytes;
// the epilogue is applied to the accumulators before the only store (kernels/nova/gemm_tf32x3.cuh,
// kernels/nova/conv_gather.cuh).
extern "C" __global__ void __launch_bounds__({threads}, {min_blocks}) {name}(
    {params}) {{
  if (!nova::aligned16(nova_phase_weights)) __trap();  // cp.async moves 16 bytes: fresh tensors always are
  extern __shared__ float4 nova_smem[];
  const int grp = blockIdx.z / {phases};
  int2* const nova_taps = reinterpret_cast<int2*>(reinterpret_cast<char*>(nova_smem) + {alias}::kSmemBytes);
  {gather_type} gather{{
      {x} + (long long)grp * {cvol}LL, {image}LL, {images}, nova_taps}};
  gather.phase(blockIdx.z % {phases});
  if ((int)blockIdx.x * {bn} >= gather.pixels) return;  // past this phase's output grid: the whole block
  gather.fill(nova_taps);  // the phase's taps, once per block
  __syncthreads();
  {alias} tile;
  tile.mainloop_gather(nova_phase_weights + (long long)blockIdx.z * {wz}LL, {lda}, {cout_g}, gather.k, blockIdx.y * {bm},
                       blockIdx.x * {bn}, gather, nova_smem);
  tile.for_each([&](int row_index, int col_index, float acc) {{
    if (row_index >= {cout_g} || col_index >= gather.pixels) return;
    const int co = grp * {cout_g} + row_index;
    int n, od, oh, ow;
    gather.output(col_index, n, od, oh, ow);
    (void)od;
    const float conv = acc{bias};
{epilogue}    {out}[(((long long)(n * {cout} + co) * {od_} + od) * {oh_} + oh) * {ow_} + ow] = nova::from_f<{otype}>({value});
  }});
}}

)",
      fmt::arg("weights_name", weights_name), fmt::arg("params", params), fmt::arg("total", weights_floats),
      fmt::arg("lda", lda), fmt::arg("cout_g", cout_g), fmt::arg("phases", phases), fmt::arg("gather_type", gather_type),
      fmt::arg("wname", o.name(ctx, o.wi)), fmt::arg("cin_g", cin_g), fmt::arg("kd", s.kd), fmt::arg("kh", s.kh),
      fmt::arg("kw", s.kw), fmt::arg("dims", s.dims), fmt::arg("cin", s.cin), fmt::arg("cout", s.cout),
      fmt::arg("groups", s.groups), fmt::arg("ksize", extent(s, s.kd, s.kh, s.kw)),
      fmt::arg("stride", extent(s, s.sd, s.sh, s.sw)), fmt::arg("padding", extent(s, s.pd, s.ph, s.pw)),
      fmt::arg("dilation", extent(s, s.dd, s.dh, s.dw)),
      fmt::arg("output", fmt::format("{}x{}x{}", s.n, s.cout, extent(s, s.od, s.oh, s.ow))), fmt::arg("max_k", max_k),
      fmt::arg("bm", tile.bm), fmt::arg("bn", tile.bn), fmt::arg("threads", tile.threads),
      fmt::arg("min_blocks", tile.min_blocks), fmt::arg("stages", stages), fmt::arg("smem", smem),
      fmt::arg("name", name), fmt::arg("alias", tile.alias), fmt::arg("x", xname), fmt::arg("cvol", cin_g * volume),
      fmt::arg("image", s.cin * volume), fmt::arg("images", s.n), fmt::arg("wz", cout_g * lda), fmt::arg("bias", bias),
      fmt::arg("epilogue", epilogue), fmt::arg("out", ctx.output_names[0]), fmt::arg("od_", s.od),
      fmt::arg("oh_", s.oh), fmt::arg("ow_", s.ow), fmt::arg("otype", ctx.output_storage_type(0)),
      fmt::arg("value", value));

  out.rule = "conv_transpose" + dim + "_tf32x3";
  PlanStep layout;
  layout.type = "kernel";
  layout.kernel = weights_name;
  layout.grid = {std::min<std::int64_t>((weights_floats + 255) / 256, 8 * ctx.target.sm_count), 1, 1};
  layout.block = {256, 1, 1};
  layout.args = args;
  out.plan.steps.push_back(layout);
  // The grid covers the busiest phase's pixels: a block past its own phase's grid returns at once.
  const std::int64_t phase_pixels = s.n * most(s.od, s.sd) * most(s.oh, s.sh) * most(s.ow, s.sw);
  PlanStep step;
  step.type = "kernel";
  step.kernel = name;
  step.grid = {(phase_pixels + tile.bn - 1) / tile.bn, (cout_g + tile.bm - 1) / tile.bm, s.groups * phases};
  step.block = {tile.threads, 1, 1};
  step.shared_bytes = smem;
  step.args = std::move(args);
  out.plan.steps.push_back(step);
  out.notes = fmt::format(
      "{}the weights laid out per output phase, then a tensor-core implicit GEMM (3xTF32) per phase: {} tiles of {}x{} "
      "(the busiest phase's), {:.3g} M multiply-adds. It sums in another order than eager's cuDNN kernel: where "
      "eager's own rounding exceeds the 1e-4 check against float64, expect it to differ from eager while as close "
      "to float64",
      o.xi >= 0 ? "" : "its input materialized first, ", step.grid[0] * step.grid[1] * step.grid[2], tile.bm, tile.bn,
      macs / 1e6);
  return out;
}

}  // namespace nova
