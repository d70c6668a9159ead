#pragma once
#include <QGraphicsItem>
#include <QPainterPath>
#include <QPolygonF>

#include "core/graph/graph_layout.h"

namespace nova::ui {

// A data-flow edge of the model graph view: the Bezier curve dot routed, with an arrow head. An
// edge standing for several tensors (between collapsed scopes) is drawn thicker.
class EdgeItem : public QGraphicsItem {
 public:
  EdgeItem(const LayoutEdge& edge, int tensor_count, const QString& tooltip);

  QRectF boundingRect() const override { return bounds_; }
  QPainterPath shape() const override;
  void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

 private:
  QPainterPath path_;
  QPolygonF arrow_;
  QRectF bounds_;
  double width_;
};

}  // namespace nova::ui
