#pragma once
// The builtin fusion generator: the studio's default, offline, no API key. For a fusion group it
// picks a rule (a direct convolution with its epilogue, a tiled GEMM or a library GEMM with the
// epilogue fused or folded, a row kernel for reductions and normalizations, a pointwise kernel for
// elementwise chains) and writes a candidate: readable CUDA specialised to the group's shapes, the
// launch plan, and the same kernels as a torch extension. A group no rule covers comes back
// declined, with the reason. Some groups also get alternatives: other forms worth measuring against
// the primary candidate, each validated and benchmarked on its own (the faster one that passes ships).
#include "core/gen/candidate.h"
#include "core/gen/group_context.h"
#include "core/graph/model_graph.h"

namespace nova {

// Which kernels the builtin generator writes. Projects record it with every builtin version, and the
// studio regenerates a project's groups that an older revision wrote (keeping the old versions). Bump
// it whenever the emitted kernels or launch plans change (a rule, the pointwise emitter, kernels/).
inline constexpr int kBuiltinGeneratorRevision = 13;

class BuiltinGenerator {
 public:
  explicit BuiltinGenerator(GenerationTarget target = {}) : target_(std::move(target)) {}

  // The primary candidate: the form the generator expects to pass validation and ship.
  Candidate generate(const ModelGraph& graph, const FusionGroup& group) const;
  // Other forms of the group's kernels, to be validated and benchmarked beside the primary; empty
  // where there is none. Today: fp32 GEMMs (linear, mm, bmm, matmul) and convolutions on tensor
  // cores through the 3xTF32 split (rules gemm_tf32x3, conv2d_tf32x3, ...; GenerationTarget::gemm_tf32x3 makes them
  // the primary instead), and where that GEMM splits K, the whole K on small tiles in one launch beside it
  // (gemm_tf32x3_whole_k). They are as close to float64 as eager's cuBLAS or cuDNN call or closer, but
  // sum in another order: validation passes them within tolerance of eager or as "closer to exact
  // than eager" (docs/VERIFY.md), and the benchmark decides which form ships.
  std::vector<Candidate> alternatives(const ModelGraph& graph, const FusionGroup& group) const;
  std::vector<Candidate> generate_all(const ModelGraph& graph) const;

 private:
  GenerationTarget target_;
};

}  // namespace nova
