#pragma once
// The builtin rule for a GEMM whose rows are reduced in the same group (intake puts a reduction over
// the product's last dimension into the GEMM's group when nothing else reads the product):
// logsumexp, sum, mean, amax or amin over each row of C = A * B, with the elementwise ops before
// the reduction (scale, masks) and after it. One block per 64 rows walks the row's 64-column tiles
// on tensor cores (3xTF32, fp32-accurate), reduces each tile into running per-row values in a fixed
// order, and stores one value per row: the product itself never goes to memory.
#include "core/gen/group_context.h"
#include "core/gen/rule_output.h"

namespace nova {

class GemmRowReduceRule {
 public:
  // The group's reduction node over the GEMM's rows, or nullptr where the group has none.
  static const GraphNode* row_reduction(const GroupContext& ctx);
  // Throws UnsupportedGroup with the reason where the group is not of this form.
  static RuleOutput generate(const GroupContext& ctx, const GraphNode& reduction);
};

}  // namespace nova
