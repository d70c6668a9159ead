#include "core/gen/conv_shape.h"

#include <vector>

#include <fmt/format.h>

namespace nova {
namespace {

// A stride, padding or dilation argument as one value per spatial dimension.
std::vector<std::int64_t> spatial_arg(const GraphNode& node, const char* name, int pos, std::int64_t fallback,
                                      std::size_t dims) {
  const NodeArg* a = find_arg(node, name, pos);
  if (!a || a->constant.is_null()) return std::vector<std::int64_t>(dims, fallback);
  if (a->constant.is_number()) return std::vector<std::int64_t>(dims, a->constant.get<std::int64_t>());
  if (a->constant.is_array() && a->constant.size() == 1)
    return std::vector<std::int64_t>(dims, a->constant[0].get<std::int64_t>());
  if (a->constant.is_array() && a->constant.size() == dims) return a->constant.get<std::vector<std::int64_t>>();
  throw UnsupportedGroup(
      fmt::format("convolution argument {} = {} is not supported", name, a->constant.dump()));
}

}  // namespace

ConvShape ConvShape::read(const GraphNode& conv, const PointwiseEmitter& e) {
  const NodeArg* x = find_arg(conv, "input", 0);
  const NodeArg* w = find_arg(conv, "weight", 1);
  if (!x || !w || x->tensor.empty() || w->tensor.empty())
    throw UnsupportedGroup("convolution without tensor input or weight");
  const auto& xs = e.info(x->tensor).shape;
  const auto& ws = e.info(w->tensor).shape;
  const auto& os = conv.outputs.at(0).shape;
  const std::size_t rank = xs.size();
  if ((rank != 4 && rank != 5) || ws.size() != rank || os.size() != rank)
    throw UnsupportedGroup("only 2-D (NCHW) and 3-D (NCDHW) convolutions are supported");
  const std::size_t dims = rank - 2, lead = dims - 2;  // lead: 1 where a depth comes first
  ConvShape s{xs[0], xs[1], xs[2 + lead], xs[3 + lead], ws[0], ws[2 + lead], ws[3 + lead], os[2 + lead],
              os[3 + lead]};
  s.dims = static_cast<int>(dims);
  if (dims == 3) s.d = xs[2], s.kd = ws[2], s.od = os[2];
  const bool plain = conv.target == "aten.conv2d.default" || conv.target == "aten.conv3d.default";
  // aten.conv_transpose2d/3d.input: (input, weight, bias, stride, padding, output_padding, groups, dilation).
  const bool transpose_op = conv.target.find("conv_transpose") != std::string::npos;
  auto stride = spatial_arg(conv, "stride", 3, 1, dims), padding = spatial_arg(conv, "padding", 4, 0, dims),
       dilation = spatial_arg(conv, "dilation", transpose_op ? 7 : 5, 1, dims);
  s.sh = stride[lead], s.sw = stride[lead + 1], s.ph = padding[lead], s.pw = padding[lead + 1],
  s.dh = dilation[lead], s.dw = dilation[lead + 1];
  if (dims == 3) s.sd = stride[0], s.pd = padding[0], s.dd = dilation[0];
  const NodeArg* g = find_arg(conv, "groups", plain || transpose_op ? 6 : 8);
  if (g && g->constant.is_number()) s.groups = g->constant.get<std::int64_t>();
  if (transpose_op) {
    s.transposed = true;  // the weight is [cin, cout / groups, k...]
    s.cout = os[1];
  } else if (!plain) {
    const NodeArg* tr = find_arg(conv, "transposed", 6);
    if (tr && tr->constant.is_boolean() && tr->constant.get<bool>())
      throw UnsupportedGroup("transposed convolution");
  }
  return s;
}

}  // namespace nova
