#pragma once
#include <QLabel>
#include <QWidget>

#include "core/graph/graph_view_model.h"

namespace nova::ui {

// The side panel of the model graph view: for the selected node its op and ATen target, inputs and
// outputs with shapes, strides and dtypes, constants, FLOPs, bytes, fusion group, nn.Module scope and
// the source line as a link (clicking it emits openSourceRequested); for a collapsed scope a summary.
class NodeDetailPanel : public QWidget {
  Q_OBJECT
 public:
  explicit NodeDetailPanel(QWidget* parent = nullptr);

  void showNode(const ModelGraph& graph, int id);
  void showScope(const GraphViewModel& model, const std::string& scope);
  void clear();
  QString text() const { return label_->text(); }
  // Follows a link as a click would (tests, keyboard users).
  void activateLink(const QString& link);

 signals:
  void openSourceRequested(const QString& file, int line);

 private:
  QLabel* label_;
};

}  // namespace nova::ui
