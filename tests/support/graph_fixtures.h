#pragma once
// Recorded intake graphs (tests/fixtures/graphs), loaded as the generator tests use them.
#include <string>

#include "core/graph/model_graph.h"

namespace nova::test {

// The graph tests/fixtures/graphs/NAME.json. With `dtype` (float16, bfloat16), every float32 tensor
// in it is retyped: the same model in half precision, as intake records it when the model's
// parameters and inputs are half.
ModelGraph graph_fixture(const std::string& name, const std::string& dtype = "float32");

}  // namespace nova::test
