#include "core/gen/window_reduce_rule.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace nova {
namespace {

// One thread walks at most this many input elements (a longer window is declined: too few results
// to spread the work over, and a long serial sum).
constexpr std::int64_t kMaxWindow = 4096;
constexpr int kThreads = 128;
// A reduction with few results and long windows (amax over (1, 3) of 32x128x32x32: 1,024 results of
// 4,096 elements; one thread each measured 0.10x eager on the H100, session 28) gets a block of
// kWideThreads per result instead, striding over the window, and a block reduction.
constexpr std::int64_t kWideSpan = 1024, kWideResults = 65536;
constexpr int kWideThreads = 256;
// A reduction over one dimension with at most kSplitResults results and windows of kSplitSpan or more
// (argmax over 128 channels of 32x128x32x32: 32,768 results, one thread each measured 0.94x eager on the
// H100, session 28 and 29, both far from a copy's speed) gets GenerationTarget::window_split_slices threads
// per result (4, or 8 in the alternative): each walks a contiguous slice of the window (warp s takes slice s
// of the block's 32 results, so every load stays coalesced), and the slices are combined in order through
// shared memory (sums in a fixed order; an extreme and its first position exactly as one walk finds them).
constexpr std::int64_t kSplitSpan = 64, kSplitResults = 65536;
constexpr int kDefaultSplitSlices = 4;
// The form with four results a lane (GenerationTarget::window_vec4): kVecSlices warps over the same 128
// results, each over a contiguous slice of the window, every load 16 bytes (a warp's load: 512 contiguous
// bytes where the split form reads 128).
constexpr int kVecSlices = 8;

enum class Combine { Sum, Mean, Max, Min };

// How one input dimension is walked: a loop over [lo, hi), or the result's coordinate as it is.
struct DimWalk {
  std::string coord;  // the input coordinate: a result coordinate, or the loop variable
  std::string setup;  // statements before the loop (bounds)
  std::string lo, hi;  // loop bounds; empty when the dimension is not walked
  std::string guard;   // a condition on the loop variable (dilated windows over padding)
  std::string divisor;  // this dimension's factor of an average's divisor
};

struct Window {
  std::string op;  // the anchor op without "aten."
  Combine combine = Combine::Sum;
  std::string input;
  std::vector<DimWalk> dims;  // one per input dimension
  std::int64_t span = 1;      // largest number of elements one result reads
  std::string divisor_override;
  // argmax / argmin and min / max along a dimension: the position of the first extreme element,
  // counted row-major over the reduced dimensions (one dimension's coordinate, or a flat index).
  bool indexed = false;
  std::string index;  // a C expression of the loop variables
};

const std::set<std::string>& pooling_ops() {
  static const std::set<std::string> ops = {
      "max_pool2d.default",          "max_pool3d.default",          "avg_pool2d.default",
      "avg_pool3d.default",          "adaptive_avg_pool2d.default", "adaptive_avg_pool3d.default",
      "_adaptive_avg_pool2d.default", "_adaptive_avg_pool3d.default", "adaptive_max_pool2d.default",
      "adaptive_max_pool3d.default"};
  return ops;
}

const std::set<std::string>& reduction_ops() {
  static const std::set<std::string> ops = {"sum.dim_IntList", "mean.dim", "amax.default", "amin.default",
                                            "min.dim", "max.dim", "argmax.default", "argmin.default"};
  return ops;
}

std::vector<std::int64_t> int_list(const GraphNode& n, const char* name, int pos, std::size_t k,
                                   std::vector<std::int64_t> fallback) {
  const NodeArg* a = find_arg(n, name, pos);
  std::vector<std::int64_t> v = fallback;
  if (a && a->constant.is_number()) v = {a->constant.get<std::int64_t>()};
  if (a && a->constant.is_array() && !a->constant.empty()) v = a->constant.get<std::vector<std::int64_t>>();
  if (v.size() == 1) v.assign(k, v[0]);
  if (v.size() != k) throw UnsupportedGroup(fmt::format("{}: '{}' does not have {} values", n.target, name, k));
  return v;
}

bool bool_arg(const GraphNode& n, const char* name, int pos, bool fallback) {
  const NodeArg* a = find_arg(n, name, pos);
  return a && a->constant.is_boolean() ? a->constant.get<bool>() : fallback;
}

Window reduction_window(const GraphNode& a, const std::vector<std::int64_t>& in, const std::vector<std::string>& out) {
  Window w;
  w.op = aten_op(a);
  w.combine = w.op == "sum.dim_IntList" ? Combine::Sum
              : w.op == "mean.dim"      ? Combine::Mean
              : (w.op == "amax.default" || w.op == "max.dim" || w.op == "argmax.default") ? Combine::Max
                                                                                           : Combine::Min;
  const bool keepdim = bool_arg(a, "keepdim", 2, false);
  const auto dims = reduced_dims(a, in.size());
  // The index among the reduced elements: row-major over the reduced dimensions.
  std::int64_t step = 1;
  for (auto d = dims.rbegin(); d != dims.rend(); ++d) {
    const std::string term = step == 1 ? fmt::format("w{}", *d) : fmt::format("w{} * {}LL", *d, step);
    w.index = w.index.empty() ? term : term + " + " + w.index;
    step *= in[static_cast<std::size_t>(*d)];
  }
  std::size_t j = 0;
  for (std::size_t d = 0; d < in.size(); ++d) {
    DimWalk walk;
    const bool reduced = std::find(dims.begin(), dims.end(), static_cast<std::int64_t>(d)) != dims.end();
    if (reduced) {
      walk.coord = fmt::format("w{}", d);
      walk.lo = "0";
      walk.hi = fmt::format("{}LL", in[d]);
      walk.divisor = fmt::format("{}", in[d]);
      w.span *= in[d];
      if (keepdim) ++j;
    } else {
      walk.coord = out.at(j++);
    }
    w.dims.push_back(walk);
  }
  return w;
}

// Pooling over the last k dimensions; the leading ones (batch, channels) pass through.
Window pooling_window(const GraphNode& a, const std::vector<std::int64_t>& in, const std::vector<std::string>& out) {
  Window w;
  w.op = aten_op(a);
  const std::size_t k = w.op.find("3d") != std::string::npos ? 3 : 2;
  if (in.size() < k + 1 || out.size() != in.size())
    throw UnsupportedGroup(fmt::format("{} on a tensor of {} dimensions", a.target, in.size()));
  const std::size_t lead = in.size() - k;
  const bool adaptive = w.op.find("adaptive") != std::string::npos;
  const bool max = w.op.find("max") != std::string::npos;
  w.combine = max ? Combine::Max : Combine::Mean;
  for (std::size_t d = 0; d < lead; ++d) w.dims.push_back(DimWalk{out[d], "", "", "", "", ""});
  std::vector<std::int64_t> kernel, stride, pad, dilation;
  bool count_include_pad = true;
  if (!adaptive) {
    kernel = int_list(a, "kernel_size", 1, k, {});
    stride = int_list(a, "stride", 2, k, kernel);
    pad = int_list(a, "padding", 3, k, {0});
    dilation = max ? int_list(a, "dilation", 4, k, {1}) : std::vector<std::int64_t>(k, 1);
    if (!max) {
      count_include_pad = bool_arg(a, "count_include_pad", 5, true);
      const NodeArg* o = find_arg(a, "divisor_override", 6);
      if (o && o->constant.is_number()) w.divisor_override = fmt::format("{}.0f", o->constant.get<std::int64_t>());
    }
  }
  const auto& out_shape = a.outputs.at(0).shape;
  for (std::size_t i = 0; i < k; ++i) {
    const std::size_t d = lead + i;
    const std::string o = out[d], v = fmt::format("w{}", d);
    const std::int64_t size = in[d];
    DimWalk walk;
    walk.coord = v;
    if (adaptive) {
      // PyTorch's adaptive windows: [floor(o * I / O), ceil((o + 1) * I / O)).
      const std::int64_t osz = out_shape[d];
      walk.setup = fmt::format(
          "  const long long lo{d} = ({o} * {I}LL) / {O}LL, hi{d} = (({o} + 1) * {I}LL + {O}LL - 1) / {O}LL;\n",
          fmt::arg("d", d), fmt::arg("o", o), fmt::arg("I", size), fmt::arg("O", osz));
      std::int64_t widest = 0;
      for (std::int64_t x = 0; x < osz; ++x)
        widest = std::max(widest, ((x + 1) * size + osz - 1) / osz - (x * size) / osz);
      w.span *= widest;
      walk.divisor = fmt::format("(hi{0} - lo{0})", d);
    } else if (max) {
      // Taps at o * stride - pad + t * dilation; taps in the padding are skipped.
      walk.setup = fmt::format("  const long long lo{d} = {o} * {s}LL - {p}LL;\n", fmt::arg("d", d),
                               fmt::arg("o", o), fmt::arg("s", stride[i]), fmt::arg("p", pad[i]));
      walk.coord = fmt::format("(lo{} + t{} * {}LL)", d, d, dilation[i]);
      walk.guard = fmt::format("{0} >= 0 && {0} < {1}LL", walk.coord, size);
      w.span *= kernel[i];
    } else {
      // PyTorch's average pool: the divisor counts the padding inside the input's padded extent
      // (count_include_pad) or only the taps inside the input.
      walk.setup = fmt::format(
          "  long long lo{d} = {o} * {s}LL - {p}LL, hi{d} = lo{d} + {K}LL < {I}LL + {p}LL ? lo{d} + {K}LL : {I}LL + {p}LL;\n"
          "  const long long pool{d} = hi{d} - lo{d};\n"
          "  lo{d} = lo{d} > 0 ? lo{d} : 0;\n  hi{d} = hi{d} < {I}LL ? hi{d} : {I}LL;\n",
          fmt::arg("d", d), fmt::arg("o", o), fmt::arg("s", stride[i]), fmt::arg("p", pad[i]),
          fmt::arg("K", kernel[i]), fmt::arg("I", size));
      walk.divisor = count_include_pad ? fmt::format("pool{}", d) : fmt::format("(hi{0} - lo{0})", d);
      w.span *= kernel[i];
    }
    if (max && !adaptive) {
      walk.lo = "0";
      walk.hi = fmt::format("{}LL", kernel[i]);
    } else {
      walk.lo = fmt::format("lo{}", d);
      walk.hi = fmt::format("hi{}", d);
    }
    w.dims.push_back(walk);
  }
  return w;
}

}  // namespace

