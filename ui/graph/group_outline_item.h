#pragma once
#include <QGraphicsItem>
#include <QPainterPath>

#include <vector>

namespace nova::ui {

// A fusion group in the model graph view: a dashed outline that follows the group's node boxes (each
// box with a margin, joined along the group's execution order by bands as wide as the narrower box), not
// their bounding rectangle, so a group whose bounding box happens to cover another group's nodes does
// not look as if it held them. Its label ("group 0: conv+epilogue") sits on the first node's top edge;
// behind nodes, above edges.
class GroupOutlineItem : public QGraphicsItem {
 public:
  // `node_rects`: the group's node boxes in scene coordinates, in execution order.
  GroupOutlineItem(const std::vector<QRectF>& node_rects, const QString& label);

  static constexpr double kMargin = 10;
  QRectF outline() const { return path_.boundingRect(); }
  const QPainterPath& path() const { return path_; }
  QRectF boundingRect() const override;
  QPainterPath shape() const override { return path_; }
  void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

 private:
  QPainterPath path_;
  QString label_;
  QRectF label_rect_;
};

}  // namespace nova::ui
