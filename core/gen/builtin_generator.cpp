#include "core/gen/builtin_generator.h"

#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/gen/code_text.h"
#include "core/gen/batch_norm_train_rule.h"
#include "core/gen/cat_linear_rule.h"
#include "core/gen/conv2d_rule.h"
#include "core/gen/extension_writer.h"
#include "core/gen/gemm_row_reduce_rule.h"
#include "core/gen/gemm_rule.h"
#include "core/gen/integer_pointwise_rule.h"
#include "core/gen/pointwise_rule.h"
#include "core/gen/row_rule.h"
#include "core/gen/window_reduce_rule.h"

namespace nova {

namespace {

// Batch norm with running statistics (eval form): an affine map per channel, no reduction.
bool eval_batch_norm(const GraphNode& n) {
  if (n.target == "aten._native_batch_norm_legit_no_training.default") return true;
  if (n.target != "aten.batch_norm.default") return false;
  const NodeArg* training = find_arg(n, "training", 5);
  return training && training->constant.is_boolean() && !training->constant.get<bool>();
}

RuleOutput pick_rule(const GroupContext& ctx) {
  const GraphNode* anchor = ctx.anchor();
  if (!anchor) {
    // Pooling has no anchor class of its own: the group's pooling node is the reduction.
    for (const GraphNode* n : ctx.nodes())
      if (n->op_class != OpClass::Elementwise && n->op_class != OpClass::DataMovement &&
          WindowReduceRule::applies_to(*n))
        return WindowReduceRule::generate(ctx, *n);
    return PointwiseRule::generate(ctx);
  }
  switch (anchor->op_class) {
    case OpClass::Convolution:
      return Conv2dRule::generate(ctx);
    case OpClass::Matmul:
      // A head over a concatenation (multi-scale pooling): K split along the pieces, the cat never written.
      if (CatLinearRule::applies_to(ctx)) return CatLinearRule::generate(ctx);
      // A reduction over the product's rows in the group (intake put it there): one fused kernel.
      if (const GraphNode* r = GemmRowReduceRule::row_reduction(ctx)) return GemmRowReduceRule::generate(ctx, *r);
      return GemmRule::generate(ctx);
    case OpClass::Normalization:
      if (eval_batch_norm(*anchor)) return PointwiseRule::generate(ctx);  // per-channel affine: pointwise
      if (BatchNormTrainRule::applies_to(*anchor)) return BatchNormTrainRule::generate(ctx);
      return RowRule::generate(ctx);
    case OpClass::Reduction:
      try {
        return RowRule::generate(ctx);
      } catch (const UnsupportedGroup&) {
        if (!WindowReduceRule::applies_to(*anchor)) throw;
        return WindowReduceRule::generate(ctx, *anchor);  // along leading dimensions, min/max values
      }
    default:
      break;
  }
  // An anchor of another class: every op must still be pointwise-expressible.
  return PointwiseRule::generate(ctx);
}

// True when `tensor` is the positions a reduction of the group found (WindowReduceRule stores them).
bool extreme_positions(const GroupContext& ctx, const std::string& tensor) {
  for (const GraphNode* n : ctx.nodes())
    if (WindowReduceRule::positions_output(*n) == tensor) return true;
  return false;
}

// The builtin kernels compute in float and store float32, float16 or bfloat16, and the positions of
// a reduction's extremes as int64 (integer add, sub and mul are IntegerPointwiseRule's): a result of
// another dtype (an int64 result of another op, a float64 buffer) stays with PyTorch, exact.
void require_float_results(const GroupContext& ctx) {
  for (const auto& out : ctx.outputs)
    if (out.dtype != "float32" && out.dtype != "float16" && out.dtype != "bfloat16" &&
        !(out.dtype == "int64" && extreme_positions(ctx, out.name)))
      throw UnsupportedGroup(fmt::format(
          "its result {} is {}: the builtin kernels compute in float, so {} results stay with PyTorch, exact",
          out.name, out.dtype, out.dtype));
}

// A plan with no kernel of ours is eager's own library call: our validation refuses it (no CUDA
// kernel to judge), and there is nothing to fuse around the call.
void require_a_kernel(const RuleOutput& r) {
  for (const auto& step : r.plan.steps)
    if (step.type == "kernel") return;
  std::vector<std::string> ops = r.library_ops;
  throw UnsupportedGroup(fmt::format("eager's {} call is already the best form: nothing to fuse around it",
                                     ops.empty() ? std::string("library") : fmt::format("{}", fmt::join(ops, " + "))));
}

}  // namespace

Candidate BuiltinGenerator::generate(const ModelGraph& graph, const FusionGroup& group) const {
  Candidate c;
  c.group_id = group.id;
  c.model_path = graph.model_path;
  c.origin.kind = "builtin";
  try {
    GroupContext ctx(graph, group, target_);
    // Integer arithmetic with int64 results (a counter's + 1) exact in 64-bit integers; every other
    // group computes in float.
    const bool integer = IntegerPointwiseRule::applies_to(ctx);
    if (!integer) require_float_results(ctx);
    RuleOutput r = integer ? IntegerPointwiseRule::generate(ctx) : pick_rule(ctx);
    require_a_kernel(r);
    c.origin.rule = r.rule;
    c.summary =
        fmt::format("fused {} ({}); specialised for {}", ctx.ops_summary(), group.kind, ctx.shapes_summary());
    c.cuda_source = fmt::format(
        "// Nova builtin generator, rule '{rule}', for fusion group {id} ({kind}) of {model}.\n"
        "// Fused ops: {ops}.\n"
        "// Specialised for: {shapes}; {arch}.\n"
        "// {notes}\n"
        "#include \"nova/common.cuh\"\n\n{kernels}",
        fmt::arg("rule", r.rule), fmt::arg("id", group.id), fmt::arg("kind", comment_safe(group.kind)),
        fmt::arg("model", comment_safe(graph.model_path)), fmt::arg("ops", comment_safe(ctx.ops_summary())),
        fmt::arg("shapes", comment_safe(ctx.shapes_summary())), fmt::arg("arch", comment_safe(target_.arch)),
        fmt::arg("notes", comment_safe(r.notes)), fmt::arg("kernels", r.kernels));
    c.plan = std::move(r.plan);
    c.library_ops = std::move(r.library_ops);
    c.extension_source = ExtensionWriter::write(c);
  } catch (const UnsupportedGroup& e) {
    c.origin.rule = "none";
    c.declined = e.what();
    c.summary = fmt::format("declined: {}", e.what());
  }
  return c;
}

std::vector<Candidate> BuiltinGenerator::alternatives(const ModelGraph& graph,
                                                      const FusionGroup& group) const {
  std::vector<Candidate> out;
  const Candidate primary = generate(graph, group);
  // A reduction split in four slices per result: the same in eight beside it (twice the threads in flight,
  // half the walk each), and four neighbouring results a lane read 16 bytes at a time; all measured.
  if (primary.origin.rule == "window_reduce") {
    GenerationTarget eight = target_, vec4 = target_;
    eight.window_split_slices = 8;
    vec4.window_vec4 = true;
    for (const auto& [form, rule] : {std::pair{eight, "window_reduce_split8"}, std::pair{vec4, "window_reduce_vec4"}}) {
      Candidate c = BuiltinGenerator(form).generate(graph, group);
      if (!c.declined && c.origin.rule == rule) out.push_back(std::move(c));
    }
  }
  GenerationTarget tensor_cores = target_;
  tensor_cores.gemm_tf32x3 = true;
  // The tensor-core form: an alternative, or already the primary (--gemm-tf32x3).
  Candidate tensor_core = target_.gemm_tf32x3 ? primary : BuiltinGenerator(tensor_cores).generate(graph, group);
  if (!target_.gemm_tf32x3) {
    if (tensor_core.declined || tensor_core.origin.rule == primary.origin.rule) return out;
    out.push_back(tensor_core);
  }
  // Where that GEMM splits K (two launches), the one-launch form with small tiles beside it: faster on
  // the GPU or not, it costs one launch and no partials temp per call.
  if (tensor_core.origin.rule == "gemm_tf32x3") {
    tensor_cores.gemm_split_k = false;
    Candidate whole_k = BuiltinGenerator(tensor_cores).generate(graph, group);
    if (!whole_k.declined && whole_k.origin.rule == "gemm_tf32x3_whole_k") out.push_back(std::move(whole_k));
  }
  return out;
}

std::vector<Candidate> BuiltinGenerator::generate_all(const ModelGraph& graph) const {
  std::vector<Candidate> out;
  for (const auto& g : graph.groups) out.push_back(generate(graph, g));
  return out;
}

}  // namespace nova
