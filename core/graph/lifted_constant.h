#pragma once
// Whether a graph input recorded as a parameter is a constant torch.export lifted: a tensor the
// forward makes itself (torch.tensor(0.5)) becomes c_<name>. The graph reads it like a buffer, and
// generators and validation receive it like one, but it is not in the model's state_dict.
#include "core/graph/model_graph.h"

namespace nova {

inline bool is_lifted_constant(const ParamInfo& p) { return p.graph_input.starts_with("c_") && p.name == p.graph_input; }

}  // namespace nova
