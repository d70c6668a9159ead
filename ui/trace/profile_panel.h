#pragma once
// The profiling stage of the studio in one widget: the timeline (with kernel search and the selected
// range's duration) above the hot-op table, kept in step with each other: a kernel clicked selects
// its op's row, a row selected highlights its kernels. The graph view connects to nodeSelected() /
// selectNode() and colours nodes with nodeColours(). The main window puts it in a dock.
#include <memory>

#include <QHash>
#include <QList>
#include <QWidget>

#include "core/graph/model_graph.h"
#include "core/trace/attribution.h"
#include "core/trace/trace.h"

class QLabel;
class QLineEdit;

namespace nova::ui {

class HotOpView;
class TimelineView;

class ProfilePanel : public QWidget {
  Q_OBJECT
 public:
  explicit ProfilePanel(QWidget* parent = nullptr);

  void setProfile(std::shared_ptr<const Trace> trace, const AttributionResult& attribution,
                  const ModelGraph& graph);
  // Reads a recorded trace (.novatrace), attributes it to `graph` (empty: the model is not open) and
  // shows it. `message`: a sentence on what was read, or why it could not be.
  // A trace recorded from another graph is refused (false, the message names both).
  bool openTrace(const QString& path, const ModelGraph& graph, QString* message);
  // Shows nothing: another model is open.
  void clear();
  bool isEmpty() const;
  // Each graph node's share of GPU time, for colouring the graph.
  std::map<int, double> nodeShares() const;
  TimelineView* timeline() const { return timeline_; }
  HotOpView* hotOps() const { return hot_; }
  QLineEdit* searchBox() const { return search_; }
  QString statusText() const;
  // Share-of-GPU-time colour per graph node, for the graph view.
  QHash<int, QColor> nodeColours() const;

 public slots:
  void selectNode(int node);

 signals:
  void nodeSelected(int node);
  void sendToGenerator(const QList<int>& group_or_node_ids, bool groups);
  void sendToLlm(const QList<int>& group_or_node_ids, bool groups);

 private:
  void updateStatus();

  TimelineView* timeline_;
  HotOpView* hot_;
  QLineEdit* search_;
  QLabel* status_;
  AttributionResult attribution_;
  QString summary_;
};

}  // namespace nova::ui
