#pragma once
// A convolution node's geometry as the builtin rules read it (NCHW, or NCDHW for a 3-D one): sizes,
// stride, padding, dilation, groups, and whether it is transposed. Shared by Conv2dRule and
// ConvTf32x3Rule. A 2-D convolution reads as a 3-D one of depth 1 (d = kd = od = 1, no stride,
// padding or dilation along depth).
#include <cstdint>

#include "core/gen/pointwise_emitter.h"
#include "core/graph/model_graph.h"

namespace nova {

// What a convolution computes, read from its node and its tensors' shapes.
struct ConvShape {
  std::int64_t n, cin, h, w, cout, kh, kw, oh, ow;
  std::int64_t sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1, groups = 1;
  int dims = 2;                    // spatial dimensions: 2 (NCHW) or 3 (NCDHW)
  std::int64_t d = 1, kd = 1, od = 1, sd = 1, pd = 0, dd = 1;  // depth: sizes, stride, padding, dilation
  bool transposed = false;         // aten.conv_transpose2d/3d: weight [cin, cout / groups, k...], output
                                   // o = i * stride - padding + r * dilation (sizes from the output's shape)

  // Output pixels (voxels) per image and channel.
  std::int64_t out_pixels() const { return od * oh * ow; }
  // Taps per input channel.
  std::int64_t taps() const { return kd * kh * kw; }

  // Throws UnsupportedGroup for what no rule handles: a missing tensor operand, other than 2-D
  // (NCHW) or 3-D (NCDHW), an argument of an unknown form, aten.convolution with transposed set.
  static ConvShape read(const GraphNode& conv, const PointwiseEmitter& e);
};

}  // namespace nova
