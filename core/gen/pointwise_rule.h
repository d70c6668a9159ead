#pragma once
// The builtin rule for groups with no anchor: elementwise chains of any length with broadcasts,
// constants, views and masks. One grid-stride kernel per output; 16-byte loads and stores where
// every value is a function of the same coordinates and the last dimension allows it. Also used
// as the epilogue pass after a library anchor (extra_memory names the anchor's result in memory).
#include <map>
#include <string>

#include "core/gen/group_context.h"
#include "core/gen/rule_output.h"

namespace nova {

class PointwiseRule {
 public:
  // `extra_memory`: tensors computed by earlier plan steps (name -> plan ref "temp:i").
  static RuleOutput generate(const GroupContext& ctx,
                             const std::map<std::string, std::string>& extra_memory = {},
                             const std::string& kernel_prefix = "pointwise");
  // Computes `tensor`, a value inside the group (e.g. a transposed operand of a library GEMM), into
  // the plan's `temp_ref`: returns the kernel and its step, with the output reference rewritten.
  static RuleOutput materialize(const GroupContext& ctx, const std::string& tensor,
                                const std::string& temp_ref);
  // Materializes every tensor argument of `anchor` computed inside the group into a new temp of
  // `plan` (appending the kernels and steps), for a library step that needs them in memory.
  // Returns tensor name -> plan reference ("temp:i").
  static std::map<std::string, std::string> materialize_operands(const GroupContext& ctx,
                                                                 const GraphNode& anchor, LaunchPlan& plan,
                                                                 std::string& kernels);
};

}  // namespace nova
