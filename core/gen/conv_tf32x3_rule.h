#pragma once
// The tensor-core form of a 2-D or 3-D convolution (rules conv2d_tf32x3, conv3d_tf32x3): an implicit
// GEMM per group, output channels x output pixels with K = input channels x taps, on the 3xTF32 tile of
// kernels/nova/gemm_tf32x3.cuh with its W operand gathered from the NCHW / NCDHW input
// (kernels/nova/conv_gather.cuh: zeros for the padding, any stride, dilation and groups, K's taps in
// a shared-memory table where it fits). An input computed inside the group is materialized first;
// the epilogue is applied to the accumulators, staged through shared memory for 16-byte stores where
// each image's output pixels come in fours. Conv2dRule asks for it where
// GenerationTarget::gemm_tf32x3 is set (BuiltinGenerator::alternatives writes it beside the primary).
#include <optional>

#include "core/gen/conv_shape.h"
#include "core/gen/group_context.h"
#include "core/gen/rule_output.h"

namespace nova {

class ConvTf32x3Rule {
 public:
  // Convolutions of at least this many multiply-adds get the tensor-core form (as GEMMs past the
  // tiled kernel's limit do).
  static constexpr double kMinMacs = 64.0 * 1024 * 1024;
  // Up to this K (input channels per group x taps, padded to 32), the kernel keeps a table of K's taps
  // in shared memory (8 bytes each, beside two blocks' 98 KB of stages per multiprocessor).
  static constexpr std::int64_t kTableK = 1536;
  // Up to this K the table stays, beside three stages instead of four (a 3-D convolution's K: input
  // channels x depth x height x width taps); past it a 3-D convolution is left to the library.
  static constexpr std::int64_t kTableK3 = 4608;
  // The candidate's kernels and plan, or nothing where the form does not apply (not fp32, fewer than 32
  // output channels per group, a K that is not a multiple of 4, too small): the caller's other forms.
  static std::optional<RuleOutput> generate(const GroupContext& ctx, const GraphNode& conv, const ConvShape& s,
                                            PointwiseEmitter& e);

 private:
  // A transposed convolution (rules conv_transpose2d_tf32x3, conv_transpose3d_tf32x3): a kernel lays the
  // weights out per output phase, then one implicit GEMM per group and phase (ConvTransposedTableGather).
  static std::optional<RuleOutput> generate_transposed(const GroupContext& ctx, const GraphNode& conv,
                                                       const ConvShape& s, PointwiseEmitter& e);
};

}  // namespace nova
