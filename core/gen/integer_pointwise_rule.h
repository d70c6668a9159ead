#pragma once
// The builtin rule for elementwise integer arithmetic (rule pointwise_int64): a group whose ops are
// add, sub and mul of int64 tensors and integer constants, with an int64 result (batch norm's
// num_batches_tracked + 1). Exact in 64-bit integers, one thread per element; an operand of one element
// (a 0-d buffer) is broadcast. The float pointwise rule computes in float, which would round such values.
#include "core/gen/group_context.h"
#include "core/gen/rule_output.h"

namespace nova {

class IntegerPointwiseRule {
 public:
  // True when every output of the group is int64 and every node is an op this rule writes.
  static bool applies_to(const GroupContext& ctx);
  // The kernel; throws UnsupportedGroup for what it does not hold (a float operand, an alpha other than
  // 1, a broadcast other than of one element, a constant that is not an integer).
  static RuleOutput generate(const GroupContext& ctx);
};

}  // namespace nova
