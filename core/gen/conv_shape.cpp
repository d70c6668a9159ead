#include "core/gen/conv_shape.h"

#include <vector>

#include <fmt/format.h>

namespace nova {
namespace {

std::vector<std::int64_t> pair_arg(const GraphNode& node, const char* name, int pos, std::int64_t fallback) {
  const NodeArg* a = find_arg(node, name, pos);
  if (!a || a->constant.is_null()) return {fallback, fallback};
  if (a->constant.is_number()) return {a->constant.get<std::int64_t>(), a->constant.get<std::int64_t>()};
  if (a->constant.is_array() && a->constant.size() == 1)
    return {a->constant[0].get<std::int64_t>(), a->constant[0].get<std::int64_t>()};
  if (a->constant.is_array() && a->constant.size() == 2) return a->constant.get<std::vector<std::int64_t>>();
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
  if (xs.size() != 4 || ws.size() != 4 || os.size() != 4)
    throw UnsupportedGroup("only 2-D convolutions (NCHW) are supported");
  ConvShape s{xs[0], xs[1], xs[2], xs[3], ws[0], ws[2], ws[3], os[2], os[3]};
  bool conv2d = conv.target == "aten.conv2d.default";
  auto stride = pair_arg(conv, "stride", 3, 1), padding = pair_arg(conv, "padding", 4, 0),
       dilation = pair_arg(conv, "dilation", 5, 1);
  s.sh = stride[0], s.sw = stride[1], s.ph = padding[0], s.pw = padding[1], s.dh = dilation[0],
  s.dw = dilation[1];
  const NodeArg* g = find_arg(conv, "groups", conv2d ? 6 : 8);
  if (g && g->constant.is_number()) s.groups = g->constant.get<std::int64_t>();
  if (conv.target.find("conv_transpose") != std::string::npos) {
    s.transposed = true;  // the weight is [cin, cout / groups, kh, kw]: the library call computes it
  } else if (!conv2d) {
    const NodeArg* tr = find_arg(conv, "transposed", 6);
    if (tr && tr->constant.is_boolean() && tr->constant.get<bool>())
      throw UnsupportedGroup("transposed convolution");
  }
  return s;
}

}  // namespace nova
