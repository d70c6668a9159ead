#include "core/gen/gemm_operand.h"

#include <algorithm>
#include <optional>

namespace nova {
namespace {

std::int64_t dim_arg(const GraphNode& n, const char* name, int pos, std::int64_t fallback, std::size_t rank) {
  const NodeArg* a = find_arg(n, name, pos);
  std::int64_t d = a && a->constant.is_number_integer() ? a->constant.get<std::int64_t>() : fallback;
  return d < 0 ? d + static_cast<std::int64_t>(rank) : d;
}

// Strides of `tensor` as a view of a group input, or nothing where the chain computes or copies.
std::optional<GemmOperand> follow_views(const GroupContext& ctx, const std::string& tensor, int depth) {
  GemmOperand o;
  if (ctx.input_index(tensor) >= 0) {
    o.input = tensor;
    o.shape = ctx.inputs[static_cast<std::size_t>(ctx.input_index(tensor))].shape;
    o.strides = contiguous_strides(o.shape);
    return o;
  }
  const GraphNode* p = ctx.graph.producer(tensor);
  if (!p || depth > 16) return std::nullopt;
  const std::string op = p->target.rfind("aten.", 0) == 0 ? p->target.substr(5) : p->target;
  const NodeArg* self = find_arg(*p, "self", 0);
  if (!self || self->tensor.empty()) self = find_arg(*p, "input", 0);
  if (!self || self->tensor.empty()) return std::nullopt;
  std::optional<GemmOperand> src = follow_views(ctx, self->tensor, depth + 1);
  if (!src) return std::nullopt;
  const std::vector<std::int64_t>& out_shape = p->outputs.at(0).shape;
  const std::size_t rank = out_shape.size();
  o = *src;
  if (op == "clone.default" || op == "detach.default" || op == "alias.default" || op == "contiguous.default") {
    // the same values at the same coordinates
  } else if (op == "transpose.int" || op == "t.default") {
    if (rank >= 2) {
      std::int64_t d0 = op == "t.default" ? 0 : dim_arg(*p, "dim0", 1, 0, rank);
      std::int64_t d1 = op == "t.default" ? 1 : dim_arg(*p, "dim1", 2, 1, rank);
      std::swap(o.strides.at(static_cast<std::size_t>(d0)), o.strides.at(static_cast<std::size_t>(d1)));
    }
  } else if (op == "numpy_T.default") {
    std::reverse(o.strides.begin(), o.strides.end());
  } else if (op == "permute.default") {
    const NodeArg* dims = find_arg(*p, "dims", 1);
    if (!dims || !dims->constant.is_array() || dims->constant.size() != rank) return std::nullopt;
    std::vector<std::int64_t> s(rank);
    for (std::size_t i = 0; i < rank; ++i) {
      std::int64_t d = dims->constant[i].get<std::int64_t>();
      if (d < 0) d += static_cast<std::int64_t>(rank);
      s[i] = src->strides.at(static_cast<std::size_t>(d));
    }
    o.strides = s;
  } else if (op == "view.default" || op == "_unsafe_view.default" || op == "reshape.default" ||
             op == "flatten.using_ints") {
    // Only a view of contiguous data keeps contiguous strides; other reshapes are not followed.
    if (src->strides != contiguous_strides(src->shape)) return std::nullopt;
    o.strides = contiguous_strides(out_shape);
  } else {
    return std::nullopt;
  }
  o.shape = out_shape;
  return o;
}

}  // namespace

GemmOperand GemmOperand::resolve(const GroupContext& ctx, const std::string& tensor) {
  if (auto o = follow_views(ctx, tensor, 0)) return *o;
  const GraphNode* p = ctx.graph.producer(tensor);
  if (p && ctx.input_index(tensor) < 0) {
    const std::string op = p->target.rfind("aten.", 0) == 0 ? p->target.substr(5) : p->target;
    const NodeArg* self = find_arg(*p, "self", 0);
    if ((op == "triu.default" || op == "tril.default") && self && !self->tensor.empty() &&
        p->outputs.at(0).shape.size() >= 2) {
      if (auto o = follow_views(ctx, self->tensor, 1)) {
        o->mask = op == "triu.default" ? Mask::upper : Mask::lower;
        const NodeArg* d = find_arg(*p, "diagonal", 1);
        o->diagonal = d && d->constant.is_number_integer() ? d->constant.get<std::int64_t>() : 0;
        return *o;
      }
    }
  }
  GemmOperand o;
  o.computed = true;
  return o;
}

std::int64_t GemmOperand::merged_stride(std::size_t dims) const {
  if (dims == 0) return 0;
  for (std::size_t d = 0; d + 1 < dims; ++d)
    if (shape[d] != 1 && strides[d] != strides[d + 1] * shape[d + 1]) return -1;
  return strides[dims - 1];
}

std::int64_t GemmOperand::batch_stride() const {
  return shape.size() <= 2 ? 0 : merged_stride(shape.size() - 2);
}

std::int64_t GemmOperand::row_stride() const {
  return shape.size() <= 1 ? (shape.empty() ? 0 : shape[0]) : merged_stride(shape.size() - 1);
}

bool GemmOperand::b_layout(bool weight, bool& kn, std::int64_t& ld) const {
  const std::size_t r = strides.size();
  kn = false;
  if (r < 2) return false;
  if (weight) {
    ld = strides[r - 2];
    return strides[r - 1] == 1;
  }
  if (strides[r - 2] == 1) {
    ld = strides[r - 1];
    return true;
  }
  if (strides[r - 1] == 1) {
    kn = true;
    ld = strides[r - 2];
    return true;
  }
  return false;
}

}  // namespace nova
