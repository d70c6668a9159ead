#include "core/gen/row_rule.h"

#include <algorithm>
#include <set>
#include <tuple>

#include <fmt/format.h>

namespace nova {
namespace {

// Rows of at most this many values per lane of a warp are held by one warp (see generate).
constexpr int kWarpRowFloats = 24;
constexpr int kRowsPerBlock = 8;
// Longer rows get a block, each thread kBlockRowItems steps (float4 vectors or elements) of the
// row, in blocks of at most kMaxRowThreads threads.
constexpr int kBlockRowItems = 2;
constexpr int kMaxRowThreads = 512;
// Longer rows take up to 1024 threads; a row needing more than this many steps per thread is declined.
constexpr int kMaxRowItems = 16;

enum class RowKind { Softmax, LogSoftmax, LogSumExp, Sum, Mean, Max, Min, LayerNorm, RmsNorm, GroupNorm };

struct RowSpec {
  RowKind kind;
  std::string input;                // the anchor's input tensor
  std::vector<std::int64_t> shape;  // its shape
  std::int64_t rows = 0, length = 0;
  bool per_row_output = false;  // the anchor's result has one value per row
  std::string weight, bias;     // norms
  double eps = 1e-5;
  std::int64_t groups = 1, channels = 1, spatial = 1;  // group norm
};

std::int64_t last_dims_reduced(const GraphNode& n, const std::vector<std::int64_t>& shape, const char* name,
                               int pos) {
  const NodeArg* d = find_arg(n, name, pos);
  std::vector<std::int64_t> dims;
  if (!d || d->constant.is_null()) {
    for (std::size_t i = 0; i < shape.size(); ++i) dims.push_back(static_cast<std::int64_t>(i));
  } else if (d->constant.is_number()) {
    dims.push_back(d->constant.get<std::int64_t>());
  } else {
    dims = d->constant.get<std::vector<std::int64_t>>();
  }
  std::int64_t rank = static_cast<std::int64_t>(shape.size());
  for (auto& x : dims) x = x < 0 ? x + rank : x;
  std::sort(dims.begin(), dims.end());
  for (std::size_t i = 0; i < dims.size(); ++i)
    if (dims[i] != rank - static_cast<std::int64_t>(dims.size()) + static_cast<std::int64_t>(i))
      throw UnsupportedGroup(fmt::format("{} over dimensions that are not the last ones", n.target));
  std::int64_t length = 1;
  for (auto x : dims) length *= shape[static_cast<std::size_t>(x)];
  return length;
}

RowSpec read_spec(const GraphNode& a, PointwiseEmitter& e) {
  RowSpec s{};
  std::string op = aten_op(a);
  const NodeArg* in = find_arg(a, "self", 0);
  if (!in) in = find_arg(a, "input", 0);
  if (!in || in->tensor.empty()) throw UnsupportedGroup(a.target + " without a tensor input");
  s.input = in->tensor;
  s.shape = e.info(s.input).shape;
  auto tensor_arg = [&](const char* name, int pos) {
    const NodeArg* x = find_arg(a, name, pos);
    return x && !x->tensor.empty() ? x->tensor : std::string();
  };
  auto eps_arg = [&](int pos, double fallback) {
    const NodeArg* x = find_arg(a, "eps", pos);
    return x && x->constant.is_number() ? x->constant.get<double>() : fallback;
  };
  if (op == "softmax.int" || op == "_softmax.default" || op == "log_softmax.int" ||
      op == "_log_softmax.default") {
    s.kind = op.find("log") != std::string::npos ? RowKind::LogSoftmax : RowKind::Softmax;
    s.length = last_dims_reduced(a, s.shape, "dim", 1);
    if (s.length != s.shape.back()) throw UnsupportedGroup("softmax over more than one dimension");
  } else if (op == "logsumexp.default" || op == "sum.dim_IntList" || op == "mean.dim" ||
             op == "amax.default" || op == "amin.default") {
    s.kind = op == "logsumexp.default" ? RowKind::LogSumExp
             : op == "sum.dim_IntList" ? RowKind::Sum
             : op == "mean.dim"        ? RowKind::Mean
             : op == "amax.default"    ? RowKind::Max
                                       : RowKind::Min;
    s.length = last_dims_reduced(a, s.shape, "dim", 1);
    s.per_row_output = true;
  } else if (op == "layer_norm.default" || op == "rms_norm.default") {
    s.kind = op == "layer_norm.default" ? RowKind::LayerNorm : RowKind::RmsNorm;
    const NodeArg* ns = find_arg(a, "normalized_shape", 1);
    if (!ns || !ns->constant.is_array()) throw UnsupportedGroup(a.target + " without a normalized_shape");
    s.length = 1;
    for (auto v : ns->constant) s.length *= v.get<std::int64_t>();
    s.weight = tensor_arg("weight", 2);
    if (s.kind == RowKind::LayerNorm) {
      s.bias = tensor_arg("bias", 3);
      s.eps = eps_arg(4, 1e-5);
    } else {
      s.eps = eps_arg(3, 1.1920928955078125e-07);  // torch uses the dtype's epsilon when eps is None
    }
  } else if (op == "group_norm.default") {
    s.kind = RowKind::GroupNorm;
    if (s.shape.size() < 2) throw UnsupportedGroup("group_norm needs a channel dimension");
    const NodeArg* g = find_arg(a, "num_groups", 1);
    s.groups = g && g->constant.is_number() ? g->constant.get<std::int64_t>() : 1;
    s.channels = s.shape[1];
    s.spatial = numel(s.shape) / (s.shape[0] * s.channels);
    s.length = s.channels / s.groups * s.spatial;
    s.weight = tensor_arg("weight", 2);
    s.bias = tensor_arg("bias", 3);
    s.eps = eps_arg(4, 1e-5);
  } else if (op == "instance_norm.default") {
    // Instance norm normalizes each (sample, channel) over space: group norm with one channel per group.
    const NodeArg* use_stats = find_arg(a, "use_input_stats", 5);
    if (use_stats && use_stats->constant.is_boolean() && !use_stats->constant.get<bool>())
      throw UnsupportedGroup("instance norm with running statistics: no row rule");
    if (s.shape.size() < 3) throw UnsupportedGroup("instance_norm needs a channel and a spatial dimension");
    s.kind = RowKind::GroupNorm;
    s.channels = s.groups = s.shape[1];
    s.spatial = numel(s.shape) / (s.shape[0] * s.channels);
    s.length = s.spatial;
    s.weight = tensor_arg("weight", 1);
    s.bias = tensor_arg("bias", 2);
    s.eps = eps_arg(7, 1e-5);
  } else if (op == "_native_batch_norm_legit_functional.default" || op == "_native_batch_norm_legit.default" ||
             op == "batch_norm.default") {
    throw UnsupportedGroup(
        "batch norm in training form: per-channel statistics over the batch and space plus the running "
        "statistics' update; no builtin rule (eager kept)");
  } else {
    throw UnsupportedGroup("no row rule for " + a.target);
  }
  s.rows = numel(s.shape) / s.length;
  return s;
}

// A dry run of an epilogue that broadcasts the per-row result `reduced` back over rows of `shape`:
// true when the output at an element's coordinates needs only the reduced value, the element's own
// input value and other tensors at the same coordinates (no views, no index-dependent ops).
bool epilogue_broadcasts_in_place(const GroupContext& ctx, const std::string& input, const std::string& reduced,
                                  const std::vector<std::int64_t>& shape) {
  PointwiseEmitter e(ctx.graph, ctx.group);
  ctx.bind_inputs(e);
  const auto coords = unravel("i", shape);
  e.bind_register(reduced, "reduced", e.broadcast_coords(reduced, shape, coords));
  e.preload(input, coords, "x");
  try {
    e.value(ctx.outputs[0].name, coords);
  } catch (const UnsupportedGroup&) {
    return false;
  }
  return e.coordinates_preserved();
}

}  // namespace

RuleOutput RowRule::generate(const GroupContext& ctx) {
  const GraphNode& a = *ctx.anchor();
  PointwiseEmitter probe(ctx.graph, ctx.group);
  ctx.bind_inputs(probe);
  RowSpec s = read_spec(a, probe);
  if (ctx.outputs.size() != 1) throw UnsupportedGroup("a row group with several outputs");
  const auto& anchor_out = a.outputs.at(0);
  // A per-row result whose epilogue broadcasts it back over its rows (x - x.mean(dims, keepdim=True)):
  // the output has the input's shape, each element computed from the row's reduced value and its own.
  const bool broadcast_back = s.per_row_output && ctx.outputs[0].shape == s.shape &&
                              anchor_out.shape.size() == s.shape.size();
  if (!s.per_row_output && !ctx.epilogue_preserves_coordinates())
    throw UnsupportedGroup("the epilogue moves data between positions");
  if (broadcast_back && !epilogue_broadcasts_in_place(ctx, s.input, anchor_out.name, s.shape))
    throw UnsupportedGroup("the epilogue of a per-row result moves data between positions");
  if (s.per_row_output && !broadcast_back && numel(ctx.outputs[0].shape) != s.rows)
    throw UnsupportedGroup("the epilogue of a per-row result changes its size");
  for (const auto* t : {&s.weight, &s.bias})
    if (!t->empty() && ctx.input_index(*t) < 0)
      throw UnsupportedGroup("a norm weight computed inside the group");

  // The prologue: can the row be read with 16-byte loads?
  PointwiseEmitter dry(ctx.graph, ctx.group);
  ctx.bind_inputs(dry);
  dry.value(s.input, unravel("f", s.shape));
  const bool vec = s.length % 4 == 0 && s.shape.back() % 4 == 0 && dry.coordinates_preserved() &&
                   ctx.outputs[0].dtype == "float32";
  const int W = vec ? 4 : 1;
  const std::int64_t slots = s.length / W + (s.length % W ? 1 : 0);
  // A row of at most kWarpRowFloats values per lane gets a warp: kRowsPerBlock rows per block,
  // shuffle reductions, no shared memory and no __syncthreads. Longer rows get a block of threads,
  // kBlockRowItems steps each (up to kMaxRowThreads threads, then more steps), and block-wide
  // reductions. Measured on the H200 for layernorm_gelu's rows of 1024 floats, cold (docs/perf-notes.md,
  // "row kernels v6"): a block of 128 threads with 2 vectors each 37.22-37.50 us; a warp per row
  // with 8 vectors per lane (revision 5) 37.98-38.14; 64 threads with 4 vectors 38.08; 256 threads
  // with one vector 40.43; two rows per block of 256 threads 38.21. softmax_rows' rows of 8192
  // floats keep revision 5's 512 threads with 4 vectors (92% of copy). Rows of 768 (mlp_block's
  // layer norm, "revision 7"): a warp per row with 6 vectors per lane 10.88 us against 11.78-12.03
  // for 96 threads with 2 vectors and 12.34 for 192 threads with one; rows of 512 (tiny_transformer)
  // a warp per row 6.88-6.98, 64 threads x 2 vectors 7.17, 128 x 1 6.98.
  // Both bounds count: values per lane (registers) and steps per lane (loads; an fp16 row is read one
  // element per step, so 768 of them would be 24 steps per lane).
  const std::int64_t lane_steps = (slots + 31) / 32;
  const bool warp_rows = lane_steps * W <= kWarpRowFloats && lane_steps <= kMaxRowItems;
  auto block_threads = [&](std::int64_t items_per_thread, std::int64_t most) {
    return static_cast<int>(std::clamp<std::int64_t>(
        ((slots + items_per_thread - 1) / items_per_thread + 31) / 32 * 32, 64, most));
  };
  int threads = warp_rows ? 32 : block_threads(kBlockRowItems, kMaxRowThreads);
  if (!warp_rows && (slots + threads - 1) / threads > kMaxRowItems)
    threads = block_threads(kMaxRowItems, 1024);
  const std::int64_t items = (slots + threads - 1) / threads;
  if (items > kMaxRowItems)
    throw UnsupportedGroup(fmt::format("rows of {} elements are longer than the row kernel holds", s.length));
  // No streaming cache hints (__ldcs/__stcs) on the loads or the store: on the H200 they made
  // softmax_rows 5% slower (docs/perf-notes.md, "kernels v2 measured").
  // Reductions: over the warp, or over the block through shared memory, each block reduction with
  // its own scratch row (one __syncthreads each); `nth` numbers a kernel's reductions from 0.
  int block_reductions = 0;
  auto reduce_op = [&](const char* op, const std::string& v, const char* identity, int nth) {
    block_reductions = std::max(block_reductions, nth + 1);
    return warp_rows ? fmt::format("nova::{}({})", op, v)
                     : fmt::format("nova::block_reduce<nova::{}>({}, scratch[{}], {})", op, v, nth, identity);
  };

  // Pass 1: prologue values of this thread's elements, kept in registers.
  std::string load;
  for (std::int64_t it = 0; it < items; ++it) {
    PointwiseEmitter e(ctx.graph, ctx.group);
    ctx.bind_inputs(e);
    std::string base = fmt::format("b{}", it);
    load += fmt::format(
        "  const long long j{it} = (tid + {it} * {T}) * {W}LL;\n"
        "  float x{it}[{W}];\n  if (j{it} < {L}LL) {{\n    const long long {base} = row * {L}LL + j{it};\n",
        fmt::arg("it", it), fmt::arg("T", threads), fmt::arg("W", W), fmt::arg("L", s.length),
        fmt::arg("base", base));
    std::vector<std::string> c0 = unravel(base, s.shape);
    e.note_flat(c0, s.shape, base);
    std::vector<std::vector<std::string>> lanes(static_cast<std::size_t>(W), c0);
    for (int l = 1; l < W; ++l)
      lanes[static_cast<std::size_t>(l)].back() = fmt::format("({} + {})", c0.back(), l);
    if (vec)
      for (const auto& t : dry.memory_reads())
        if (!e.load_lanes_float4(t, s.shape, lanes))
          throw UnsupportedGroup("a row input that cannot be read with 16-byte loads");
    std::vector<std::string> vals;
    for (int l = 0; l < W; ++l) vals.push_back(e.value(s.input, lanes[static_cast<std::size_t>(l)]));
    load += e.take_code(4);
    for (int l = 0; l < W; ++l)
      load += fmt::format("    x{}[{}] = {};\n", it, l, vals[static_cast<std::size_t>(l)]);
    load += "  }\n";
  }
  auto for_each = [&](const std::string& body) {  // body uses X (value), J (index in row), V (valid)
    std::string out;
    for (std::int64_t it = 0; it < items; ++it)
      for (int l = 0; l < W; ++l) {
        std::string x = fmt::format("x{}[{}]", it, l), j = fmt::format("(j{} + {})", it, l),
                    v = fmt::format("(j{} < {}LL)", it, s.length);
        std::string b = body;
        for (auto [from, to] : {std::pair<std::string, std::string>{"$X", x}, {"$J", j}, {"$V", v}})
          for (std::size_t p; (p = b.find(from)) != std::string::npos;) b.replace(p, from.size(), to);
        out += b;
      }
    return out;
  };

  // Pass 2: the reduction.
  std::string reduce;
  const std::string L = fmt::format("{}.0f", s.length);
  switch (s.kind) {
    case RowKind::Softmax:
    case RowKind::LogSoftmax:
    case RowKind::LogSumExp:
      reduce = "  float mx = -INFINITY;\n" + for_each("  if ($V) mx = fmaxf(mx, $X);\n") +
               "  mx = " + reduce_op("warp_max", "mx", "-INFINITY", 0) +
               ";\n"
               "  const float shift = mx == -INFINITY ? 0.0f : mx;  // a row of -inf stays finite here\n"
               "  float se = 0.0f;\n" +
               for_each("  if ($V) se += expf($X - shift);\n") +
               "  se = " + reduce_op("warp_sum", "se", "0.0f", 1) + ";\n";
      break;
    case RowKind::Sum:
    case RowKind::Mean:
      reduce = "  float acc = 0.0f;\n" + for_each("  if ($V) acc += $X;\n") +
               "  acc = " + reduce_op("warp_sum", "acc", "0.0f", 0) + ";\n";
      break;
    case RowKind::Max:
    case RowKind::Min: {
      bool mx = s.kind == RowKind::Max;
      reduce = fmt::format("  float acc = {};\n", mx ? "-INFINITY" : "INFINITY") +
               for_each(mx ? "  if ($V) acc = nova::maximumf_(acc, $X);\n"
                           : "  if ($V) acc = nova::minimumf_(acc, $X);\n") +
               "  acc = " + reduce_op(mx ? "warp_max" : "warp_min", "acc", mx ? "-INFINITY" : "INFINITY", 0) +
               ";\n";
      break;
    }
    case RowKind::LayerNorm:
    case RowKind::GroupNorm:
      reduce = "  float sum = 0.0f;\n" + for_each("  if ($V) sum += $X;\n") +
               "  const float mean = " + reduce_op("warp_sum", "sum", "0.0f", 0) + " / " + L +
               ";\n"
               "  float sq = 0.0f;\n" +
               for_each("  if ($V) sq += ($X - mean) * ($X - mean);\n") + "  const float rstd = rsqrtf(" +
               reduce_op("warp_sum", "sq", "0.0f", 1) + " / " + L + " + " +
               PointwiseEmitter::float_literal(s.eps) + ");\n";
      break;
    case RowKind::RmsNorm:
      reduce = "  float sq = 0.0f;\n" + for_each("  if ($V) sq += $X * $X;\n") +
               "  const float rstd = rsqrtf(" + reduce_op("warp_sum", "sq", "0.0f", 0) + " / " + L + " + " +
               PointwiseEmitter::float_literal(s.eps) + ");\n";
      break;
  }

  // Pass 3: the anchor's result, the epilogue, the store.
  std::string store;
  auto weight = [&](const std::string& index) {
    return s.weight.empty()
               ? std::string()
               : fmt::format(" * nova::to_f({}[{}])",
                             ctx.input_names[static_cast<std::size_t>(ctx.input_index(s.weight))], index);
  };
  auto bias = [&](const std::string& index) {
    return s.bias.empty()
               ? std::string()
               : fmt::format(" + nova::to_f({}[{}])",
                             ctx.input_names[static_cast<std::size_t>(ctx.input_index(s.bias))], index);
  };
  // With 16-byte rows, fp32 weights and biases of layer and RMS norms are read 16 bytes at a time too.
  auto vector_param = [&](const std::string& t) {
    return vec && !t.empty() && (s.kind == RowKind::LayerNorm || s.kind == RowKind::RmsNorm) &&
           probe.info(t).dtype == "float32";
  };
  const bool wvec = vector_param(s.weight), bvec = vector_param(s.bias);
  const std::string per_row_value = s.kind == RowKind::LogSumExp ? "(mx == -INFINITY ? mx : mx + logf(se))"
                                    : s.kind == RowKind::Mean    ? "acc / " + L
                                                                 : "acc";
  if (s.per_row_output && !broadcast_back) {
    PointwiseEmitter e(ctx.graph, ctx.group);
    ctx.bind_inputs(e);
    auto coords = unravel("row", anchor_out.shape);
    // Size-1 (keepdim) dimensions take coordinate 0; the rest unravel the row index.
    e.bind_register(anchor_out.name, "reduced", coords);
    std::string v = e.value(ctx.outputs[0].name, unravel("row", ctx.outputs[0].shape));
    store = fmt::format(
        "  if (tid == 0) {{\n    const float reduced = {};\n{}    {}[row] = nova::from_f<{}>({});\n  "
        "}}\n",
        per_row_value, e.take_code(4), ctx.output_names[0], ctx.output_storage_type(0), v);
  } else {
    // Every thread holds the row's reduced value (the reductions end on every lane).
    if (broadcast_back) store = fmt::format("  const float reduced = {};\n", per_row_value);
    for (std::int64_t it = 0; it < items; ++it) {
      PointwiseEmitter e(ctx.graph, ctx.group);
      ctx.bind_inputs(e);
      std::string base = fmt::format("b{}", it);
      std::vector<std::string> c0 = unravel(base, s.shape);
      std::vector<std::string> vals;
      std::string pre;
      static const char* comp[] = {"x", "y", "z", "w"};
      for (auto [on, t, var] : {std::tuple{wvec, s.weight, "wv"}, std::tuple{bvec, s.bias, "bv"}})
        if (on)
          pre += fmt::format("    const float4 {}{} = *reinterpret_cast<const float4*>({} + j{});\n", var, it,
                             ctx.input_names[static_cast<std::size_t>(ctx.input_index(t))], it);
      for (int l = 0; l < W; ++l) {
        std::vector<std::string> c = c0;
        if (l) c.back() = fmt::format("({} + {})", c0.back(), l);
        std::string x = fmt::format("x{}[{}]", it, l), j = fmt::format("(j{} + {})", it, l);
        if (broadcast_back) {
          // The reduced value where the epilogue's broadcast reads it; the row's own value from its register.
          e.bind_register(anchor_out.name, "reduced", e.broadcast_coords(anchor_out.name, s.shape, c));
          e.preload(s.input, c, x);
          vals.push_back(e.value(ctx.outputs[0].name, c));
          continue;
        }
        std::string y;
        switch (s.kind) {
          case RowKind::Softmax:
            y = fmt::format("expf({} - shift) / se", x);
            break;
          case RowKind::LogSoftmax:
            y = fmt::format("{} - shift - logf(se)", x);
            break;
          case RowKind::LayerNorm:
            y = fmt::format("({} - mean) * rstd{}{}", x,
                            wvec ? fmt::format(" * wv{}.{}", it, comp[l]) : weight(j),
                            bvec ? fmt::format(" + bv{}.{}", it, comp[l]) : bias(j));
            break;
          case RowKind::RmsNorm:
            y = fmt::format("{} * rstd{}", x, wvec ? fmt::format(" * wv{}.{}", it, comp[l]) : weight(j));
            break;
          case RowKind::GroupNorm: {
            std::string ch = fmt::format("((row % {}LL) * {}LL + {} / {}LL)", s.groups, s.channels / s.groups,
                                         j, s.spatial);
            y = fmt::format("({} - mean) * rstd{}{}", x, weight(ch), bias(ch));
            break;
          }
          default:
            break;
        }
        std::string var = fmt::format("y{}_{}", it, l);
        pre += fmt::format("    const float {} = {};\n", var, y);
        e.bind_register(anchor_out.name, var, c);
        vals.push_back(e.value(ctx.outputs[0].name, c));
      }
      std::string code = e.take_code(4);
      std::string write =
          vec ? fmt::format("    *{} = {};\n",
                            fmt::format("reinterpret_cast<float4*>({} + {})", ctx.output_names[0], base),
                            fmt::format("make_float4({}, {}, {}, {})", vals[0], vals[1], vals[2], vals[3]))
              : fmt::format("    {}[{}] = nova::from_f<{}>({});\n", ctx.output_names[0], base,
                            ctx.output_storage_type(0), vals[0]);
      store += fmt::format(
          "  if (j{it} < {L}LL) {{\n    const long long {base} = row * {L}LL + j{it};\n{pre}{code}{write}  "
          "}}\n",
          fmt::arg("it", it), fmt::arg("L", s.length), fmt::arg("base", base), fmt::arg("pre", pre),
          fmt::arg("code", code), fmt::arg("write", write));
    }
  }

  static const char* kind_names[] = {"softmax", "log_softmax", "logsumexp",  "sum",      "mean",
                                     "amax",    "amin",        "layer_norm", "rms_norm", "group_norm"};
  std::string kind = kind_names[static_cast<int>(s.kind)];
  std::string name = fmt::format("nova_g{}_row_{}", ctx.group.id, kind);
  RuleOutput out;
  out.rule = "row_" + kind;
  const int block = warp_rows ? 32 * kRowsPerBlock : threads;
  const std::string layout =
      warp_rows ? fmt::format("one warp per row, {} rows per block of {} threads, {} {} per lane",
                              kRowsPerBlock, block, items, vec ? "float4 vectors" : "elements")
                : fmt::format("one block of {} threads per row, {} {} per thread", threads, items,
                              vec ? "float4 vectors" : "elements");
  const std::string prologue = warp_rows
                                   ? fmt::format(
                                         "  const long long row = blockIdx.x * {R}LL + threadIdx.x / 32;\n"
                                         "  if (row >= {rows}LL) return;  // the whole warp leaves together\n"
                                         "  const int tid = threadIdx.x & 31;  // lane\n",
                                         fmt::arg("R", kRowsPerBlock), fmt::arg("rows", s.rows))
                                   : fmt::format(
                                         "  __shared__ float scratch[{}][32];  // one row per reduction\n"
                                         "  const long long row = blockIdx.x;\n"
                                         "  const int tid = threadIdx.x;\n",
                                         block_reductions);
  out.kernels = fmt::format(
      "// {kind} over rows of {L} elements ({rows} rows): {layout},\n"
      "// held in registers between the passes; the row is read once and written once{how}.\n"
      "extern \"C\" __global__ void __launch_bounds__({B}) {name}(\n    {params}) {{\n"
      "{prologue}{load}{reduce}{store}}}\n\n",
      fmt::arg("kind", kind), fmt::arg("L", s.length), fmt::arg("rows", s.rows), fmt::arg("layout", layout),
      fmt::arg("how", warp_rows ? ", reductions are warp shuffles" : ""), fmt::arg("B", block),
      fmt::arg("name", name), fmt::arg("params", ctx.kernel_params()), fmt::arg("prologue", prologue),
      fmt::arg("load", load), fmt::arg("reduce", reduce), fmt::arg("store", store));
  out.plan = ctx.base_plan();
  PlanStep step;
  step.type = "kernel";
  step.kernel = name;
  step.grid = {warp_rows ? (s.rows + kRowsPerBlock - 1) / kRowsPerBlock : s.rows, 1, 1};
  step.block = {block, 1, 1};
  step.args = ctx.plan_args();
  out.plan.steps.push_back(step);
  out.notes = fmt::format("{} rows of {} elements, {}", s.rows, s.length, layout);
  return out;
}

}  // namespace nova
