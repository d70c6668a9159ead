#pragma once
// A GEMM node's problem as the builtin rules read it: C[b, m, n] = sum_k A(b, m, k) * B(b, k, n)
// (+ bias[n]) for linear / addmm / mm / bmm / matmul. Shared by GemmRule and GemmTf32x3Rule.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/gen/group_context.h"
#include "core/gen/pointwise_emitter.h"
#include "core/graph/model_graph.h"

namespace nova {

// What a GEMM node computes, read from its node and its tensors' shapes.
struct GemmShape {
  std::int64_t batch = 1, m = 0, n = 0, k = 0;
  std::string a, b, bias;      // tensor names (bias: "" where none)
  bool b_transposed = false;   // B stored as [n, k] (a linear weight)
  // A's leading dimensions are all rows of one [m, k] matrix (linear, and matmul of a batched A by a
  // 2-D B): the output's coordinates are (rows..., col), not (batch..., row, col).
  bool rows_flattened = false;
  double alpha = 1, beta = 1;  // addmm
  std::vector<std::int64_t> out_shape;
  std::string result;          // the product's tensor name

  // Binds the product to the register `gemm` at its output coordinates (row and col, and bat for
  // batched products, as C variables of the kernel) and emits the group's epilogue from it: returns
  // the statements (indented by `indent`) and the expression of the group's output.
  std::pair<std::string, std::string> epilogue_on_register(const GroupContext& ctx, PointwiseEmitter& e,
                                                           int indent) const;

  // Throws UnsupportedGroup for what no rule handles: a missing tensor operand, an addmm with a
  // bias that is not a vector, batch dimensions that broadcast, an op that is not a GEMM.
  static GemmShape read(const GraphNode& g, const PointwiseEmitter& e);
};

}  // namespace nova
