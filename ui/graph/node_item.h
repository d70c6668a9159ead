#pragma once
#include <QGraphicsItem>
#include <optional>

#include "core/graph/graph_view_model.h"

namespace nova::ui {

// One box of the model graph view: an op node, a collapsed nn.Module scope (drawn as a stack, with
// its op count), or a graph input/output. Coloured by op class or by heat; draws its text only when
// it is large enough on screen to read.
class NodeItem : public QGraphicsItem {
 public:
  using Item = GraphViewModel::Item;
  NodeItem(int index, const Item& item, QSizeF size);

  static QSizeF preferredSize(const Item& item);

  int index() const { return index_; }
  const Item& item() const { return item_; }
  bool isScope() const { return item_.kind == Item::Kind::Scope; }

  void setHeat(std::optional<double> share);
  void setMatched(bool matched);
  void setCurrentMatch(bool current);
  bool isMatched() const { return matched_; }

  QRectF boundingRect() const override;
  void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

 private:
  QRectF box() const {
    return QRectF(-size_.width() / 2, -size_.height() / 2, size_.width(), size_.height());
  }
  int index_;
  Item item_;
  QSizeF size_;
  std::optional<double> heat_;
  bool matched_ = false;
  bool current_ = false;
};

}  // namespace nova::ui
