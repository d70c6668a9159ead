#pragma once
// The builtin form of a depthwise 2-D convolution (rule conv2d_depthwise): groups equal to the input
// channels, each output channel reading one input channel (a channel multiplier of 1 or more). One
// block per band of output rows of one output plane: the band's input rows, the padding as zeros, and
// the channel's weights in shared memory, then each output from the tile with the epilogue applied before
// its only store (kernels/nova/depthwise.cuh). Conv2dRule asks for it before the library call.
#include <optional>

#include "core/gen/conv_shape.h"
#include "core/gen/group_context.h"
#include "core/gen/rule_output.h"

namespace nova {

class DepthwiseConvRule {
 public:
  // A band's input tile and weights fit in this many bytes of (static) shared memory.
  static constexpr std::int64_t kMaxTileBytes = 40 * 1024;
  // The candidate, or nothing where the form does not apply (not depthwise, not fp32, an input computed
  // inside the group, an epilogue that moves data, a row of outputs too wide for the tile).
  static std::optional<RuleOutput> generate(const GroupContext& ctx, const GraphNode& conv, const ConvShape& s,
                                            PointwiseEmitter& e);
};

}  // namespace nova