bool WindowReduceRule::applies_to(const GraphNode& node) {
  const std::string op = aten_op(node);
  return pooling_ops().count(op) > 0 || reduction_ops().count(op) > 0;
}

std::string WindowReduceRule::positions_output(const GraphNode& node) {
  const std::string op = aten_op(node);
  if ((op == "argmax.default" || op == "argmin.default") && !node.outputs.empty()) return node.outputs[0].name;
  if ((op == "min.dim" || op == "max.dim") && node.outputs.size() > 1) return node.outputs[1].name;
  return "";
}

RuleOutput WindowReduceRule::generate(const GroupContext& ctx, const GraphNode& a) {
  const std::string op = aten_op(a);
  const NodeArg* in_arg = find_arg(a, "self", 0);
  if (!in_arg || in_arg->tensor.empty()) throw UnsupportedGroup(a.target + " without a tensor input");
  PointwiseEmitter probe(ctx.graph, ctx.group);
  const std::vector<std::int64_t> in_shape = probe.info(in_arg->tensor).shape;
  const TensorInfo& result = a.outputs.at(0);
  // The positions of the extremes: argmax / argmin's result, or the second result of min / max along
  // a dimension where the group hands it out (int64, stored as they are, no epilogue).
  const bool arg_op = op == "argmax.default" || op == "argmin.default";
  const std::string index_name = positions_output(a);
  int index_out = -1, value_out = -1;
  for (std::size_t k = 0; k < ctx.outputs.size(); ++k) {
    if (!index_name.empty() && ctx.outputs[k].name == index_name) {
      index_out = static_cast<int>(k);
    } else if (value_out < 0 && !arg_op) {
      value_out = static_cast<int>(k);
    } else {
      throw UnsupportedGroup(arg_op ? a.target + " with an epilogue on its indices"
                                    : "a reduction group with several outputs");
    }
  }
  if (value_out >= 0 && numel(ctx.outputs[static_cast<std::size_t>(value_out)].shape) != numel(result.shape))
    throw UnsupportedGroup("the epilogue of a reduced result changes its size");

  // The result's coordinates of this thread's element f, and the walk over its window.
  const std::vector<std::string> rc = unravel("f", result.shape);
  Window w = pooling_ops().count(op) ? pooling_window(a, in_shape, rc) : reduction_window(a, in_shape, rc);
  w.input = in_arg->tensor;
  w.indexed = index_out >= 0;
  if (w.span > kMaxWindow)
    throw UnsupportedGroup(fmt::format("{} reads up to {} elements per result; one thread per result walks at "
                                       "most {}",
                                       a.target, w.span, kMaxWindow));

  // The window's body: the prologue at the walked coordinates, then the combine step.
  PointwiseEmitter body(ctx.graph, ctx.group);
  ctx.bind_inputs(body);
  std::vector<std::string> coords;
  for (const auto& d : w.dims) coords.push_back(d.coord);
  const std::string v = body.value(w.input, coords);
  std::string loops, setup, guard, close;
  int depth = 1;
  for (std::size_t d = 0; d < w.dims.size(); ++d) {
    const DimWalk& walk = w.dims[d];
    setup += walk.setup;
    if (walk.hi.empty()) continue;
    const std::string var = walk.guard.empty() ? fmt::format("w{}", d) : fmt::format("t{}", d);
    loops += fmt::format("{}for (long long {v} = {lo}; {v} < {hi}; ++{v}) {{\n", std::string(2 * depth, ' '),
                         fmt::arg("v", var), fmt::arg("lo", walk.lo), fmt::arg("hi", walk.hi));
    if (!walk.guard.empty()) guard += (guard.empty() ? "" : " && ") + walk.guard;
    close = std::string(2 * depth, ' ') + "}\n" + close;
    ++depth;
  }
  const std::string pad(2 * depth, ' ');
  // One step of the walk, folding value `val` found at position `at` into acc (and idx); the split form
  // folds its slices' results with the same step.
  const auto fold = [&](const std::string& val, const std::string& at) {
    switch (w.combine) {
      case Combine::Sum:
      case Combine::Mean:
        return fmt::format("acc += {};", val);
      case Combine::Max:
      case Combine::Min:
        if (w.indexed)  // PyTorch's rule: the first extreme in the reduced order, and the first NaN (which stays)
          return fmt::format("{{ const float nova_v = {v}; if (nova_v {cmp} acc || (nova_v != nova_v && acc == acc)) "
                             "{{ acc = nova_v; idx = {i}; }} }}",
                             fmt::arg("v", val), fmt::arg("cmp", w.combine == Combine::Max ? ">" : "<"),
                             fmt::arg("i", at));
        return fmt::format("acc = nova::{}(acc, {});", w.combine == Combine::Max ? "maximumf_" : "minimumf_",
                           val);  // NaN propagates, as in PyTorch
    }
    return std::string();
  };
  const std::string step = fold(v, w.index);
  const std::int64_t count = numel(result.shape);
  // The form: one thread per result; a block per result (wide: few results, long windows); or split (one
  // walked dimension from 0 to the span, no guard, the span a multiple of the slices).
  enum class Form { Thread, Wide, Split } form = Form::Thread;
  const int slices = ctx.target.window_split_slices;
  int walked = 0;
  const DimWalk* only = nullptr;
  std::string only_var;  // its loop variable, named as the loops above name it
  for (std::size_t d = 0; d < w.dims.size(); ++d)
    if (!w.dims[d].hi.empty()) ++walked, only = &w.dims[d], only_var = fmt::format("w{}", d);
  // A reduction (not pooling) walking one dimension from 0 to the span with no guard: what the split and
  // four-results-a-lane forms can cut into slices.
  const bool one_full_walk = reduction_ops().count(op) > 0 && walked == 1 && only->guard.empty() &&
                             only->lo == "0" && only->hi == fmt::format("{}LL", w.span);
  if (reduction_ops().count(op) > 0) {
    if (!w.indexed && w.span >= kWideSpan && count < kWideResults)
      form = Form::Wide;
    else if (one_full_walk && w.span >= kSplitSpan && w.span % slices == 0 && count <= kSplitResults &&
             count % 32 == 0)
      form = Form::Split;
  }
  std::string inner;
  if (form == Form::Thread) {
    inner = body.take_code(static_cast<int>(2 * depth + (guard.empty() ? 0 : 2))) +
            std::string(2 * depth + (guard.empty() ? 0 : 2), ' ') + step + "\n";
    if (!guard.empty()) inner = fmt::format("{}if ({}) {{\n{}{}}}\n", pad, guard, inner, pad);
  } else {
    if (form == Form::Split) {
      const std::int64_t chunk = w.span / slices;
      loops = fmt::format("  for (long long {v} = nova_slice * {c}LL; {v} < (nova_slice + 1) * {c}LL; ++{v}) {{\n",
                          fmt::arg("v", only_var), fmt::arg("c", chunk));
    } else {
      // One loop over the window's flat index, unravelled over the reduced dimensions (row-major).
      std::string unravel_dims;
      std::int64_t stride = 1;
      for (std::size_t d = w.dims.size(); d-- > 0;) {
        if (w.dims[d].hi.empty()) continue;
        const std::int64_t size = in_shape[d];
        unravel_dims = fmt::format("    const long long w{} = (t / {}LL) % {}LL;\n", d, stride, size) + unravel_dims;
        stride *= size;
      }
      loops = fmt::format("  for (long long t = threadIdx.x; t < {}LL; t += {}LL) {{\n{}", w.span, kWideThreads,
                          unravel_dims);
    }
    inner = body.take_code(4) + "    " + step + "\n";
    close = "  }\n";
  }
  const char* init = w.combine == Combine::Max ? "-INFINITY" : w.combine == Combine::Min ? "INFINITY" : "0.0f";
  std::string divisor;
  if (w.combine == Combine::Mean) {
    if (!w.divisor_override.empty()) {
      divisor = w.divisor_override;
    } else {
      std::vector<std::string> factors;
      for (const auto& d : w.dims)
        if (!d.divisor.empty()) factors.push_back(d.divisor);
      divisor = fmt::format("(float)({})", factors.empty() ? std::string("1") : fmt::format("{}", fmt::join(factors, " * ")));
    }
  }
  const std::string reduced = w.combine == Combine::Mean ? fmt::format("acc / {}", divisor) : "acc";

  // The epilogue at the output's coordinates and the stores of result `flat` (f, or the vec4 form's
  // nova_fj); the output has the result's elements in the same order (the result itself, or a flattening
  // view of it), so both are at that flat index. `visited`: the group nodes the epilogue read.
  const auto stores_at = [&](const std::string& flat, int indent, std::set<int>& visited) {
    PointwiseEmitter epilogue(ctx.graph, ctx.group);
    ctx.bind_inputs(epilogue);
    const std::string pad(static_cast<std::size_t>(indent), ' ');
    std::string text;
    if (value_out >= 0) {
      const auto vo = static_cast<std::size_t>(value_out);
      const TensorInfo& out = ctx.outputs[vo];
      const std::vector<std::string> rf = unravel(flat, result.shape), oc = unravel(flat, out.shape);
      epilogue.note_flat(rf, result.shape, flat);
      epilogue.note_flat(oc, out.shape, flat);
      epilogue.bind_register(result.name, "reduced", rf);
      const std::string y = epilogue.value(out.name, oc);
      text = epilogue.take_code(indent) + fmt::format("{}{}[{}] = nova::from_f<{}>({});\n", pad, ctx.output_names[vo],
                                                      flat, ctx.output_storage_type(vo), y);
    }
    if (index_out >= 0)
      text += fmt::format("{}{}[{}] = idx;\n", pad, ctx.output_names[static_cast<std::size_t>(index_out)], flat);
    visited = epilogue.visited_nodes();
    return text;
  };
  std::set<int> epilogue_nodes;
  const std::string stores = stores_at("f", 2, epilogue_nodes);
  // Every group node must be on the path from the input through the reduction to the output.
  std::set<int> seen = body.visited_nodes();
  for (int id : epilogue_nodes) seen.insert(id);
  seen.insert(a.id);
  for (const GraphNode* n : ctx.nodes())
    if (!seen.count(n->id)) throw UnsupportedGroup(n->target + " is off the reduction's path");

  const std::string kind = op.substr(0, op.find('.'));
  const std::string name = fmt::format("nova_g{}_window_{}", ctx.group.id, kind);
  if (ctx.target.window_vec4) {
    // Four neighbouring results a lane: one walked dimension from 0 to the span with no guard, not the
    // input's last one (so results f .. f+3 read neighbouring elements of it), the input read as it is, and
    // 128 results a block.
    const std::size_t last = w.dims.size() - 1;
    if (form == Form::Wide || !one_full_walk || !w.dims[last].hi.empty() ||
        w.span % kVecSlices != 0 || w.span < 4 * kVecSlices || count % 128 != 0 || result.shape.empty() ||
        result.shape.back() % 4 != 0 || in_shape.back() != result.shape.back() || !setup.empty() ||
        ctx.input_index(w.input) < 0)
      throw UnsupportedGroup("the four-results-a-lane form does not apply");
    PointwiseEmitter lanes_body(ctx.graph, ctx.group);
    ctx.bind_inputs(lanes_body);
    std::vector<std::vector<std::string>> lanes(4, coords);
    for (int j = 1; j < 4; ++j) lanes[static_cast<std::size_t>(j)][last] = fmt::format("({} + {}LL)", coords[last], j);
    if (!lanes_body.load_lanes_float4(w.input, in_shape, lanes))
      throw UnsupportedGroup("the four-results-a-lane form does not apply: no 16-byte read of the input");
    std::vector<std::string> vals;
    for (const auto& lane : lanes) vals.push_back(lanes_body.value(w.input, lane));
    const std::string walk_code = lanes_body.take_code(4);
    // The epilogue and stores of result nova_fj.
    std::set<int> unused;
    const std::string stores_j = stores_at("nova_fj", 4, unused);
    const std::string in_param = ctx.input_names[static_cast<std::size_t>(ctx.input_index(w.input))];
    const std::int64_t chunk = w.span / kVecSlices;
    const std::string refs = w.indexed ? " long long& idx = nova_idx[j];" : "";
    RuleOutput v4;
    v4.rule = "window_reduce_vec4";
    v4.kernels = fmt::format(
        "// {a} of {ins} into {outs}: four neighbouring result elements a lane, read with\n"
        "// 16-byte loads, {S} lanes per four results ({count} results), each over a contiguous slice of {c} of the\n"
        "// window of {span}, the slices combined in order, then the epilogue and one store per result.\n"
        "extern \"C\" __global__ void __launch_bounds__({T}) {name}(\n    {params}) {{\n"
        "  __shared__ float nova_part[{S}][4][32];\n{part_idx}"
        "  if (!nova::aligned16({in})) __trap();  // 16-byte loads: fresh tensors always are\n"
        "  const int nova_slice = threadIdx.x >> 5, nova_lane = threadIdx.x & 31;\n"
        "  const long long f = (blockIdx.x * 32LL + nova_lane) * 4LL;  // the lane's first result\n"
        "  float nova_acc[4] = {{{init}, {init}, {init}, {init}}};\n{idx_init}"
        "  for (long long {v} = nova_slice * {c}LL; {v} < (nova_slice + 1) * {c}LL; ++{v}) {{\n"
        "{walk}"
        "    const float nova_q[4] = {{{q0}, {q1}, {q2}, {q3}}};\n"
        "#pragma unroll\n"
        "    for (int j = 0; j < 4; ++j) {{ float& acc = nova_acc[j];{refs} {fold_walk} }}\n"
        "  }}\n"
        "#pragma unroll\n"
        "  for (int j = 0; j < 4; ++j) {{\n    nova_part[nova_slice][j][nova_lane] = nova_acc[j];\n{keep}  }}\n"
        "  __syncthreads();\n  if (nova_slice != 0) return;\n"
        "#pragma unroll\n"
        "  for (int j = 0; j < 4; ++j) {{\n"
        "    float acc = nova_acc[j];\n{idx_take}"
        "#pragma unroll\n"
        "    for (int s = 1; s < {S}; ++s) {fold_slices}\n"
        "    const long long nova_fj = f + j;\n"
        "    const float reduced = {reduced};\n    (void)reduced;\n"
        "{stores}  }}\n}}\n\n",
        fmt::arg("a", a.target), fmt::arg("ins", GroupContext::shape_text(in_shape)),
        fmt::arg("outs", GroupContext::shape_text(result.shape)), fmt::arg("S", kVecSlices), fmt::arg("count", count),
        fmt::arg("c", chunk), fmt::arg("span", w.span), fmt::arg("T", 32 * kVecSlices), fmt::arg("name", name),
        fmt::arg("params", ctx.kernel_params()),
        fmt::arg("part_idx", w.indexed ? fmt::format("  __shared__ long long nova_part_idx[{}][4][32];\n", kVecSlices) : ""),
        fmt::arg("in", in_param), fmt::arg("init", init),
        fmt::arg("idx_init", w.indexed ? "  long long nova_idx[4] = {0, 0, 0, 0};\n" : ""), fmt::arg("v", only_var),
        fmt::arg("walk", walk_code), fmt::arg("q0", vals[0]), fmt::arg("q1", vals[1]), fmt::arg("q2", vals[2]),
        fmt::arg("q3", vals[3]), fmt::arg("refs", refs), fmt::arg("fold_walk", fold("nova_q[j]", w.index)),
        fmt::arg("keep", w.indexed ? "    nova_part_idx[nova_slice][j][nova_lane] = nova_idx[j];\n" : ""),
        fmt::arg("idx_take", w.indexed ? "    long long idx = nova_idx[j];\n" : ""),
        fmt::arg("fold_slices", fold("nova_part[s][j][nova_lane]", "nova_part_idx[s][j][nova_lane]")),
        fmt::arg("reduced", reduced), fmt::arg("stores", stores_j));
    v4.plan = ctx.base_plan();
    PlanStep s4;
    s4.type = "kernel";
    s4.kernel = name;
    s4.grid = {count / 128, 1, 1};
    s4.block = {32 * kVecSlices, 1, 1};
    s4.args = ctx.plan_args();
    v4.plan.steps.push_back(s4);
    v4.notes = fmt::format("{} results, four a lane with 16-byte loads, {} lanes each over a slice of {} of a window of {} "
                           "elements", count, kVecSlices, chunk, w.span);
    return v4;
  }
  RuleOutput r;
  // Another slice count than the default is a rule of its own: a project keeps the newest version of each
  // rule per group, and both forms are measured.
  r.rule = form == Form::Split && slices != kDefaultSplitSlices ? fmt::format("window_reduce_split{}", slices)
                                                                : std::string("window_reduce");
  // The kernel: one thread per result walking its window, a block per result striding over it and a
  // block reduction (wide), or slices combined in order (split); the same body, epilogue and stores.
  const char* warp_op = w.combine == Combine::Max ? "warp_max" : w.combine == Combine::Min ? "warp_min" : "warp_sum";
  const std::string what = fmt::format("// {} of {} into {}: ", a.target, GroupContext::shape_text(in_shape),
                                       GroupContext::shape_text(result.shape));
  std::string how, first, combine, notes;
  std::int64_t threads = kThreads, blocks = (count + kThreads - 1) / kThreads;
  switch (form) {
    case Form::Thread:
      how = fmt::format("one thread per result element walks its window (up to {}\n// elements), then the epilogue "
                        "and one store.\n",
                        w.span);
      first = fmt::format("  const long long f = blockIdx.x * {}LL + threadIdx.x;\n  if (f >= {}LL) return;\n", kThreads,
                          count);
      notes = fmt::format("{} results, one thread each over a window of up to {} elements", count, w.span);
      break;
    case Form::Wide:
      threads = kWideThreads;
      blocks = count;
      how = fmt::format("a block of {} threads per result element ({} of them) strides\n// over its window of {} "
                        "elements, then a block reduction in a fixed order, the epilogue and one store.\n",
                        kWideThreads, count, w.span);
      first = fmt::format("  __shared__ float scratch[{}];\n  const long long f = blockIdx.x;\n", kWideThreads / 32);
      combine = fmt::format("  acc = nova::block_reduce<nova::{}>(acc, scratch, {});\n  if (threadIdx.x != 0) return;\n",
                            warp_op, init);
      notes = fmt::format("{} results, a block of {} threads each over a window of {} elements", count, kWideThreads,
                          w.span);
      break;
    case Form::Split:
      // 32 results a block (the lanes), a slice each warp; slice 0's threads combine the slices in order.
      threads = 32 * slices;
      blocks = count / 32;
      how = fmt::format("{} threads per result element ({} of them), each over a\n// contiguous slice of {} of its "
                        "window of {}, the slices combined in order, then the epilogue and one store.\n",
                        slices, count, w.span / slices, w.span);
      first = fmt::format("  __shared__ float nova_part[{s}][32];\n{ix}"
                          "  const long long f = blockIdx.x * 32LL + (threadIdx.x & 31);\n"
                          "  const int nova_slice = threadIdx.x >> 5, nova_lane = threadIdx.x & 31;\n",
                          fmt::arg("s", slices),
                          fmt::arg("ix", w.indexed ? fmt::format("  __shared__ long long nova_part_idx[{}][32];\n",
                                                                 slices)
                                                   : ""));
      combine = fmt::format(
          "  nova_part[nova_slice][nova_lane] = acc;\n{keep}  __syncthreads();\n  if (nova_slice != 0) return;\n"
          "#pragma unroll\n  for (int s = 1; s < {n}; ++s) {fold}\n",
          fmt::arg("keep", w.indexed ? "  nova_part_idx[nova_slice][nova_lane] = idx;\n" : ""),
          fmt::arg("n", slices), fmt::arg("fold", fold("nova_part[s][nova_lane]", "nova_part_idx[s][nova_lane]")));
      notes = fmt::format("{} results, {} threads each over a slice of {} of a window of {} elements", count,
                          slices, w.span / slices, w.span);
      break;
  }
  r.kernels = fmt::format(
      "{what}{how}extern \"C\" __global__ void __launch_bounds__({T}) {name}(\n    {params}) {{\n"
      "{first}{setup}  float acc = {init};\n{idx}{loops}{inner}{close}{combine}"
      "  const float reduced = {reduced};\n  (void)reduced;\n{stores}}}\n\n",
      fmt::arg("what", what), fmt::arg("how", how), fmt::arg("T", threads),
      fmt::arg("name", name), fmt::arg("params", ctx.kernel_params()), fmt::arg("first", first),
      fmt::arg("setup", setup), fmt::arg("init", init), fmt::arg("idx", w.indexed ? "  long long idx = 0;\n" : ""),
      fmt::arg("loops", loops), fmt::arg("inner", inner), fmt::arg("close", close), fmt::arg("combine", combine),
      fmt::arg("reduced", reduced), fmt::arg("stores", stores));
  r.plan = ctx.base_plan();
  PlanStep s;
  s.type = "kernel";
  s.kernel = name;
  s.grid = {blocks, 1, 1};
  s.block = {threads, 1, 1};
  s.args = ctx.plan_args();
  r.plan.steps.push_back(s);
  r.notes = std::move(notes);
  return r;
}

}  // namespace nova
