#pragma once
// The builtin rule for a small linear head over a concatenation: linear / addmm / mm whose input is
// torch.cat along its last dimension of pieces that are each either read as they are (a group input,
// or views and pointwise ops of one) or reduced to one value per row and channel (a global average or
// max pool, adaptive pooling to 1, a mean / sum / amax over the trailing dimensions), as in multi-scale
// pooling heads. The product's K is split along the pieces, so the concatenation is never written:
// each block reads a slice of one piece for one row (a global pool's window reduced by a warp per
// channel) and multiplies it into the head's few outputs, its partial sums stored; a second kernel adds
// the slices in a fixed order (deterministic), with the bias and the epilogue. For heads of up to
// kMaxOutputs outputs; a wider head is declined (its GEMM is the library's work).
#include "core/gen/group_context.h"
#include "core/gen/rule_output.h"

namespace nova {

class CatLinearRule {
 public:
  static constexpr std::int64_t kMaxOutputs = 32;
  // True when the group's anchor is a linear / addmm / mm whose input operand is a cat inside the group.
  static bool applies_to(const GroupContext& ctx);
  // The two kernels, or UnsupportedGroup with the reason this group's head or pieces do not fit.
  static RuleOutput generate(const GroupContext& ctx);
};

}  // namespace nova
