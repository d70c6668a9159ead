#pragma once
#include "core/graph/graph_layout.h"

namespace nova::ui {

// Lays out a directed graph with Graphviz `dot` (top to bottom, layered) through the C library and
// returns plain positions for the graph view. Graphviz keeps global state, so layouts run one at a
// time (any thread). Large graphs get a bounded network-simplex and crossing-minimisation search.
class GraphLayoutEngine {
 public:
  struct Options {
    double node_sep = 18;     // points between boxes of one rank
    double rank_sep = 28;     // points between ranks
    int bounded_above = 600;  // node count from which the search limits below apply
    double mclimit = 0.2;
    int nslimit = 4;
    int searchsize = 20;
  };
  GraphLayoutEngine() = default;
  explicit GraphLayoutEngine(Options options) : options_(options) {}

  GraphLayout layout(const LayoutRequest& request) const;

 private:
  Options options_;
};

}  // namespace nova::ui
