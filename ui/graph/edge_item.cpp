#include "ui/graph/edge_item.h"

#include <QPainter>
#include <QPainterPathStroker>
#include <QStyleOptionGraphicsItem>
#include <QtMath>
#include <cmath>

namespace nova::ui {

EdgeItem::EdgeItem(const LayoutEdge& edge, int tensor_count, const QString& tooltip)
    : width_(tensor_count > 1 ? std::min(1.2 + 0.6 * std::log2(double(tensor_count)), 4.0) : 1.2) {
  setZValue(1);
  setToolTip(tooltip);
  const auto& p = edge.points;
  if (!p.empty()) {
    path_.moveTo(p[0].x, p[0].y);
    for (std::size_t i = 1; i + 2 < p.size(); i += 3)
      path_.cubicTo(p[i].x, p[i].y, p[i + 1].x, p[i + 1].y, p[i + 2].x, p[i + 2].y);
  }
  if (edge.has_arrow && !p.empty()) {
    QPointF tip(edge.arrow_tip.x, edge.arrow_tip.y), base(p.back().x, p.back().y);
    QPointF d = tip - base;
    double len = std::hypot(d.x(), d.y());
    if (len > 0) {
      QPointF n(-d.y() / len, d.x() / len);
      double half = std::max(3.0, width_ * 2.2);
      arrow_ << tip << base + n * half << base - n * half;
      path_.lineTo(base);
    }
  }
  bounds_ = path_.boundingRect().united(arrow_.boundingRect()).adjusted(-width_, -width_, width_, width_);
}

QPainterPath EdgeItem::shape() const {
  QPainterPathStroker stroker;
  stroker.setWidth(std::max(6.0, width_ * 3));
  return stroker.createStroke(path_);
}

void EdgeItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*) {
  const double lod = option->levelOfDetailFromTransform(painter->worldTransform());
  QColor colour("#5b5b5b");
  // A cosmetic pen far out keeps edges one pixel wide instead of vanishing.
  QPen pen(colour, lod < 0.5 ? 0 : width_);
  pen.setCosmetic(lod < 0.5);
  painter->setPen(pen);
  painter->setBrush(Qt::NoBrush);
  painter->drawPath(path_);
  if (lod >= 0.3 && !arrow_.isEmpty()) {
    painter->setPen(Qt::NoPen);
    painter->setBrush(colour);
    painter->drawPolygon(arrow_);
  }
}

}  // namespace nova::ui
