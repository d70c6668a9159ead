#include "ui/graph/graph_scene_builder.h"

#include "ui/graph/edge_item.h"
#include "ui/graph/group_outline_item.h"
#include "ui/graph/node_item.h"

namespace nova::ui {

LayoutRequest GraphSceneBuilder::request(const GraphViewModel& model) {
  LayoutRequest r;
  r.sizes.reserve(model.items().size());
  for (const auto& item : model.items()) {
    QSizeF s = NodeItem::preferredSize(item);
    r.sizes.emplace_back(s.width(), s.height());
  }
  for (const auto& e : model.edges()) r.edges.emplace_back(e.from, e.to);
  return r;
}

std::vector<NodeItem*> GraphSceneBuilder::build(QGraphicsScene& scene, const GraphViewModel& model,
                                                const GraphLayout& layout) {
  scene.clear();
  std::vector<NodeItem*> nodes;
  const auto& items = model.items();
  nodes.reserve(items.size());
  for (std::size_t i = 0; i < items.size() && i < layout.nodes.size(); ++i) {
    const LayoutNode& ln = layout.nodes[i];
    auto* item = new NodeItem(static_cast<int>(i), items[i], QSizeF(ln.width, ln.height));
    item->setPos(ln.x, ln.y);
    scene.addItem(item);
    nodes.push_back(item);
  }
  const auto& edges = model.edges();
  for (std::size_t i = 0; i < edges.size() && i < layout.edges.size(); ++i) {
    QString tip;
    for (std::size_t t = 0; t < edges[i].tensors.size() && t < 12; ++t)
      tip += (t ? "\n" : "") + QString::fromStdString(edges[i].tensors[t]);
    if (edges[i].tensors.size() > 12) tip += QString("\n… %1 more").arg(edges[i].tensors.size() - 12);
    scene.addItem(new EdgeItem(layout.edges[i], static_cast<int>(edges[i].tensors.size()), tip));
  }
  for (const auto& g : model.groups()) {
    std::vector<QRectF> boxes;
    for (int index : g.items)
      if (index < static_cast<int>(nodes.size()))
        boxes.push_back(nodes[index]->mapRectToScene(
            QRectF(-layout.nodes[index].width / 2, -layout.nodes[index].height / 2, layout.nodes[index].width,
                   layout.nodes[index].height)));
    if (!boxes.empty()) scene.addItem(new GroupOutlineItem(boxes, QString::fromStdString(g.label)));
  }
  // Room around the drawing so outlines at the border are not clipped.
  scene.setSceneRect(scene.itemsBoundingRect().adjusted(-30, -30, 30, 30));
  return nodes;
}

}  // namespace nova::ui
