#include "core/gen/batch_norm_train_rule.h"

#include <fmt/format.h>

#include "core/gen/pointwise_emitter.h"

namespace nova {

bool BatchNormTrainRule::applies_to(const GraphNode& node) {
  if (node.target != "aten._native_batch_norm_legit_functional.default") return false;
  const NodeArg* training = find_arg(node, "training", 5);
  return training && training->constant.is_boolean() && training->constant.get<bool>();
}

RuleOutput BatchNormTrainRule::generate(const GroupContext& ctx) {
  const GraphNode& bn = *ctx.anchor();
  // (input, weight, bias, running_mean, running_var, training, momentum, eps) ->
  // (output, save_mean, save_invstd, new running_mean, new running_var)
  const auto tensor = [&](const char* name, int pos) {
    const NodeArg* a = find_arg(bn, name, pos);
    return a && !a->tensor.empty() ? a->tensor : std::string();
  };
  const auto number = [&](const char* name, int pos, double fallback) {
    const NodeArg* a = find_arg(bn, name, pos);
    if (!a) return fallback;
    if (!a->constant.is_number())  // a momentum computed at run time (momentum=None: a cumulative average)
      throw UnsupportedGroup(fmt::format("batch norm in training form whose {} is not a constant", name));
    return a->constant.get<double>();
  };
  const std::string x = tensor("input", 0), weight = tensor("weight", 1), bias = tensor("bias", 2),
                    running_mean = tensor("running_mean", 3), running_var = tensor("running_var", 4);
  const double momentum = number("momentum", 6, 0.1), eps = number("eps", 7, 1e-5);
  if (x.empty() || running_mean.empty() || running_var.empty() || bn.outputs.size() != 5)
    throw UnsupportedGroup("batch norm in training form without its input or running statistics");
  for (const std::string& t : {x, weight, bias, running_mean, running_var})
    if (!t.empty() && ctx.input_index(t) < 0)
      throw UnsupportedGroup("batch norm in training form whose input or parameters are computed inside the group");
  PointwiseEmitter e(ctx.graph, ctx.group);
  ctx.bind_inputs(e);
  const std::vector<std::int64_t> shape = e.info(x).shape;
  if (shape.size() < 2) throw UnsupportedGroup("batch norm without a channel dimension");
  for (const std::string& t : {x, weight, bias, running_mean, running_var})
    if (!t.empty() && e.info(t).dtype != "float32")
      throw UnsupportedGroup("batch norm in training form on " + e.info(t).dtype + ": the rule reads float32");
  const std::int64_t images = shape[0], channels = shape[1], planes = images * channels,
                     spatial = numel(shape) / planes;
  if (numel(shape) >= (std::int64_t{1} << 31) || images * spatial < 2)
    throw UnsupportedGroup("batch norm in training form over fewer than two values per channel, or 2^31 or more");

  // The group's outputs: the epilogue of the normalized result (one, of the input's shape), and the updated
  // running statistics; nothing else (save_mean and save_invstd stay inside eager's autograd).
  int result = -1, new_mean = -1, new_var = -1;
  for (std::size_t i = 0; i < ctx.outputs.size(); ++i) {
    const std::string& name = ctx.outputs[i].name;
    if (name == bn.outputs[3].name) {
      new_mean = static_cast<int>(i);
    } else if (name == bn.outputs[4].name) {
      new_var = static_cast<int>(i);
    } else if (result < 0 && ctx.outputs[i].shape == shape && ctx.outputs[i].dtype == "float32") {
      result = static_cast<int>(i);
    } else {
      throw UnsupportedGroup("batch norm in training form with a result other than its output's epilogue and "
                             "the running statistics: " + name);
    }
  }
  if (result < 0) throw UnsupportedGroup("batch norm in training form whose normalized result leaves the group unused");

  const std::vector<std::string> coords = unravel("f", shape);
  e.note_flat(coords, shape, "f");
  e.bind_register(bn.outputs[0].name, "bnv", coords);
  const std::string value = e.value(ctx.outputs[static_cast<std::size_t>(result)].name, coords);
  if (!e.coordinates_preserved()) throw UnsupportedGroup("the epilogue moves data between positions");
  const std::string epilogue = e.take_code(4);
  const auto in = [&](const std::string& t) { return ctx.input_names[static_cast<std::size_t>(ctx.input_index(t))]; };
  const auto out_name = [&](int i) { return ctx.output_names[static_cast<std::size_t>(i)]; };

  RuleOutput out;
  out.plan = ctx.base_plan();
  std::string params = ctx.kernel_params();
  std::vector<PlanArg> args = ctx.plan_args();
  const std::string partials_ref = fmt::format("temp:{}", out.plan.temps.size());
  out.plan.temps.push_back({"nova_bn_partials", {planes, 2}, "float32"});
  params += ",\n    float2* __restrict__ nova_bn_partials";
  args.push_back({partials_ref, "", nullptr, ""});

  std::string running;
  if (new_mean >= 0)
    running += fmt::format("      {}[c] = (float)({} * (double){}[c] + {} * mean);\n", out_name(new_mean),
                           1.0 - momentum, in(running_mean), momentum);
  if (new_var >= 0)
    running += fmt::format("      {}[c] = (float)({} * (double){}[c] + {} * (m2 / (count - 1.0)));\n", out_name(new_var),
                           1.0 - momentum, in(running_var), momentum);
  const std::string name = fmt::format("nova_g{}_batch_norm_train", ctx.group.id);
  const int threads = 256;
  out.kernels = fmt::format(
      R"(#include "nova/batch_norm.cuh"

// Batch norm in training form over {images} images x {channels} channels x {spatial} values, pass 1: one
// block per (image, channel) plane writes the plane's mean and its sum of squared deviations from it
// (two passes over the plane, the second from cache).
extern "C" __global__ void __launch_bounds__({threads}) {name}_partials(
    {params}) {{
  __shared__ float scratch[2][32];
  const long long base = (long long)blockIdx.x * {spatial}LL;
  float s = 0.0f;
  for (int i = threadIdx.x; i < {spatial}; i += {threads}) s += {x}[base + i];
  const float mean = nova::block_reduce<nova::warp_sum>(s, scratch[0], 0.0f) / {spatial}.0f;
  float q = 0.0f;
  for (int i = threadIdx.x; i < {spatial}; i += {threads}) {{
    const float d = {x}[base + i] - mean;
    q = fmaf(d, d, q);
  }}
  q = nova::block_reduce<nova::warp_sum>(q, scratch[1], 0.0f);
  if (threadIdx.x == 0) nova_bn_partials[blockIdx.x] = make_float2(mean, q);
}}

// Pass 2: one block per plane combines its channel's {images} partials in image order (Chan's formula, in
// double, kernels/nova/batch_norm.cuh: the same statistics for every plane of the channel), normalizes the plane with the epilogue
// before the only store; the image-0 block of each channel updates the running statistics (momentum
// {momentum}, the variance unbiased as PyTorch keeps it).
extern "C" __global__ void __launch_bounds__({threads}) {name}(
    {params}) {{
  __shared__ float stats[2];
  const int plane = blockIdx.x, n = plane / {channels}, c = plane - n * {channels};
  if (threadIdx.x == 0) {{
    const nova::ChannelStats st = nova::combine_planes(nova_bn_partials + c, {images}, {channels}, {spatial}.0);
    const double mean = st.mean, m2 = st.m2, count = st.count;
    stats[0] = (float)mean;
    stats[1] = (float)(1.0 / sqrt(m2 / count + {eps}));
    if (n == 0) {{
{running}    }}
  }}
  __syncthreads();
  const float mean = stats[0], rstd = stats[1]{scale_load}{shift_load};
  const long long base = (long long)plane * {spatial}LL;
  for (int i = threadIdx.x; i < {spatial}; i += {threads}) {{
    const long long f = base + i;
    const float bnv = ({x}[f] - mean) * rstd{scale}{shift};
{epilogue}    {out}[f] = nova::from_f<{otype}>({value});
  }}
}}

)",
      fmt::arg("images", images), fmt::arg("channels", channels), fmt::arg("spatial", spatial),
      fmt::arg("threads", threads), fmt::arg("name", name), fmt::arg("params", params), fmt::arg("x", in(x)),
      fmt::arg("momentum", momentum), fmt::arg("eps", fmt::format("{:.9g}", eps)), fmt::arg("running", running),
      fmt::arg("scale_load", weight.empty() ? "" : fmt::format(", scale = {}[c]", in(weight))),
      fmt::arg("shift_load", bias.empty() ? "" : fmt::format(", shift = {}[c]", in(bias))),
      fmt::arg("scale", weight.empty() ? "" : " * scale"), fmt::arg("shift", bias.empty() ? "" : " + shift"),
      fmt::arg("epilogue", epilogue), fmt::arg("out", out_name(result)),
      fmt::arg("otype", ctx.output_storage_type(static_cast<std::size_t>(result))), fmt::arg("value", value));
  out.rule = "batch_norm_train";
  for (const std::string kernel : {name + "_partials", name}) {
    PlanStep step;
    step.type = "kernel";
    step.kernel = kernel;
    step.grid = {planes, 1, 1};
    step.block = {threads, 1, 1};
    step.args = args;
    out.plan.steps.push_back(step);
  }
  out.notes = fmt::format(
      "{} planes of {} values: their partial statistics, then the channel's statistics combined in image order, "
      "the plane normalized with the epilogue, the running statistics updated",
      planes, spatial);
  return out;
}

}  // namespace nova
