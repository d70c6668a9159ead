#pragma once
// The tensor-core form of a GEMM group (rule gemm_tf32x3): fp32 linear, mm, addmm, bmm and matmul on
// the 3xTF32 tile of kernels/nova/gemm_tf32x3.cuh, batched over blockIdx.z, with the epilogue applied
// to the accumulators before the only store (or each element stored into the output views that hold
// it). Operands are read where they are: a transposed or permuted view of an input is a leading
// dimension (a k-contiguous B is the tile's [N, K] form, an n-contiguous one its k-major form), and a
// triu / tril applied last is a mask on the elements as they are read. Other operands computed inside
// the group are materialized first. GemmRule asks for it where GenerationTarget::gemm_tf32x3 is set
// (BuiltinGenerator::alternatives writes it beside the primary). A small output with a long K splits K
// over two launches; with GenerationTarget::gemm_split_k off it is instead rule gemm_tf32x3_whole_k, a
// block per 32x32 tile over the whole K in one launch (offered beside the split form).
#include <cstdint>
#include <optional>
#include <vector>

#include "core/gen/anchor_views.h"
#include "core/gen/gemm_shape.h"
#include "core/gen/group_context.h"
#include "core/gen/rule_output.h"

namespace nova {

class GemmTf32x3Rule {
 public:
  // Products of at least this many multiply-adds get the tensor-core form where the tiled FMA kernel
  // cannot read their operands (views, masks); past GemmRule::kTiledLimit, every product that fits.
  static constexpr double kMinMacs = 16.0 * 1024 * 1024;
  // Without split K (GenerationTarget::gemm_split_k off), the 32x32 tile walks the whole K in one
  // block: up to this K (32 k-tiles), and where it gives at least an eighth of the multiprocessors a block.
  static constexpr std::int64_t kSmallTileMaxK = 1024;
  // The candidate's kernels and plan, or nothing where the form does not apply: not fp32, a scaled
  // addmm, K not a multiple of 32, M or N not a multiple of a tile, an operand with neither k nor n
  // contiguous, leading dimensions that are not multiples of 4 floats. `views`: the group's outputs
  // as views of the result (no epilogue), or nothing for an epilogue on the accumulators.
  static std::optional<RuleOutput> generate(const GroupContext& ctx, const GemmShape& s,
                                            PointwiseEmitter& e,
                                            const std::optional<std::vector<AnchorView>>& views);
};

}  // namespace nova
