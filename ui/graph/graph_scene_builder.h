#pragma once
#include <QGraphicsScene>
#include <vector>

#include "core/graph/graph_layout.h"
#include "core/graph/graph_view_model.h"

namespace nova::ui {

class NodeItem;

// Turns the visible graph of a GraphViewModel into what the layout engine needs (box sizes from the
// fonts, edges) and, once laid out, into scene items: nodes, edges and fusion-group outlines.
class GraphSceneBuilder {
 public:
  static LayoutRequest request(const GraphViewModel& model);
  // Clears the scene and fills it; returns the node item of each visible item, by index.
  static std::vector<NodeItem*> build(QGraphicsScene& scene, const GraphViewModel& model,
                                      const GraphLayout& layout);
};

}  // namespace nova::ui
