#pragma once
// Model graphs built in code, for the graph view's tests and benchmark and for demos without a
// Python worker: the seed example (conv2d -> min -> add -> mul) and a transformer-like model of a
// chosen size with nested nn.Module scopes ("layers.N.attn.q_proj"), realistic ATen ops and shapes.
#include "core/graph/model_graph.h"

namespace nova {

// Mirrors examples/conv2d_min_add_multiply.py as intake captures it: x -> convolution(weight,
// bias) -> minimum(constant) -> add(bias) -> mul(scale), one "conv+epilogue" fusion group.
ModelGraph make_seed_demo_graph();

// A decoder-only transformer with exactly `node_count` nodes (at least 50): an embedding add,
// N blocks of 43 ops (layer norm, attention with q/k/v/o projections, MLP, residual adds), a final
// norm and an LM head, padded with head elementwise ops. Each MLP's fc1 + GELU is a fusion group.
ModelGraph make_transformer_graph(int node_count);

}  // namespace nova
