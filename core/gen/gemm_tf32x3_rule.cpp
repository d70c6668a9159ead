#include "core/gen/gemm_tf32x3_rule.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/gen/gemm_operand.h"
#include "core/gen/pointwise_rule.h"
#include "core/gen/tensor_core_tile.h"

namespace nova {
namespace {

// W [N, K] (k contiguous): 128x64 tiles were the fastest accurate form on every linear layer of the
// examples measured in the sixth session but the 16384x4096x4096 seed (4% behind 128x128x64 there);
// 64x64 covers row counts that are not a multiple of 128, and batched products too small to fill
// the GPU with 128-row tiles.
constexpr TensorCoreTile kNkTiles[] = {kTf32x3_128x64, kTf32x3_64x64};
// B [K, N] (n contiguous): the same on the k-major W tile.
constexpr TensorCoreTile kKnTiles[] = {kTf32x3Kn_128x64, kTf32x3Kn_64x64};

std::string mask_type(const GemmOperand& o) {
  if (o.mask == GemmOperand::Mask::none) return "nova::tf32x3::NoMask";
  return fmt::format("nova::tf32x3::{}<{}>", o.mask == GemmOperand::Mask::upper ? "KeepUpper" : "KeepLower",
                     o.diagonal);
}

std::string mask_text(const GemmOperand& o, const char* what) {
  if (o.mask == GemmOperand::Mask::none) return "";
  return fmt::format(", {} read through a {}({}) mask", what,
                     o.mask == GemmOperand::Mask::upper ? "triu" : "tril", o.diagonal);
}

}  // namespace

std::optional<RuleOutput> GemmTf32x3Rule::generate(const GroupContext& ctx, const GemmShape& s,
                                                   PointwiseEmitter& e,
                                                   const std::optional<std::vector<AnchorView>>& views) {
  if (s.alpha != 1.0 || s.beta != 1.0 || s.k % 32 != 0) return std::nullopt;
  if (ctx.outputs[0].dtype != "float32" || e.info(s.a).dtype != "float32" || e.info(s.b).dtype != "float32")
    return std::nullopt;  // 3xTF32 is an fp32 method
  const int ci = s.bias.empty() ? 0 : ctx.input_index(s.bias);
  if (ci < 0 || (!s.bias.empty() && e.info(s.bias).dtype != "float32")) return std::nullopt;

  GemmOperand a = GemmOperand::resolve(ctx, s.a), b = GemmOperand::resolve(ctx, s.b);
  // A: [..., M, K] with k contiguous. Rows flattened (a linear layer's input): one row stride, and no
  // mask (a triangle is per matrix, not over the flattened rows).
  if (!a.computed && a.strides.back() != 1) return std::nullopt;
  if (s.rows_flattened && a.mask != GemmOperand::Mask::none && a.shape.size() > 2) a.computed = true;
  // B: a linear weight is [N, K]; otherwise [..., K, N] with k contiguous (the tile's [N, K] form) or n
  // contiguous (its k-major form).
  if (s.b_transposed && b.mask != GemmOperand::Mask::none) b.computed = true;
  bool kn = false;
  std::int64_t ldb = s.k;
  if (!b.computed) {
    if (!b.b_layout(s.b_transposed, kn, ldb)) return std::nullopt;
  } else if (!s.b_transposed) {
    kn = true;  // materialized contiguous [..., K, N]
    ldb = s.n;
  }
  const std::int64_t lda = a.computed ? s.k : (s.rows_flattened ? a.row_stride() : a.strides[a.strides.size() - 2]);
  // Batch strides (64-bit in the kernel); none where there is one matrix.
  const std::int64_t sa = s.batch == 1 ? 0 : a.computed ? s.m * s.k : a.batch_stride();
  const std::int64_t sb = s.batch == 1 ? 0 : b.computed ? s.k * s.n : b.batch_stride();
  for (std::int64_t v : {lda, ldb, sa, sb})
    if (v < 0 || v % 4 != 0) return std::nullopt;  // 16-byte cp.async rows and matrices
  if (lda >= (std::int64_t{1} << 31) || ldb >= (std::int64_t{1} << 31)) return std::nullopt;  // int in the tile

  // The tile: the first that divides M and N; for batched and plain-matrix products the 64-row one
  // where 128-row tiles would leave multiprocessors idle.
  const auto& tiles = kn ? kKnTiles : kNkTiles;
  const TensorCoreTile* tile = nullptr;
  for (const auto& t : tiles)
    if (s.m % t.bm == 0 && s.n % t.bn == 0) {
      tile = &t;
      break;
    }
  if (!tile) return std::nullopt;
  const auto tiles_of = [&](const TensorCoreTile* t) { return s.batch * (s.m / t->bm) * (s.n / t->bn); };
  // Linear layers keep the tile measured on them unless it would leave most multiprocessors idle.
  const std::int64_t idle_below = s.b_transposed ? ctx.target.sm_count / 2 : ctx.target.sm_count;
  if (tile == &tiles[0] && s.m % tiles[1].bm == 0 && s.n % tiles[1].bn == 0 && tiles_of(tile) < idle_below)
    tile = &tiles[1];
  // Split K where the output has too few tiles to fill the GPU and K is long (a small M x N): each
  // block sums a slice of K into a partial, and a second kernel adds the partials in a fixed order
  // and applies the epilogue. Slices of at least 64; not with views or masks (the masks read k).
  std::int64_t split = 1;
  if (!views && s.batch == 1 && a.mask == GemmOperand::Mask::none && b.mask == GemmOperand::Mask::none)
    while (tiles_of(tile) * split * 2 <= ctx.target.sm_count && s.k % (split * 2 * 32) == 0 &&
           s.k / (split * 2) >= 64)
      split *= 2;
  // Without split K: the 32x32 tile over the whole K in one launch, where it gives enough blocks and K is
  // short; otherwise this form does not apply (the split one is the only tensor-core form offered).
  const bool whole_k = split > 1 && !ctx.target.gemm_split_k;
  if (whole_k) {
    const TensorCoreTile* small = kn ? &kTf32x3Kn_32x32 : &kTf32x3_32x32;  // one launch over the whole K
    if (s.m % small->bm != 0 || s.n % small->bn != 0 || s.k > kSmallTileMaxK ||
        tiles_of(small) * 8 < ctx.target.sm_count)
      return std::nullopt;
    tile = small;
    split = 1;
  }
  const std::int64_t slice = s.k / split;
  if (s.m / tile->bm > 65535 || s.batch > 65535) return std::nullopt;  // the grid's y and z limits

  RuleOutput out;
  out.plan = ctx.base_plan();
  std::string params = ctx.kernel_params();
  std::vector<PlanArg> args = ctx.plan_args();
  const auto name_of_input = [&](const std::string& t) {
    return ctx.input_names[static_cast<std::size_t>(ctx.input_index(t))];
  };
  // A computed operand is materialized first (contiguous), as eager does, and read as a parameter.
  std::string materialized;
  const auto operand_pointer = [&](GemmOperand& o, const std::string& tensor, const char* param) {
    if (!o.computed) return name_of_input(o.input);
    std::string ref = fmt::format("temp:{}", out.plan.temps.size());
    const TensorInfo& info = e.info(tensor);
    out.plan.temps.push_back({tensor, info.shape, info.dtype});
    RuleOutput m = PointwiseRule::materialize(ctx, tensor, ref);
    out.kernels += m.kernels;
    for (auto& st : m.plan.steps) out.plan.steps.push_back(st);
    params += fmt::format(",\n    const float* __restrict__ {}", param);
    args.push_back({ref, "", nullptr, ""});
    materialized += materialized.empty() ? tensor : " and " + tensor;
    o.mask = GemmOperand::Mask::none;
    return std::string(param);
  };
  const std::string pa = operand_pointer(a, s.a, "nova_gemm_a");
  const std::string pb = operand_pointer(b, s.b, "nova_gemm_b");

  std::string store, staged_epilogue, staged_value;
  const bool batched = s.batch > 1;
  const std::string out_index = batched ? fmt::format("(bat * {}LL + row) * {}LL + col", s.m, s.n)
                                        : fmt::format("row * {}LL + col", s.n);
  if (views) {
    std::vector<std::string> types;
    for (std::size_t o = 0; o < ctx.outputs.size(); ++o) types.push_back(ctx.output_storage_type(o));
    store = store_into_views(*views, ctx.output_names, types, s.n, "gemm", 4);
  } else {
    auto [epilogue, value] = s.epilogue_on_register(ctx, e, split > 1 ? 4 : 6);
    if (split > 1) {  // the second kernel stores each element
      store = epilogue + fmt::format("    {}[{}] = nova::from_f<{}>({});\n", ctx.output_names[0], out_index,
                                     ctx.output_storage_type(0), value);
    } else {  // the tile, staged
      staged_epilogue = std::move(epilogue);
      staged_value = std::move(value);
    }
  }
  std::string partials_ref;
  if (split > 1) {
    // The partials [split, M, N] in a temp the first kernel writes and the second reads.
    partials_ref = fmt::format("temp:{}", out.plan.temps.size());
    out.plan.temps.push_back({"nova_partials", {split, s.m, s.n}, "float32"});
    params += ",\n    float* __restrict__ nova_partials";
    args.push_back({partials_ref, "", nullptr, ""});
  }
  // With views the result is rows of N across the batch: row counts from the first matrix.
  const std::string row = views && batched ? fmt::format("bat * {}LL + row_index", s.m) : "row_index";
  const std::string bias = s.bias.empty() ? "" : fmt::format(" + nova::to_f({}[col])", name_of_input(s.bias));
  const bool masks = a.mask != GemmOperand::Mask::none || b.mask != GemmOperand::Mask::none;
  const std::string mask_args = masks ? fmt::format(", {}{{}}, {}{{}}", mask_type(a), mask_type(b)) : "";
  // The block's matrices: its batch, and with a split K its slice of K.
  std::string at_batch_a = batched && sa ? fmt::format(" + bat * {}LL", sa) : "";
  std::string at_batch_b = batched && sb ? fmt::format(" + bat * {}LL", sb) : "";
  if (split > 1) {
    at_batch_a = fmt::format(" + slice * {}LL", slice);
    at_batch_b = fmt::format(" + slice * {}LL", kn ? slice * ldb : slice);
  }
  // The store: with views, each element where the views put it; a split K's partials as they are;
  // else the tile staged through shared memory, the epilogue on four consecutive columns and one
  // 16-byte store (the output is contiguous and N a multiple of the tile's width).
  std::string body;
  const auto per_element = [&](const std::string& what) {
    return fmt::format("  tile.for_each([&](int row_index, int col_index, float acc) {{\n"
                       "    const long long row = {}, col = col_index;\n{}  }});\n",
                       row, what);
  };
  if (split > 1)
    body = per_element(fmt::format("    nova_partials[(slice * {}LL + row) * {}LL + col] = acc;\n", s.m, s.n));
  else if (views)
    body = per_element(fmt::format("    const float gemm = acc{};\n{}", bias, store));
  else
    body = fmt::format(
        "  tile.store_rows(nova_smem, blockIdx.y * {bm}, blockIdx.x * {bn},\n"
        "                  [&](int row_index, int col_index, const float (&accs)[4]) {{\n"
        "    float nova_v[4];\n"
        "#pragma unroll\n"
        "    for (int j = 0; j < 4; ++j) {{\n"
        "      const long long row = row_index, col = col_index + j;\n"
        "      const float acc = accs[j];\n"
        "      const float gemm = acc{bias};\n"
        "{epilogue}"
        "      nova_v[j] = {value};\n"
        "    }}\n"
        "    const long long row = row_index, col = col_index;\n"
        "    *reinterpret_cast<float4*>({out} + {index}) = make_float4(nova_v[0], nova_v[1], nova_v[2], nova_v[3]);\n"
        "  }});\n",
        fmt::arg("bm", tile->bm), fmt::arg("bn", tile->bn), fmt::arg("bias", bias),
        fmt::arg("epilogue", staged_epilogue), fmt::arg("value", staged_value),
        fmt::arg("out", ctx.output_names[0]), fmt::arg("index", out_index));
  const std::string name = fmt::format("nova_g{}_gemm_tf32x3", ctx.group.id);
  const std::string form =
      s.b_transposed ? fmt::format("A[{m}x{k}] * W[{n}x{k}]^T (a linear weight)", fmt::arg("m", s.m),
                                   fmt::arg("n", s.n), fmt::arg("k", s.k))
                     : fmt::format("{batch}A[{m}x{k}] * B[{k}x{n}] (B read {layout})",
                                   fmt::arg("batch", batched ? fmt::format("{} x ", s.batch) : ""),
                                   fmt::arg("m", s.m), fmt::arg("n", s.n), fmt::arg("k", s.k),
                                   fmt::arg("layout", kn ? "with n contiguous, k-major in shared memory"
                                                         : "with k contiguous, as a transposed view"));
  out.kernels += fmt::format(
      R"(#include "nova/gemm_tf32x3.cuh"

// C = {form} on tensor cores through the 3xTF32 split (fp32-accurate: each operand is split into a
// TF32 part and its remainder, three products summed in fp32){masks_note}, {epilogue_note}.
// {bm}x{bn} tiles, {threads} threads, a 4-stage cp.async pipeline in {smem} bytes of shared memory
// (kernels/nova/gemm_tf32x3.cuh).
extern "C" __global__ void __launch_bounds__({threads}, {min_blocks}) {name}(
    {params}) {{
  if (!nova::aligned16({pa}, {pb})) __trap();  // cp.async moves 16 bytes: fresh tensors always are
  extern __shared__ float4 nova_smem[];
  const long long {z} = blockIdx.z;
  (void){z};
  {alias} tile;
  tile.{mainloop}({pa}{at_batch_a}, {lda}, {pb}{at_batch_b}, {ldb}, {k}, blockIdx.y * {bm}, blockIdx.x * {bn}, nova_smem{mask_args});
{body}}}

)",
      fmt::arg("form", form),
      fmt::arg("masks_note", mask_text(a, "A") + mask_text(b, "B")),
      fmt::arg("epilogue_note",
               split > 1 ? fmt::format("each block (blockIdx.z) over a slice of {} of K, its partial sums\n// stored for "
                                       "{}_sum", slice, name)
                         : views ? "with the epilogue applied\n// to the accumulators before the only store"
                                 : "with the epilogue applied\n// to the accumulators, staged through shared memory for 16-byte stores"),
      fmt::arg("bm", tile->bm),
      fmt::arg("bn", tile->bn), fmt::arg("threads", tile->threads), fmt::arg("min_blocks", tile->min_blocks),
      fmt::arg("smem", tile->smem_bytes), fmt::arg("name", name), fmt::arg("params", params), fmt::arg("pa", pa),
      fmt::arg("pb", pb), fmt::arg("alias", tile->alias), fmt::arg("mainloop", kn ? "mainloop_kn" : "mainloop_at"),
      fmt::arg("at_batch_a", at_batch_a), fmt::arg("lda", lda), fmt::arg("at_batch_b", at_batch_b),
      fmt::arg("ldb", ldb), fmt::arg("k", slice), fmt::arg("mask_args", mask_args),
      fmt::arg("z", split > 1 ? "slice" : "bat"), fmt::arg("body", body));
  const std::string sum_name = name + "_sum";
  if (split > 1)
    out.kernels += fmt::format(
        R"(// The split K's {split} partials of each element added in a fixed order (deterministic), then the
// epilogue: one thread per element.
extern "C" __global__ void __launch_bounds__(256) {name}(
    {params}) {{
  for (long long i = blockIdx.x * 256LL + threadIdx.x; i < {mn}LL; i += (long long)gridDim.x * 256LL) {{
    const long long row = i / {n}, col = i - row * {n};
    float gemm = nova_partials[i];
#pragma unroll
    for (int s = 1; s < {split}; ++s) gemm += nova_partials[s * {mn}LL + i];
    gemm = gemm{bias};
{store}  }}
}}

)",
        fmt::arg("split", split), fmt::arg("name", sum_name), fmt::arg("params", params),
        fmt::arg("mn", s.m * s.n), fmt::arg("n", s.n), fmt::arg("bias", bias), fmt::arg("store", store));

  // The one-launch form is a rule of its own: a project keeps the newest version of each rule per group,
  // and both forms are measured.
  out.rule = whole_k ? "gemm_tf32x3_whole_k" : "gemm_tf32x3";
  PlanStep step;
  step.type = "kernel";
  step.kernel = name;
  step.grid = {s.n / tile->bn, s.m / tile->bm, split > 1 ? split : s.batch};
  step.block = {tile->threads, 1, 1};
  step.shared_bytes = tile->smem_bytes;
  step.args = args;
  out.plan.steps.push_back(step);
  if (split > 1) {
    PlanStep sum;
    sum.type = "kernel";
    sum.kernel = sum_name;
    sum.grid = {std::min<std::int64_t>((s.m * s.n + 255) / 256, 8 * ctx.target.sm_count), 1, 1};
    sum.block = {256, 1, 1};
    sum.args = args;
    out.plan.steps.push_back(sum);
  }
  const double macs = double(s.batch) * s.m * s.n * s.k;
  out.notes = fmt::format(
      "{}tensor-core GEMM (3xTF32): {} tiles of {}x{}{}, {:.3g} M multiply-adds{}{}. "
      "It sums in another order than eager's cuBLAS kernel: where eager's own rounding "
      "exceeds the 1e-4 check against float64, expect it to fail the check against "
      "eager while closer to float64",
      materialized.empty() ? "" : materialized + " materialized first, then a ",
      step.grid[0] * step.grid[1] * step.grid[2], tile->bm, tile->bn,
      split > 1   ? fmt::format(" (K split in {} slices of {}, their partials then added with the epilogue)", split, slice)
      : whole_k ? fmt::format(" (each block over the whole K of {} in one launch, no split)", s.k)
                : "",
      macs / 1e6, mask_text(a, "A"),
      mask_text(b, "B"));
  return out;
}

}  // namespace nova
