#pragma once
// What every builtin rule needs about the group it writes kernels for: the graph, the group, its
// inputs and outputs in call order with readable C names, the GPU it targets, and helpers that
// turn those into kernel parameters, launch-plan arguments and emitter bindings.
#include <map>
#include <string>
#include <vector>

#include "core/gen/candidate.h"
#include "core/gen/pointwise_emitter.h"
#include "core/graph/model_graph.h"

namespace nova {

// The GPU a candidate is specialised for (launch sizes depend on it).
struct GenerationTarget {
  std::string arch = "sm_90";
  int sm_count = 132;
  // fp32 GEMMs above the tiled kernel's size, or from GemmTf32x3Rule::kMinMacs where the tiled kernel
  // cannot read the operands or fill the GPU, get a tensor-core GEMM through the 3xTF32 split
  // (kernels/nova/gemm_tf32x3.cuh, GemmTf32x3Rule), and fp32 2-D convolutions of ConvTf32x3Rule::kMinMacs or
  // more an implicit GEMM through it (kernels/nova/conv_gather.cuh), as their primary candidate
  // instead of eager's own library call or the direct convolution.
  // Faster than cuBLAS's fp32 SGEMM on the H200 and as close to float64 or closer, but it sums in
  // another order than eager, so groups where eager's own rounding exceeds the 1e-4 tolerance fail the
  // check against eager. Off by default: BuiltinGenerator::alternatives then offers it beside the
  // library form.
  bool gemm_tf32x3 = false;
  // A tensor-core GEMM whose output has too few tiles to fill the GPU and whose K is long splits K: each
  // block sums a slice, a second kernel adds the slices with the epilogue (two launches and a partials
  // temp). Off: a block per 32x32 tile over the whole K, one launch, where K is at most
  // GemmTf32x3Rule::kSmallTileMaxK (BuiltinGenerator::alternatives offers that form beside the split).
  bool gemm_split_k = true;
  // A reduction over one dimension with few results and long windows (WindowReduceRule's split form):
  // threads per result, each over a contiguous slice of the window. 4 (rule window_reduce); 8 is rule
  // window_reduce_split8, which BuiltinGenerator::alternatives offers beside it.
  int window_split_slices = 4;
  // The same reduction with four neighbouring results a lane, read with 16-byte loads (rule
  // window_reduce_vec4), where the input is read as it is and its last dimension is not reduced: an
  // alternative that BuiltinGenerator::alternatives offers beside the split form.
  bool window_vec4 = false;
};

struct GroupContext {
  GroupContext(const ModelGraph& graph, const FusionGroup& group, GenerationTarget target);

  const ModelGraph& graph;
  const FusionGroup& group;
  GenerationTarget target;
  std::vector<TensorInfo> inputs;  // in call order
  std::vector<TensorInfo> outputs;
  std::vector<std::string> input_names;   // C identifiers, e.g. "in_x"
  std::vector<std::string> output_names;  // e.g. "out_mul"

  const GraphNode* anchor() const;
  std::vector<const GraphNode*> nodes() const;  // group nodes in order
  // Nodes after (or before) the anchor in the group.
  std::vector<const GraphNode*> nodes_after_anchor() const;

  // "const float* __restrict__ in_x, ..., float* __restrict__ out_mul"
  std::string kernel_params() const;
  // The plan arguments matching kernel_params(): input:i ..., output:k ...
  std::vector<PlanArg> plan_args() const;
  LaunchPlan base_plan() const;  // inputs and outputs filled, no steps
  void bind_inputs(PointwiseEmitter& emitter) const;
  // Index of a group input by tensor name, or -1.
  int input_index(const std::string& tensor) const;
  // A library-step argument for a node argument: a group input by reference, or the constant.
  // `computed`: values of the group already materialized by earlier steps (name -> "temp:i").
  PlanArg library_arg(const NodeArg& arg, const std::map<std::string, std::string>& computed = {}) const;
  // The epilogue: every node after the anchor must compute from the anchor's result at the same
  // coordinates (elementwise ops and broadcasts only), and the group must have one output.
  bool epilogue_preserves_coordinates() const;
  // The same, but index-dependent ops (a triu / tril mask computed from the coordinates) allowed: for
  // a kernel that emits each element with its own coordinates (an epilogue on a GEMM's accumulators).
  bool epilogue_in_place() const;
  std::string storage_type(std::size_t input) const;
  std::string output_storage_type(std::size_t output) const;
  // "x float32[128,3,32,32], ..."
  std::string shapes_summary() const;
  // "convolution → minimum → add → mul"
  std::string ops_summary() const;

  static std::string c_identifier(const std::string& name);
  static std::string shape_text(const std::vector<std::int64_t>& shape);

 private:
  // A dry run of the epilogue from the anchor's result in a register: it reaches the one output
  // without views, and (same_coordinates) without index-dependent ops.
  bool dry_run_epilogue(bool same_coordinates) const;
};

}  // namespace nova
