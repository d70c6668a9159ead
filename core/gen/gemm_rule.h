#pragma once
// The builtin rule for linear / addmm / mm / bmm / matmul with its epilogue. Small problems (launch
// bound, like the seed's 128x64->128): one tiled kernel (64x64 tiles, 4x4 outputs per thread,
// fp32 FMA) with the epilogue applied to the accumulators before the only store. Large problems
// (compute bound), or operands the tiled kernel cannot read (views of another layout, computed
// operands): the model's own library call (cuBLAS through PyTorch, TF32 as the caller set it) and
// then one fused epilogue pass. Where GenerationTarget::gemm_tf32x3 is set (the alternative that
// BuiltinGenerator::alternatives offers), the tensor-core form of GemmTf32x3Rule instead where it fits.
#include "core/gen/group_context.h"
#include "core/gen/rule_output.h"

namespace nova {

class GemmRule {
 public:
  // Problems up to this many multiply-adds get the tiled kernel.
  static constexpr double kTiledLimit = 64.0 * 1024 * 1024;
  static RuleOutput generate(const GroupContext& ctx);
};

}  // namespace nova
