#pragma once
// A convolution node's operands as its fusion group holds them: the input, weight and bias arguments
// and their indices among the group's inputs (-1: computed inside the group). Shared by the
// convolution rules (Conv2dRule, ConvTf32x3Rule, DepthwiseConvRule).
#include <cstdint>
#include <string>
#include <vector>

#include "core/gen/group_context.h"
#include "core/gen/pointwise_emitter.h"
#include "core/gen/rule_output.h"

namespace nova {

struct ConvOperands {
  const NodeArg *x, *w, *b;
  bool has_bias;
  int xi, wi, bi;  // bi is 0 without a bias

  ConvOperands(const GroupContext& ctx, const GraphNode& conv);

  // The kernels' names of the group inputs at index i (xi, wi or bi).
  std::string name(const GroupContext& ctx, int i) const { return ctx.input_names[static_cast<std::size_t>(i)]; }

  // What every tensor-core form needs: the weight and bias among the group's inputs, fp32 throughout
  // (3xTF32 is an fp32 method), an epilogue that runs on the accumulators (a dry run of it), rows enough
  // for a tile.
  bool tensor_core_ready(const GroupContext& ctx, const PointwiseEmitter& e, std::int64_t cout_g) const;

  // Starts a candidate: its plan, and the input's name in the kernels. An input computed inside the
  // group (an activation before the convolution) is materialized first, as eager does, and the
  // convolution reads it as one more parameter.
  std::string begin(const GroupContext& ctx, const GraphNode& conv, RuleOutput& out, std::string& params,
                    std::vector<PlanArg>& args) const;
};

}  // namespace nova
