#include "core/gen/gemm_row_reduce_rule.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "core/gen/gemm_operand.h"
#include "core/gen/gemm_shape.h"
#include "core/gen/tensor_core_tile.h"

namespace nova {
namespace {

// The block's rows and the width of each column tile (the 64x64 tensor-core tiles), and the row
// stride of the staged tile: with 66 floats, lane l reading column 2j + (l & 1) of row l / 2 hits
// bank (2 * (l / 2) + (l & 1) + 2j) % 32, a different bank per lane.
constexpr std::int64_t kRows = 64, kCols = 64, kStageLd = 66;

enum class Reduce { LogSumExp, Sum, Mean, Max, Min };

struct ReduceOp {
  Reduce kind;
  const char* name;
};

ReduceOp reduce_op(const GraphNode& r) {
  const std::string op = r.target.rfind("aten.", 0) == 0 ? r.target.substr(5) : r.target;
  if (op == "logsumexp.default") return {Reduce::LogSumExp, "logsumexp"};
  if (op == "sum.dim_IntList") return {Reduce::Sum, "sum"};
  if (op == "mean.dim") return {Reduce::Mean, "mean"};
  if (op == "amax.default") return {Reduce::Max, "amax"};
  if (op == "amin.default") return {Reduce::Min, "amin"};
  throw UnsupportedGroup(fmt::format("{} after a GEMM in one group: no fused rule for it", r.target));
}

// The reduced dimensions must be exactly the last one (a row of the product).
void require_last_dimension(const GraphNode& r, std::size_t rank) {
  const NodeArg* d = find_arg(r, "dim", 1);
  std::vector<std::int64_t> dims;
  if (d && d->constant.is_number()) dims = {d->constant.get<std::int64_t>()};
  if (d && d->constant.is_array()) dims = d->constant.get<std::vector<std::int64_t>>();
  for (auto& x : dims) x = x < 0 ? x + static_cast<std::int64_t>(rank) : x;
  if (dims.size() != 1 || dims[0] != static_cast<std::int64_t>(rank) - 1)
    throw UnsupportedGroup(fmt::format("{} over dimensions other than the product's last", r.target));
}

// The running per-row state: its declaration, the update with one value v, the combination with
// the partner lane (the other half of the row's columns) and the final value.
struct Running {
  std::string init, update, combine, result;
};

Running running(Reduce kind, std::int64_t n) {
  switch (kind) {
    case Reduce::LogSumExp:
      // Online log-sum-exp: a running maximum and the sum of exp(v - maximum), rescaled when the
      // maximum grows; -inf values add nothing, equal infinities add 1, a NaN makes the result NaN.
      return {"  float run_m = -INFINITY, run_s = 0.0f;\n  bool run_nan = false;\n",
              "      if (v != v) run_nan = true;\n"
              "      else if (v > run_m) { run_s = (run_m == -INFINITY ? 0.0f : run_s * expf(run_m - v)) + 1.0f; run_m = v; }\n"
              "      else if (v > -INFINITY) run_s += v == run_m ? 1.0f : expf(v - run_m);\n",
              "  const float other_m = __shfl_xor_sync(0xffffffffu, run_m, 1);\n"
              "  const float other_s = __shfl_xor_sync(0xffffffffu, run_s, 1);\n"
              "  run_nan = __shfl_xor_sync(0xffffffffu, run_nan ? 1 : 0, 1) != 0 || run_nan;\n"
              "  const float row_m = fmaxf(run_m, other_m);\n"
              "  const float row_s = (run_m == row_m ? run_s : run_s * expf(run_m - row_m)) +\n"
              "                      (other_m == row_m ? other_s : other_s * expf(other_m - row_m));\n",
              "run_nan ? __int_as_float(0x7fffffff) : (row_m == -INFINITY ? -INFINITY : row_m + logf(row_s))"};
    case Reduce::Sum:
    case Reduce::Mean:
      return {"  float run_s = 0.0f;\n", "      run_s += v;\n",
              "  const float row_s = run_s + __shfl_xor_sync(0xffffffffu, run_s, 1);\n",
              kind == Reduce::Sum ? "row_s" : fmt::format("row_s / {}.0f", n)};
    case Reduce::Max:
    case Reduce::Min: {
      const char* f = kind == Reduce::Max ? "nova::maximumf_" : "nova::minimumf_";  // NaN propagates
      return {fmt::format("  float run_m = {};\n", kind == Reduce::Max ? "-INFINITY" : "INFINITY"),
              fmt::format("      run_m = {}(run_m, v);\n", f),
              fmt::format("  const float row_m = {}(run_m, __shfl_xor_sync(0xffffffffu, run_m, 1));\n", f), "row_m"};
    }
  }
  return {};
}

}  // namespace

const GraphNode* GemmRowReduceRule::row_reduction(const GroupContext& ctx) {
  for (const GraphNode* n : ctx.nodes())
    if (n->op_class == OpClass::Reduction) return n;
  return nullptr;
}

RuleOutput GemmRowReduceRule::generate(const GroupContext& ctx, const GraphNode& r) {
  const GraphNode& g = *ctx.anchor();
  PointwiseEmitter probe(ctx.graph, ctx.group);
  ctx.bind_inputs(probe);
  const GemmShape s = GemmShape::read(g, probe);
  const ReduceOp op = reduce_op(r);
  const NodeArg* in = find_arg(r, "self", 0);
  if (!in || in->tensor.empty()) throw UnsupportedGroup(r.target + " without a tensor input");
  const std::string x = in->tensor;
  if (probe.info(x).shape != s.out_shape)
    throw UnsupportedGroup(fmt::format("{} reads the product through a view", r.target));
  require_last_dimension(r, s.out_shape.size());
  if (ctx.outputs.size() != 1) throw UnsupportedGroup("a GEMM and row reduction group with several outputs");
  const std::int64_t rows = s.batch * s.m;
  if (numel(ctx.outputs[0].shape) != rows)
    throw UnsupportedGroup("the group's result is not one value per row of the product");

  // The 3xTF32 tile's terms: fp32 operands in place, 64-row tiles, K in 32-wide steps.
  if (ctx.outputs[0].dtype != "float32" || probe.info(s.a).dtype != "float32" || probe.info(s.b).dtype != "float32" ||
      (!s.bias.empty() && probe.info(s.bias).dtype != "float32"))
    throw UnsupportedGroup("the fused GEMM and row reduction is for fp32 (3xTF32)");
  if (s.alpha != 1.0 || s.beta != 1.0) throw UnsupportedGroup("an addmm with alpha or beta: no fused row rule");
  if (s.m % kRows || s.n % kCols || s.k % 32)
    throw UnsupportedGroup(fmt::format("the product {}x{}x{} is not in whole 64x64 tiles and 32-wide steps of K",
                                       s.m, s.n, s.k));
  GemmOperand a = GemmOperand::resolve(ctx, s.a), b = GemmOperand::resolve(ctx, s.b);
  if (a.computed || b.computed || a.mask != GemmOperand::Mask::none || b.mask != GemmOperand::Mask::none ||
      (!s.bias.empty() && ctx.input_index(s.bias) < 0))
    throw UnsupportedGroup("an operand computed inside the group: the fused row rule reads operands in place");
  if (a.strides.back() != 1) throw UnsupportedGroup("A's rows are not contiguous along K");
  bool kn = false;
  std::int64_t ldb = 0;
  if (!b.b_layout(s.b_transposed, kn, ldb)) throw UnsupportedGroup("B is contiguous along neither K nor N");
  const std::int64_t lda = s.rows_flattened ? a.row_stride() : a.strides[a.strides.size() - 2];
  const std::int64_t sa = s.batch == 1 ? 0 : a.batch_stride(), sb = s.batch == 1 ? 0 : b.batch_stride();
  for (std::int64_t v : {lda, ldb, sa, sb})
    if (v < 0 || v % 4 != 0) throw UnsupportedGroup("an operand's strides are not whole 16-byte steps");
  if (lda >= (std::int64_t{1} << 31) || ldb >= (std::int64_t{1} << 31) || s.m / kRows > 65535 ||
      s.batch > 65535)
    throw UnsupportedGroup("the product is past the tile's int strides or the grid's limits");

  // The product's coordinates in the kernel: (row..., col) for a linear layer's flattened rows,
  // (bat..., row, col) for a batched product.
  std::vector<std::string> coords, row_coords;
  if (s.rows_flattened) {
    coords = unravel("row", std::vector<std::int64_t>(s.out_shape.begin(), s.out_shape.end() - 1));
  } else {
    coords = unravel("bat", std::vector<std::int64_t>(s.out_shape.begin(), s.out_shape.end() - 2));
    coords.push_back("row");
  }
  row_coords = coords;
  coords.push_back("col");
  const TensorInfo& reduced = r.outputs.at(0);
  if (reduced.shape.size() == s.out_shape.size()) row_coords.push_back("0");  // keepdim
  if (numel(reduced.shape) != rows) throw UnsupportedGroup(r.target + " does not give one value per row");

  // Before the reduction: the elementwise ops on each product element (scale, masks), at its own
  // coordinates.
  PointwiseEmitter before(ctx.graph, ctx.group);
  ctx.bind_inputs(before);
  before.bind_register(s.result, "gemm", coords);
  const std::string xv = before.value(x, coords);
  if (!before.reads_in_place()) throw UnsupportedGroup("the ops between the product and its reduction move data");
  const std::string before_code = before.take_code(6);
  // After it: the elementwise ops on each row's value.
  PointwiseEmitter after(ctx.graph, ctx.group);
  ctx.bind_inputs(after);
  after.bind_register(reduced.name, "reduced", row_coords);
  const std::string yv = after.value(ctx.outputs[0].name, row_coords);
  if (!after.reads_in_place() || ctx.outputs[0].shape != reduced.shape)
    throw UnsupportedGroup("the ops after the row reduction move data");
  const std::string after_code = after.take_code(4);
  std::set<int> seen = before.visited_nodes();
  for (int id : after.visited_nodes()) seen.insert(id);
  seen.insert(g.id);
  seen.insert(r.id);
  for (const GraphNode* n : ctx.nodes()) {
    if (n->id == g.id) break;
    seen.insert(n->id);  // the operands' views (resolved above: views of group inputs, read in place)
  }
  for (const GraphNode* n : ctx.nodes())
    if (!seen.count(n->id)) throw UnsupportedGroup(n->target + " is off the path from the product to its row values");

  const auto name_of_input = [&](const std::string& t) {
    return ctx.input_names[static_cast<std::size_t>(ctx.input_index(t))];
  };
  const std::string pa = name_of_input(a.input), pb = name_of_input(b.input);
  const std::string bias = s.bias.empty() ? "" : fmt::format(" + nova::to_f({}[col])", name_of_input(s.bias));
  const TensorCoreTile& tile = kn ? kTf32x3Kn_64x64 : kTf32x3_64x64;
  const std::int64_t tile_smem = tile.smem_bytes;
  const std::int64_t smem = tile_smem + kRows * kStageLd * 4;
  const Running run = running(op.kind, s.n);
  const std::string name = fmt::format("nova_g{}_gemm_row_{}", ctx.group.id, op.name);
  const std::string at_a = s.batch > 1 && sa ? fmt::format(" + bat * {}LL", sa) : "";
  const std::string at_b = s.batch > 1 && sb ? fmt::format(" + bat * {}LL", sb) : "";
  const std::string out_index = s.rows_flattened || s.batch == 1 ? "row" : fmt::format("bat * {}LL + row", s.m);

  RuleOutput out;
  out.rule = fmt::format("gemm_row_{}", op.name);
  out.kernels = fmt::format(
      R"(#include "nova/gemm_tf32x3.cuh"

// {op} over the rows of C = {batch}A[{m}x{k}] * B[{k}x{n}] (+ the elementwise ops before and after),
// the product never stored: each block takes 64 rows and walks their {tiles} column tiles of 64 on
// tensor cores through the 3xTF32 split (fp32-accurate; kernels/nova/gemm_tf32x3.cuh), stages each
// tile in shared memory and folds it into running per-row values (two threads per row, each the
// tile's even or odd columns, in column order), then combines the two halves and stores one value
// per row. Deterministic: the order of every sum is fixed.
extern "C" __global__ void __launch_bounds__(128, 2) {name}(
    {params}) {{
  if (!nova::aligned16({pa}, {pb})) __trap();  // cp.async moves 16 bytes: fresh tensors always are
  extern __shared__ float4 nova_smem[];
  float* const nova_stage = reinterpret_cast<float*>(nova_smem) + {stage_at};  // [64][{ld}]
  const long long bat = blockIdx.z;
  (void)bat;
  const int m0 = blockIdx.x * 64;
  const int mine = threadIdx.x >> 1, half = threadIdx.x & 1;  // this thread's row of the block, its columns
{init}  {alias} tile;
  for (int n0 = 0; n0 < {n}; n0 += 64) {{
    tile.{mainloop}({pa}{at_a}, {lda}, {pb}{at_b}, {ldb}, {k}, m0, n0, nova_smem);
    tile.for_each([&](int row_index, int col_index, float acc) {{
      const long long row = row_index, col = col_index;
      const float gemm = acc{bias};
{before}      nova_stage[(row_index - m0) * {ld} + (col_index - n0)] = {xv};
    }});
    __syncthreads();
#pragma unroll 8
    for (int j = 0; j < 32; ++j) {{
      const float v = nova_stage[mine * {ld} + 2 * j + half];
{update}    }}
    __syncthreads();  // the tile is read before the next one is staged
  }}
{combine}  if (half == 0) {{
    const long long row = m0 + mine;
    const float reduced = {result};
{after}    {outp}[{out_index}] = nova::from_f<{otype}>({yv});
  }}
}}

)",
      fmt::arg("op", op.name), fmt::arg("batch", s.batch > 1 ? fmt::format("{} x ", s.batch) : ""),
      fmt::arg("m", s.m), fmt::arg("k", s.k), fmt::arg("n", s.n), fmt::arg("tiles", s.n / kCols),
      fmt::arg("name", name), fmt::arg("params", ctx.kernel_params()), fmt::arg("pa", pa), fmt::arg("pb", pb),
      fmt::arg("stage_at", tile_smem / 4), fmt::arg("ld", kStageLd), fmt::arg("init", run.init),
      fmt::arg("alias", tile.alias), fmt::arg("mainloop", kn ? "mainloop_kn" : "mainloop_at"), fmt::arg("at_a", at_a),
      fmt::arg("lda", lda), fmt::arg("at_b", at_b), fmt::arg("ldb", ldb), fmt::arg("bias", bias),
      fmt::arg("before", before_code), fmt::arg("xv", xv), fmt::arg("update", run.update),
      fmt::arg("combine", run.combine), fmt::arg("result", run.result), fmt::arg("after", after_code),
      fmt::arg("outp", ctx.output_names[0]), fmt::arg("out_index", out_index),
      fmt::arg("otype", ctx.output_storage_type(0)), fmt::arg("yv", yv));
  out.plan = ctx.base_plan();
  PlanStep step;
  step.type = "kernel";
  step.kernel = name;
  step.grid = {s.m / kRows, 1, s.batch};
  step.block = {128, 1, 1};
  step.shared_bytes = smem;
  step.args = ctx.plan_args();
  out.plan.steps.push_back(step);
  out.notes = fmt::format(
      "GEMM and {} over its rows in one kernel: {} blocks of 64 rows, each over {} column tiles of 64 on tensor "
      "cores (3xTF32), {:.3g} M multiply-adds; the {}x{} product is never stored",
      op.name, step.grid[0] * step.grid[2], s.n / kCols, double(s.batch) * s.m * s.n * s.k / 1e6, rows, s.n);
  return out;
}

}  // namespace nova
