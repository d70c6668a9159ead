#pragma once
#include <QGraphicsItem>

namespace nova::ui {

// A fusion group in the model graph view: a dashed rounded rectangle around the group's node boxes
// with its label ("group 0: conv+epilogue") above the top-left corner, behind nodes and edges.
class GroupOutlineItem : public QGraphicsItem {
 public:
  GroupOutlineItem(const QRectF& nodes_bounds, const QString& label);

  static constexpr double kMargin = 10;
  QRectF outline() const { return outline_; }
  QRectF boundingRect() const override;
  void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

 private:
  QRectF outline_;
  QString label_;
  QRectF label_rect_;
};

}  // namespace nova::ui
