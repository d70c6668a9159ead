#pragma once
// The builtin rule for a convolution (2-D, or 3-D) with its epilogue. 2-D, small channel counts: one direct
// kernel, each thread computing one output pixel for a tile of output channels from weights held
// in shared memory, the epilogue applied in registers before the single store. Otherwise: the
// library convolution (cuDNN through PyTorch) followed by one fused epilogue pass. With
// GenerationTarget::gemm_tf32x3 (how BuiltinGenerator::alternatives writes the alternative), fp32
// convolutions large enough for tensor cores get an implicit GEMM through the 3xTF32 split instead
// (ConvTf32x3Rule).
#include "core/gen/group_context.h"
#include "core/gen/rule_output.h"

namespace nova {

class Conv2dRule {
 public:
  static RuleOutput generate(const GroupContext& ctx);
};

}  // namespace nova
