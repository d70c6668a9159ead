#pragma once
// A 2-D convolution node's geometry as the builtin rules read it (NCHW): sizes, stride, padding,
// dilation, groups, and whether it is transposed. Shared by Conv2dRule and ConvTf32x3Rule.
#include <cstdint>

#include "core/gen/pointwise_emitter.h"
#include "core/graph/model_graph.h"

namespace nova {

// What a convolution computes, read from its node and its tensors' shapes.
struct ConvShape {
  std::int64_t n, cin, h, w, cout, kh, kw, oh, ow;
  std::int64_t sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1, groups = 1;
  bool transposed = false;  // aten.conv_transpose2d: only the library form

  // Throws UnsupportedGroup for what no rule handles: a missing tensor operand, other than 2-D
  // (NCHW), an argument of an unknown form, aten.convolution with transposed set.
  static ConvShape read(const GraphNode& conv, const PointwiseEmitter& e);
};

}  // namespace nova
