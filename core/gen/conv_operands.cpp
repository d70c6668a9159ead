#include "core/gen/conv_operands.h"

#include "core/gen/pointwise_rule.h"

namespace nova {

ConvOperands::ConvOperands(const GroupContext& ctx, const GraphNode& conv)
    : x(find_arg(conv, "input", 0)), w(find_arg(conv, "weight", 1)), b(find_arg(conv, "bias", 2)),
      has_bias(b && !b->tensor.empty()), xi(ctx.input_index(x->tensor)), wi(ctx.input_index(w->tensor)),
      bi(has_bias ? ctx.input_index(b->tensor) : 0) {}

bool ConvOperands::tensor_core_ready(const GroupContext& ctx, const PointwiseEmitter& e, std::int64_t cout_g) const {
  return wi >= 0 && bi >= 0 && e.info(x->tensor).dtype == "float32" &&
         ctx.inputs[static_cast<std::size_t>(wi)].dtype == "float32" && ctx.outputs[0].dtype == "float32" &&
         cout_g >= 32 && ctx.epilogue_preserves_coordinates();
}

std::string ConvOperands::begin(const GroupContext& ctx, const GraphNode& conv, RuleOutput& out, std::string& params,
                                std::vector<PlanArg>& args) const {
  out.plan = ctx.base_plan();
  params = ctx.kernel_params();
  args = ctx.plan_args();
  if (xi >= 0) return name(ctx, xi);
  auto computed = PointwiseRule::materialize_operands(ctx, conv, out.plan, out.kernels);
  params += ",\n    const float* __restrict__ nova_conv_input";
  args.push_back({computed.at(x->tensor), "", nullptr, ""});
  return "nova_conv_input";
}

}  // namespace nova
