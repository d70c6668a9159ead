#include "ui/graph/group_outline_item.h"

#include <algorithm>

#include <QFontMetricsF>
#include <QPainter>
#include <QPainterPathStroker>
#include <QStyleOptionGraphicsItem>

namespace nova::ui {
namespace {
const QFont& font() {
  static QFont f = [] {
    QFont font;
    font.setPointSizeF(8);
    font.setItalic(true);
    return font;
  }();
  return f;
}
}  // namespace

GroupOutlineItem::GroupOutlineItem(const std::vector<QRectF>& node_rects, const QString& label) : label_(label) {
  // Above edges (its label stays readable where one crosses it), below the node boxes.
  setZValue(1.5);
  QPainterPath area;
  area.setFillRule(Qt::WindingFill);
  for (std::size_t i = 0; i < node_rects.size(); ++i) {
    area.addRoundedRect(node_rects[i].adjusted(-kMargin, -kMargin, kMargin, kMargin), 10, 10);
    if (i > 0) {
      // A band between consecutive nodes as wide as the narrower box with its margins: a column of
      // boxes becomes one straight-sided shape, not islands joined by necks.
      QPainterPathStroker band;
      band.setWidth(std::min(node_rects[i - 1].width(), node_rects[i].width()) + 2 * kMargin);
      band.setCapStyle(Qt::FlatCap);
      QPainterPath line(node_rects[i - 1].center());
      line.lineTo(node_rects[i].center());
      area.addPath(band.createStroke(line));
    }
  }
  path_ = area.simplified();
  QFontMetricsF fm(font());
  // The label sits on the first node's top margin, so neighbours never cover it.
  const QRectF first = node_rects.empty() ? QRectF() : node_rects.front().adjusted(-kMargin, -kMargin, kMargin, kMargin);
  label_rect_ = QRectF(first.left() + 6, first.top() - fm.height() / 2, fm.horizontalAdvance(label) + 8, fm.height());
  setToolTip(label);
}

QRectF GroupOutlineItem::boundingRect() const { return outline().united(label_rect_).adjusted(-2, -2, 2, 2); }

void GroupOutlineItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*) {
  const double lod = option->levelOfDetailFromTransform(painter->worldTransform());
  QColor colour("#7b3294");
  QColor tint = colour;
  tint.setAlpha(14);
  QPen pen(colour, 1.5, Qt::DashLine);
  pen.setCosmetic(lod < 0.5);
  painter->setPen(pen);
  painter->setBrush(tint);
  painter->drawPath(path_);
  if (lod * font().pointSizeF() < 4) return;
  painter->setPen(Qt::NoPen);
  painter->setBrush(Qt::white);
  painter->drawRect(label_rect_);
  painter->setPen(colour);
  painter->setFont(font());
  painter->drawText(label_rect_, Qt::AlignCenter, label_);
}

}  // namespace nova::ui
