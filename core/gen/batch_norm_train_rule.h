#pragma once
// The builtin rule for batch norm in training form (rule batch_norm_train: the functional
// _native_batch_norm_legit_functional that torch.export captures): per-channel statistics over the batch
// and space, the normalized result with the group's epilogue, and the running statistics' update.
// Two kernels, deterministic: one block per (image, channel) plane writes the plane's mean and its sum
// of squared deviations; then one block per plane combines its channel's partials in image order (Chan's
// formula, in double), normalizes the plane with the epilogue before the only store, and the image-0
// block of each channel writes the updated running mean and (unbiased) variance.
#include "core/gen/group_context.h"
#include "core/gen/rule_output.h"

namespace nova {

class BatchNormTrainRule {
 public:
  // Whether `node` is batch norm in training form that this rule reads.
  static bool applies_to(const GraphNode& node);
  // Throws UnsupportedGroup where it does not apply: not fp32, an input computed inside the group, outputs
  // other than the normalized result's epilogue and the running statistics, an epilogue that moves data.
  static RuleOutput generate(const GroupContext& ctx);
};

}  // namespace nova
