#pragma once
// A small elementwise fusion group for project tests: group `id` multiplies x by id + 2, so each id
// has its own reference source (functional_source) and the store tells the groups apart.
#include <string>

#include "core/graph/model_graph.h"

namespace nova::test {

inline FusionGroup elementwise_group(int id) {
  FusionGroup g;
  g.id = id;
  g.kind = "elementwise";
  g.nodes = {id};
  g.inputs = {"x"};
  g.outputs = {"y"};
  g.functional_source = "def module_fn(x):\n    return x * " + std::to_string(id + 2) + "\n";
  return g;
}

}  // namespace nova::test
