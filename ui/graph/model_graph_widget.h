#pragma once
#include <QLabel>
#include <QLineEdit>
#include <QWidget>

#include "ui/graph/graph_view.h"
#include "ui/graph/node_detail_panel.h"

namespace nova::ui {

// The "Model graph" area the main window embeds: a search bar (matches, previous/next), fit and
// expand/collapse buttons, the graph view and the node detail panel beside it.
class ModelGraphWidget : public QWidget {
  Q_OBJECT
 public:
  explicit ModelGraphWidget(QWidget* parent = nullptr);

  void setGraph(ModelGraph graph) { view_->setGraph(std::move(graph)); }
  void setNodeHeat(const std::map<int, double>& heat) { view_->setNodeHeat(heat); }
  void selectNode(int id) { view_->selectNode(id); }

  GraphView* view() const { return view_; }
  NodeDetailPanel* details() const { return details_; }
  QLineEdit* searchField() const { return search_; }
  QString matchText() const { return matches_->text(); }

 signals:
  void nodeSelected(int id);
  void openSourceRequested(const QString& file, int line);

 private:
  GraphView* view_;
  NodeDetailPanel* details_;
  QLineEdit* search_;
  QLabel* matches_;
};

}  // namespace nova::ui
