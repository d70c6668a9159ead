#pragma once
// The builtin rule for reductions that the row rule does not hold: reductions over leading or inner
// dimensions (sum, mean, amax, amin, min/max values along a dimension, keepdim or not) and pooling
// (max and average, 2-D and 3-D, with stride, padding and dilation; adaptive average and max). One
// thread per result element loops over the window of input elements it reduces (the prologue
// evaluated at each of them), then applies the epilogue and stores once. Reads along the window stay
// coalesced across neighbouring threads, whose results are neighbours in memory.
#include "core/gen/group_context.h"
#include "core/gen/rule_output.h"

#include <string>

namespace nova {

class WindowReduceRule {
 public:
  // True when `node` is an op this rule writes: pooling, or a reduction along any dimensions (the row
  // rule takes those along the last ones first).
  static bool applies_to(const GraphNode& node);
  // The tensor holding the positions of the extremes `node` finds (argmax / argmin's result, min / max
  // along a dimension's second result: int64, stored as they are), or "" where it finds none.
  static std::string positions_output(const GraphNode& node);
  // The kernel for the group, reducing at `node` (the group's anchor or its pooling node).
  static RuleOutput generate(const GroupContext& ctx, const GraphNode& node);
};

}  // namespace nova
