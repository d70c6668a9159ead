#include "ui/graph/group_outline_item.h"

#include <QFontMetricsF>
#include <QPainter>
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

GroupOutlineItem::GroupOutlineItem(const QRectF& nodes_bounds, const QString& label)
    : outline_(nodes_bounds.adjusted(-kMargin, -kMargin, kMargin, kMargin)), label_(label) {
  // Above edges (its label stays readable where one crosses it), below the node boxes.
  setZValue(1.5);
  QFontMetricsF fm(font());
  // The label sits inside the outline's top edge, left of the nodes, so neighbours never cover it.
  label_rect_ = QRectF(outline_.left() + 6, outline_.top() - fm.height() / 2, fm.horizontalAdvance(label) + 8,
                       fm.height());
  setToolTip(label);
}

QRectF GroupOutlineItem::boundingRect() const { return outline_.united(label_rect_).adjusted(-2, -2, 2, 2); }

void GroupOutlineItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*) {
  const double lod = option->levelOfDetailFromTransform(painter->worldTransform());
  QColor colour("#7b3294");
  QColor tint = colour;
  tint.setAlpha(14);
  QPen pen(colour, 1.5, Qt::DashLine);
  pen.setCosmetic(lod < 0.5);
  painter->setPen(pen);
  painter->setBrush(tint);
  painter->drawRoundedRect(outline_, 10, 10);
  if (lod * font().pointSizeF() < 4) return;
  painter->setPen(Qt::NoPen);
  painter->setBrush(Qt::white);
  painter->drawRect(label_rect_);
  painter->setPen(colour);
  painter->setFont(font());
  painter->drawText(label_rect_, Qt::AlignCenter, label_);
}

}  // namespace nova::ui
