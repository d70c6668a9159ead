#pragma once
// The builtin rule for a 2-D convolution with its epilogue. Small channel counts: one direct
// kernel, each thread computing one output pixel for a tile of output channels from weights held
// in shared memory, the epilogue applied in registers before the single store. Otherwise: the
// library convolution (cuDNN through PyTorch) followed by one fused epilogue pass.
#include "core/gen/group_context.h"
#include "core/gen/rule_output.h"

namespace nova {

class Conv2dRule {
 public:
  static RuleOutput generate(const GroupContext& ctx);
};

}  // namespace nova
