#include "ui/graph/node_item.h"

#include <QFontMetricsF>
#include <QPainter>
#include <QStyleOptionGraphicsItem>

#include "ui/graph/op_class_palette.h"

namespace nova::ui {
namespace {

constexpr double kPadding = 8;
constexpr double kStack = 4;  // offset of the sheets behind a collapsed scope

const QFont& labelFont() {
  static QFont f = [] {
    QFont font;
    font.setPointSizeF(9);
    font.setBold(true);
    return font;
  }();
  return f;
}

const QFont& detailFont() {
  static QFont f = [] {
    QFont font;
    font.setPointSizeF(8);
    return font;
  }();
  return f;
}

}  // namespace

NodeItem::NodeItem(int index, const Item& item, QSizeF size) : index_(index), item_(item), size_(size) {
  setFlag(ItemIsSelectable);
  setAcceptHoverEvents(false);
  setZValue(2);
  QString tip = QString::fromStdString(item.label) + "\n" + QString::fromStdString(item.detail);
  if (isScope()) tip += "\nDouble-click to expand";
  setToolTip(tip);
}

QSizeF NodeItem::preferredSize(const Item& item) {
  QFontMetricsF label(labelFont()), detail(detailFont());
  double w = std::max(label.horizontalAdvance(QString::fromStdString(item.label)),
                      detail.horizontalAdvance(QString::fromStdString(item.detail)));
  double h = label.height() + detail.height() + 2 * kPadding - 2;
  w = std::max(w + 2 * kPadding, 72.0);
  if (item.kind == Item::Kind::Scope) return QSizeF(w + 2 * kStack + 14, h + 2 * kStack);
  return QSizeF(w, h);
}

void NodeItem::setHeat(std::optional<double> share) {
  heat_ = share;
  update();
}

void NodeItem::setMatched(bool matched) {
  if (matched_ == matched) return;
  matched_ = matched;
  update();
}

void NodeItem::setCurrentMatch(bool current) {
  if (current_ == current) return;
  current_ = current;
  update();
}

QRectF NodeItem::boundingRect() const { return box().adjusted(-4, -4, 4, 4); }

void NodeItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*) {
  const double lod = option->levelOfDetailFromTransform(painter->worldTransform());
  QColor fill = heat_ ? OpClassPalette::heat(*heat_) : OpClassPalette::fill(item_.op_class);
  if (item_.kind == Item::Kind::Input || item_.kind == Item::Kind::Output) fill = QColor("#ffffff");
  QRectF r = box();
  if (isScope()) r.adjust(0, 0, -kStack * 2, -kStack * 2);

  // Far out, a node is a few pixels: a flat rectangle is all that shows.
  if (lod < 0.25) {
    painter->fillRect(r, matched_ || isSelected() ? QColor("#e6007e") : fill);
    return;
  }
  QColor border = matched_ ? QColor("#e6007e") : OpClassPalette::border(item_.op_class);
  double width = current_ || isSelected() ? 3 : matched_ ? 2.5 : 1;
  if (isSelected()) border = QColor("#1f4e9c");
  double radius = item_.kind == Item::Kind::Node ? 4 : r.height() / 2;
  if (isScope()) {
    radius = 4;
    painter->setPen(QPen(OpClassPalette::border(item_.op_class), 1));
    painter->setBrush(fill.lighter(108));
    painter->drawRoundedRect(r.translated(2 * kStack, 2 * kStack), radius, radius);
    painter->drawRoundedRect(r.translated(kStack, kStack), radius, radius);
  }
  painter->setPen(QPen(border, width));
  painter->setBrush(fill);
  painter->drawRoundedRect(r, radius, radius);

  // Text below about 4 pixels high cannot be read; skip it.
  if (lod * detailFont().pointSizeF() < 4) return;
  QRectF text = r.adjusted(kPadding, kPadding / 2, -kPadding, -kPadding / 2);
  if (isScope()) {
    QRectF badge(r.right() - 16, r.top() + 4, 12, 12);
    painter->setPen(QPen(QColor("#333333"), 1));
    painter->setBrush(Qt::white);
    painter->drawRect(badge);
    painter->drawLine(QPointF(badge.left() + 3, badge.center().y()),
                      QPointF(badge.right() - 3, badge.center().y()));
    painter->drawLine(QPointF(badge.center().x(), badge.top() + 3),
                      QPointF(badge.center().x(), badge.bottom() - 3));
    text.adjust(0, 0, -14, 0);
  }
  // Dark text on light fills, white on dark ones (the hottest heat colours): readable on every fill.
  const QColor ink = OpClassPalette::textOn(fill);
  painter->setPen(ink);
  painter->setFont(labelFont());
  painter->drawText(text, Qt::AlignHCenter | Qt::AlignTop, QString::fromStdString(item_.label));
  painter->setFont(detailFont());
  painter->setPen(ink == Qt::white ? QColor("#f0f0f0") : QColor("#3a3a3a"));
  painter->drawText(text, Qt::AlignHCenter | Qt::AlignBottom, QString::fromStdString(item_.detail));
}

}  // namespace nova::ui
