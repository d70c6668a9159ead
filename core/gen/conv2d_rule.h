#pragma once
// The builtin rule for a 2-D convolution with its epilogue. Small channel counts: one direct
// kernel, each thread computing one output pixel for a tile of output channels from weights held
// in shared memory, the epilogue applied in registers before the single store. Otherwise: the
// library convolution (cuDNN through PyTorch) followed by one fused epilogue pass. With
// GenerationTarget::gemm_tf32x3 (how BuiltinGenerator::alternatives writes the alternative), fp32
// convolutions large enough for tensor cores get an implicit GEMM through the 3xTF32 split instead.
#include "core/gen/group_context.h"
#include "core/gen/rule_output.h"

namespace nova {

class Conv2dRule {
 public:
  // Convolutions of at least this many multiply-adds get the tensor-core form (as GEMMs past the
  // tiled kernel's limit do).
  static constexpr double kTensorCoreMinMacs = 64.0 * 1024 * 1024;
  // Up to this K (input channels per group x taps), the tensor-core form keeps a table of K's taps in
  // shared memory (8 bytes each, beside two blocks' 98 KB of stages per multiprocessor).
  static constexpr std::int64_t kTableK = 1536;
  static RuleOutput generate(const GroupContext& ctx);
};

}  // namespace nova
