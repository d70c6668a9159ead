#include "core/gen/gemm_shape.h"

namespace nova {

GemmShape GemmShape::read(const GraphNode& g, const PointwiseEmitter& e) {
  GemmShape s;
  s.out_shape = g.outputs.at(0).shape;
  s.result = g.outputs.at(0).name;
  auto tensor = [&](const char* name, int pos) {
    const NodeArg* a = find_arg(g, name, pos);
    if (!a || a->tensor.empty()) throw UnsupportedGroup(g.target + ": argument " + name + " is not a tensor");
    return a->tensor;
  };
  const std::string op = g.target.rfind("aten.", 0) == 0 ? g.target.substr(5) : g.target;
  if (op == "linear.default") {
    s.a = tensor("input", 0);
    s.b = tensor("weight", 1);
    s.b_transposed = true;
    s.rows_flattened = true;
    if (const NodeArg* b = find_arg(g, "bias", 2); b && !b->tensor.empty()) s.bias = b->tensor;
    const auto& as = e.info(s.a).shape;
    s.k = as.back();
    s.m = numel(as) / s.k;
    s.n = e.info(s.b).shape[0];
  } else if (op == "addmm.default" || op == "mm.default") {
    bool addmm = op == "addmm.default";
    s.a = tensor(addmm ? "mat1" : "self", addmm ? 1 : 0);
    s.b = tensor("mat2", addmm ? 2 : 1);
    if (addmm) {
      s.bias = tensor("self", 0);
      if (e.info(s.bias).shape.size() != 1) throw UnsupportedGroup("addmm with a non-vector bias");
      if (const NodeArg* b = find_arg(g, "beta", 3); b && b->constant.is_number())
        s.beta = b->constant.get<double>();
      if (const NodeArg* a = find_arg(g, "alpha", 4); a && a->constant.is_number())
        s.alpha = a->constant.get<double>();
    }
    s.m = e.info(s.a).shape[0];
    s.k = e.info(s.a).shape[1];
    s.n = e.info(s.b).shape[1];
  } else if (op == "bmm.default" || op == "matmul.default") {
    s.a = tensor("self", 0);
    s.b = tensor(op == "bmm.default" ? "mat2" : "other", 1);
    const auto& as = e.info(s.a).shape;
    const auto& bs = e.info(s.b).shape;
    if (op == "matmul.default" && as.size() > 2 && bs.size() == 2) {
      // x @ w with a batched x: every leading dimension of x is rows of one product.
      s.rows_flattened = true;
      s.k = as.back();
      s.m = numel(as) / s.k;
      s.n = bs.back();
      return s;
    }
    if (as.size() < 2 || as.size() != bs.size())
      throw UnsupportedGroup(op + " with broadcast batch dimensions");
    for (std::size_t d = 0; d + 2 < as.size(); ++d)
      if (as[d] != bs[d]) throw UnsupportedGroup(op + " with broadcast batch dimensions");
    s.m = as[as.size() - 2];
    s.k = as.back();
    s.n = bs.back();
    s.batch = numel(as) / (s.m * s.k);
  } else {
    throw UnsupportedGroup("no GEMM rule for " + g.target);
  }
  return s;
}

std::pair<std::string, std::string> GemmShape::epilogue_on_register(const GroupContext& ctx, PointwiseEmitter& e,
                                                                    int indent) const {
  std::vector<std::string> coords;
  if (rows_flattened) {
    std::vector<std::int64_t> lead(out_shape.begin(), out_shape.end() - 1);
    coords = unravel("row", lead);
    coords.push_back("col");
  } else {
    std::vector<std::int64_t> lead(out_shape.begin(), out_shape.end() - 2);
    coords = unravel("bat", lead);
    coords.push_back("row");
    coords.push_back("col");
  }
  e.bind_register(result, "gemm", coords);
  std::string value = e.value(ctx.outputs[0].name, coords);
  return {e.take_code(indent), value};
}

}  // namespace nova
