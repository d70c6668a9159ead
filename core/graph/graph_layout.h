#pragma once
// A laid-out graph in plain types: what the graph view's layout engine (Graphviz `dot`, in ui/graph/)
// returns for the visible graph, and what the view caches per collapse state. Scene units, y down,
// the origin at the top-left of the bounding box.
#include <utility>
#include <vector>

namespace nova {

// What to lay out: one box size per node and directed edges between node indices.
struct LayoutRequest {
  std::vector<std::pair<double, double>> sizes;  // width, height of node i
  std::vector<std::pair<int, int>> edges;        // from, to (node indices)
};

struct LayoutPoint {
  double x = 0, y = 0;
};

// A node box, by its centre.
struct LayoutNode {
  double x = 0, y = 0, width = 0, height = 0;
};

// An edge as a cubic Bezier chain: points[0], then (control, control, end) triples. The arrow runs
// from the chain's last point to `arrow_tip` when has_arrow is set.
struct LayoutEdge {
  int from = 0, to = 0;
  std::vector<LayoutPoint> points;
  bool has_arrow = false;
  LayoutPoint arrow_tip;
};

struct GraphLayout {
  std::vector<LayoutNode> nodes;  // same order as the request's sizes
  std::vector<LayoutEdge> edges;  // same order as the request's edges
  double width = 0, height = 0;
  double millis = 0;  // time the layout took
};

}  // namespace nova
