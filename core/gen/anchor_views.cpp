#include "core/gen/anchor_views.h"

#include <algorithm>
#include <map>
#include <numeric>

#include <fmt/format.h>

#include "core/gen/pointwise_emitter.h"

namespace nova {
namespace {

std::int64_t dim_of(std::int64_t dim, std::size_t rank) {
  if (dim < 0) dim += static_cast<std::int64_t>(rank);
  if (dim < 0 || dim >= static_cast<std::int64_t>(rank)) throw UnsupportedGroup("a dimension out of range");
  return dim;
}

std::int64_t int_arg(const GraphNode& node, const char* name, int position, std::int64_t fallback) {
  const NodeArg* a = find_arg(node, name, position);
  if (!a || a->constant.is_null()) return fallback;
  if (!a->tensor.empty() || !a->constant.is_number_integer()) throw UnsupportedGroup("not a constant");
  return a->constant.get<std::int64_t>();
}

// The strides of `shape` viewing a tensor of `sizes` and `strides` without a copy, as PyTorch's view
// defines it (dimensions merge or split only where they are laid out one inside the other); nullopt
// where a view would need a copy (reshape copies there).
std::optional<std::vector<std::int64_t>> view_strides(const std::vector<std::int64_t>& sizes,
                                                      const std::vector<std::int64_t>& strides,
                                                      const std::vector<std::int64_t>& shape) {
  if (numel(sizes) != numel(shape)) return std::nullopt;
  std::vector<std::int64_t> out(shape.size(), 1);
  // Walk both shapes from the innermost dimension in chunks of source dimensions that are contiguous
  // with each other; each chunk must be covered exactly by a run of target dimensions.
  auto view_d = static_cast<std::int64_t>(shape.size()) - 1;
  std::int64_t chunk_stride = sizes.empty() ? 1 : strides.back();
  std::int64_t chunk = 1, covered = 1;
  for (auto d = static_cast<std::int64_t>(sizes.size()) - 1; d >= 0; --d) {
    chunk *= sizes[static_cast<std::size_t>(d)];
    const bool chunk_ends = d == 0 || (sizes[static_cast<std::size_t>(d - 1)] != 1 &&
                                       strides[static_cast<std::size_t>(d - 1)] != chunk * chunk_stride);
    if (!chunk_ends) continue;
    while (view_d >= 0 && (covered < chunk || shape[static_cast<std::size_t>(view_d)] == 1)) {
      out[static_cast<std::size_t>(view_d)] = covered * chunk_stride;
      covered *= shape[static_cast<std::size_t>(view_d)];
      --view_d;
    }
    if (covered != chunk) return std::nullopt;
    if (d > 0) {
      chunk_stride = strides[static_cast<std::size_t>(d - 1)];
      chunk = covered = 1;
    }
  }
  while (view_d >= 0 && shape[static_cast<std::size_t>(view_d)] == 1)
    out[static_cast<std::size_t>(view_d--)] = 1;
  if (view_d != -1) return std::nullopt;
  return out;
}

// The views `node` makes of `src` (one per node output); throws UnsupportedGroup for an op that
// computes or copies.
std::vector<AnchorView> apply(const GraphNode& node, const AnchorView& src) {
  const std::string op = node.target.rfind("aten.", 0) == 0 ? node.target.substr(5) : node.target;
  const std::size_t rank = src.sizes.size();
  AnchorView v = src;
  if (node.outputs.empty()) throw UnsupportedGroup(op + " has no output");
  if (src.copied) throw UnsupportedGroup(op + " of a copy");
  if (op == "split.Tensor" || op == "split_with_sizes.default") {
    auto dim = static_cast<std::size_t>(dim_of(int_arg(node, "dim", 2, 0), rank));
    std::vector<AnchorView> parts;
    std::int64_t start = 0;
    for (const auto& out : node.outputs) {
      AnchorView part = src;
      part.offset += start * src.strides[dim];
      part.sizes[dim] = out.shape.at(dim);
      start += out.shape.at(dim);
      parts.push_back(part);
    }
    return parts;
  }
  const auto& shape = node.outputs[0].shape;
  if (op == "view.default" || op == "_unsafe_view.default" || op == "reshape.default") {
    auto strides = view_strides(src.sizes, src.strides, shape);
    if (!strides) {
      // reshape copies here: the output holds the view's elements in their logical order.
      if (op != "reshape.default" || numel(src.sizes) != numel(shape)) throw UnsupportedGroup(op + " copies here");
      v.copied = true;
      return {v};
    }
    v.sizes = shape;
    v.strides = *strides;
  } else if (op == "transpose.int" || op == "t.default") {
    if (rank < 2) throw UnsupportedGroup(op + " of a vector");
    auto d0 = static_cast<std::size_t>(op == "t.default" ? 0 : dim_of(int_arg(node, "dim0", 1, 0), rank));
    auto d1 = static_cast<std::size_t>(op == "t.default" ? 1 : dim_of(int_arg(node, "dim1", 2, 1), rank));
    std::swap(v.sizes[d0], v.sizes[d1]);
    std::swap(v.strides[d0], v.strides[d1]);
  } else if (op == "permute.default") {
    const NodeArg* a = find_arg(node, "dims", 1);
    if (!a || !a->constant.is_array() || a->constant.size() != rank) throw UnsupportedGroup("permute dims");
    for (std::size_t i = 0; i < rank; ++i) {
      auto from = static_cast<std::size_t>(dim_of(a->constant[i].get<std::int64_t>(), rank));
      v.sizes[i] = src.sizes[from];
      v.strides[i] = src.strides[from];
    }
  } else if (op == "slice.Tensor") {
    auto dim = static_cast<std::size_t>(dim_of(int_arg(node, "dim", 1, 0), rank));
    std::int64_t start = int_arg(node, "start", 2, 0), step = int_arg(node, "step", 4, 1);
    if (start < 0) start += src.sizes[dim];
    v.offset += std::clamp<std::int64_t>(start, 0, src.sizes[dim]) * src.strides[dim];
    v.strides[dim] *= step;
    v.sizes[dim] = shape.at(dim);
  } else if (op == "select.int") {
    auto dim = static_cast<std::size_t>(dim_of(int_arg(node, "dim", 1, 0), rank));
    std::int64_t index = int_arg(node, "index", 2, 0);
    if (index < 0) index += src.sizes[dim];
    v.offset += index * src.strides[dim];
    v.sizes.erase(v.sizes.begin() + static_cast<std::ptrdiff_t>(dim));
    v.strides.erase(v.strides.begin() + static_cast<std::ptrdiff_t>(dim));
  } else if (op == "unsqueeze.default") {
    auto dim = static_cast<std::size_t>(dim_of(int_arg(node, "dim", 1, 0), rank + 1));
    std::int64_t stride = dim < rank ? src.sizes[dim] * src.strides[dim] : 1;
    v.sizes.insert(v.sizes.begin() + static_cast<std::ptrdiff_t>(dim), 1);
    v.strides.insert(v.strides.begin() + static_cast<std::ptrdiff_t>(dim), stride);
  } else {
    throw UnsupportedGroup(op + " is not a view");
  }
  if (v.sizes != shape) throw UnsupportedGroup(op + ": the derived shape differs from the captured one");
  return {v};
}

// The strides agree with the ones recorded at capture (dimensions of size 1 have no meaningful one).
bool matches_capture(const AnchorView& v, const TensorInfo& t) {
  if (t.stride.empty()) return true;
  if (t.stride.size() != v.strides.size()) return false;
  for (std::size_t d = 0; d < v.sizes.size(); ++d)
    if (v.sizes[d] != 1 && v.strides[d] != t.stride[d]) return false;
  return true;
}

// Dimensions of more than one element, outermost (largest stride) first.
std::vector<std::size_t> by_stride(const AnchorView& v) {
  std::vector<std::size_t> dims;
  for (std::size_t d = 0; d < v.sizes.size(); ++d)
    if (v.sizes[d] != 1) dims.push_back(d);
  std::stable_sort(dims.begin(), dims.end(), [&](auto a, auto b) { return v.strides[a] > v.strides[b]; });
  return dims;
}

// No element is held twice: each stride exceeds the span of the dimensions inside it, so a flat
// index decodes into at most one coordinate tuple.
bool no_overlap(const AnchorView& v) {
  auto dims = by_stride(v);
  std::int64_t span = 0;
  for (auto it = dims.rbegin(); it != dims.rend(); ++it) {
    if (v.strides[*it] <= span) return false;
    span += v.strides[*it] * (v.sizes[*it] - 1);
  }
  return true;
}

}  // namespace

std::optional<std::vector<AnchorView>> anchor_views(const GroupContext& ctx) {
  const GraphNode* anchor = ctx.anchor();
  if (!anchor || anchor->outputs.size() != 1) return std::nullopt;
  const TensorInfo& result = anchor->outputs[0];
  std::map<std::string, AnchorView> views;
  AnchorView whole{result.shape, contiguous_strides(result.shape), 0};
  if (!matches_capture(whole, result)) return std::nullopt;  // eager's result is laid out otherwise
  views[result.name] = whole;
  try {
    for (const GraphNode* node : ctx.nodes_after_anchor()) {
      const NodeArg* self = find_arg(*node, "self", 0);
      if (!self || self->tensor.empty() || !views.count(self->tensor)) return std::nullopt;
      std::vector<AnchorView> made = apply(*node, views.at(self->tensor));
      for (std::size_t k = 0; k < made.size(); ++k) {
        if (!made[k].copied && !matches_capture(made[k], node->outputs[k])) return std::nullopt;
        views[node->outputs[k].name] = made[k];
      }
    }
  } catch (const UnsupportedGroup&) {
    return std::nullopt;
  }
  std::vector<AnchorView> out;
  for (const auto& o : ctx.outputs) {
    auto it = views.find(o.name);
    if (it == views.end() || !no_overlap(it->second)) return std::nullopt;
    out.push_back(it->second);
  }
  return out;
}

namespace {

// Statements decoding `var` (a non-negative C expression) into the coordinates of `dims` (outermost
// first) with strides `strides`: each coordinate is named c<d>; `rest` must reach zero. Unsigned
// 32-bit arithmetic where the values fit (constant divisions then compile to a multiply and shift).
std::string decode(const std::string& type, const std::string& rest, const std::string& var,
                   const std::vector<std::pair<std::size_t, std::int64_t>>& dims, const std::string& pad) {
  std::string code = fmt::format("{}  {} {} = {};\n", pad, type, rest, var);
  for (auto [d, stride] : dims) {
    if (stride == 1) {
      code += fmt::format("{}  const {} c{} = {};\n{}  {} = 0;\n", pad, type, d, rest, pad, rest);
      continue;
    }
    code += fmt::format("{p}  const {t} c{d} = {r} / {s}u;\n{p}  {r} -= c{d} * {s}u;\n", fmt::arg("p", pad),
                        fmt::arg("t", type), fmt::arg("d", d), fmt::arg("r", rest), fmt::arg("s", stride));
  }
  return code;
}

}  // namespace

std::string store_into_views(const std::vector<AnchorView>& views, const std::vector<std::string>& outputs,
                             const std::vector<std::string>& types, std::int64_t columns,
                             const std::string& value, int indent) {
  const std::string pad(static_cast<std::size_t>(indent), ' ');
  std::string code;
  for (std::size_t o = 0; o < views.size(); ++o) {
    const AnchorView& v = views[o];
    std::vector<std::string> coords(v.sizes.size(), "0");
    // A dimension steps through rows (its stride a multiple of the row length) or within a row.
    std::vector<std::pair<std::size_t, std::int64_t>> row_dims, col_dims;
    std::int64_t row_span = 0, col_span = 0;
    bool separable = v.offset >= 0;
    for (std::size_t d : by_stride(v)) {
      coords[d] = fmt::format("c{}", d);
      if (v.strides[d] % columns == 0) {
        row_dims.push_back({d, v.strides[d] / columns});
        row_span += v.strides[d] / columns * (v.sizes[d] - 1);
      } else {
        col_dims.push_back({d, v.strides[d]});
        col_span += v.strides[d] * (v.sizes[d] - 1);
      }
    }
    const std::int64_t row0 = v.offset / columns, col0 = v.offset % columns;
    separable = separable && col0 + col_span < columns && row0 + row_span < (std::int64_t{1} << 31);
    std::string bounds;
    for (std::size_t d : by_stride(v)) bounds += fmt::format(" && c{} < {}u", d, v.sizes[d]);
    std::string body, condition;
    if (separable) {
      body = decode("unsigned", "rest_row", fmt::format("unsigned(row - {})", row0), row_dims, pad) +
             decode("unsigned", "rest_col", fmt::format("unsigned(col - {})", col0), col_dims, pad);
      condition = fmt::format("row >= {} && col >= {} && rest_row == 0 && rest_col == 0", row0, col0);
    } else {  // the flat index of the element in the result, decoded in 64-bit arithmetic
      std::vector<std::pair<std::size_t, std::int64_t>> dims;
      for (std::size_t d : by_stride(v)) dims.push_back({d, v.strides[d]});
      std::string flat = fmt::format("(unsigned long long)(row * {}LL + col - {}LL)", columns, v.offset);
      body = decode("unsigned long long", "rest", flat, dims, pad);
      condition = fmt::format("row * {}LL + col >= {}LL && rest == 0", columns, v.offset);
    }
    code += fmt::format(
        "{p}{{  // {out}{shape}: the result's elements from {off} on, strides ({strides})\n"
        "{body}"
        "{p}  if ({condition}{bounds}) {out}[{index}] = nova::from_f<{type}>({value});\n"
        "{p}}}\n",
        fmt::arg("p", pad), fmt::arg("out", outputs[o]), fmt::arg("shape", GroupContext::shape_text(v.sizes)),
        fmt::arg("off", v.offset), fmt::arg("strides", fmt::join(v.strides, ", ")), fmt::arg("body", body),
        fmt::arg("condition", condition), fmt::arg("bounds", bounds),
        fmt::arg("index", ravel(coords, v.sizes)), fmt::arg("type", types[o]), fmt::arg("value", value));
  }
  return code;
}

}  // namespace nova
