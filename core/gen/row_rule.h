#pragma once
// The builtin rule for reductions along the last dimension(s) and normalizations: softmax,
// log_softmax, logsumexp, sum, mean, amax, amin, layer norm, RMS norm and group norm, each with its
// elementwise prologue and epilogue. One block per row: the row is read once into registers
// (16-byte loads where the row allows), reduced with warp shuffles and a shared-memory step, and
// written once.
#include "core/gen/group_context.h"
#include "core/gen/rule_output.h"

namespace nova {

class RowRule {
 public:
  static RuleOutput generate(const GroupContext& ctx);
};

}  // namespace nova
