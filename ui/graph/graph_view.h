#pragma once
#include <QGraphicsView>
#include <QLabel>
#include <QPointer>
#include <QThread>
#include <map>
#include <memory>
#include <optional>

#include "core/graph/graph_layout.h"
#include "core/graph/graph_view_model.h"

namespace nova::ui {

class NodeItem;

// The model graph view: the visible graph of a ModelGraph laid out by Graphviz dot and drawn in a
// QGraphicsView. Wheel/keys zoom, drag pans, F fits; nn.Module scopes collapse into one box
// (double-click expands, the context menu collapses); search highlights matches and steps through
// them; nodes are coloured by op class or by heat. Layouts are cached per collapse state; large
// ones run on a worker thread and only the latest request's result is used.
class GraphView : public QGraphicsView {
  Q_OBJECT
 public:
  explicit GraphView(QWidget* parent = nullptr);
  ~GraphView() override;

  // Shows a graph, collapsing scopes when it has more than `max_visible` items.
  void setGraph(ModelGraph graph, int max_visible = 300);
  const ModelGraph* graph() const { return graph_.get(); }
  GraphViewModel* model() { return model_.get(); }

  // Colours nodes by a per-node value in [0, 1] (share of GPU time); empty map: back to op class.
  void setNodeHeat(const std::map<int, double>& heat);
  bool showsHeat() const { return !heat_.empty(); }

  // Selects a node, expanding its scope if collapsed, and centres on it.
  void selectNode(int id);
  std::optional<int> selectedNode() const { return selected_node_; }

  void expandScope(const std::string& scope);
  void collapseScope(const std::string& scope);
  void expandAll();
  void collapseDefault();
  void fitAll();
  // Fits the graph, or when that is too small to read, shows its top (the inputs) readable.
  void showOverview();
  void zoomBy(double factor);

  // Highlights every match of `query` (over the whole graph) and goes to the first; returns count.
  int search(const QString& query);
  void nextMatch();
  void previousMatch();
  int matchCount() const { return static_cast<int>(matches_.size()); }
  int currentMatch() const { return current_match_; }

  bool layoutPending() const { return pending_generation_ != 0; }
  const GraphLayout& currentLayout() const { return layout_; }
  const std::vector<NodeItem*>& nodeItems() const { return node_items_; }
  int cachedLayouts() const { return static_cast<int>(cache_.size()); }

 signals:
  void nodeSelected(int id);
  void scopeSelected(const QString& scope);
  void selectionCleared();
  void layoutReady();
  void matchChanged(int current, int total);
  // "Send group N to LLM" from a node's context menu: the LLM search on its fusion group.
  void sendToLlm(int group);

 protected:
  void wheelEvent(QWheelEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;
  void mouseDoubleClickEvent(QMouseEvent* event) override;
  void contextMenuEvent(QContextMenuEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;

 private:
  // Pixels to keep free above the graph for the legend when fitted at `scale` (0 when it clears the graph).
  double legendBand(double scale) const;
  // Sets the view's rect to the scene's with that band above it, at `scale`; returns it.
  QRectF showWithLegendBand(double scale);
  void relayout();
  void showLayout(const GraphLayout& layout);
  void applyDecorations();
  void centerOnNode(int id);
  void updateLegend();
  void goToMatch(int index);
  void onSceneSelectionChanged();
  NodeItem* itemAt(const QPoint& pos) const;

  std::unique_ptr<ModelGraph> graph_;
  std::unique_ptr<GraphViewModel> model_;
  int max_visible_ = 300;
  std::map<std::string, GraphLayout> cache_;
  GraphLayout layout_;
  std::vector<NodeItem*> node_items_;
  std::map<int, double> heat_;
  std::vector<int> matches_;
  int current_match_ = -1;
  std::optional<int> selected_node_;
  std::optional<int> pending_focus_;
  bool fit_after_layout_ = true;
  // The view shows the overview it chose itself (nobody zoomed or centred since): a resize fits again.
  bool auto_fitted_ = false;
  int generation_ = 0;
  int pending_generation_ = 0;
  QPointer<QThread> worker_;
  QLabel* legend_;
  bool updating_selection_ = false;
};

}  // namespace nova::ui
