#pragma once
// The studio's hot-op panel: the ranked table (sortable, filterable by name), a choice of ranking
// nodes or fusion groups, and "Send to generator" for the selected rows (its context menu also has
// "Send to LLM": the LLM search on the row's fusion group). Selecting a row emits
// nodeSelected() so the timeline and the graph view follow; selectNode() follows them back.
#include <QList>
#include <QWidget>

#include "core/trace/attribution.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSortFilterProxyModel;
class QTableView;

namespace nova::ui {

class HotOpTableModel;

class HotOpView : public QWidget {
  Q_OBJECT
 public:
  explicit HotOpView(QWidget* parent = nullptr);

  void setAttribution(const AttributionResult& result);
  void setRankByGroup(bool by_group);
  void setFilter(const QString& text);

  HotOpTableModel* tableModel() const { return model_; }
  QSortFilterProxyModel* proxy() const { return proxy_; }
  QTableView* table() const { return table_; }
  QPushButton* sendButton() const { return send_; }
  QString note() const;
  // Ids (node or group, by the ranking level) of the selected rows, in view order.
  QList<int> selectedIds() const;

 public slots:
  void selectNode(int node);
  void sendSelection();

 signals:
  void sendToGenerator(const QList<int>& group_or_node_ids, bool groups);
  void sendToLlm(const QList<int>& group_or_node_ids, bool groups);
  void nodeSelected(int node);

 private:
  void rerank();

  AttributionResult result_;
  HotOpTableModel* model_;
  QSortFilterProxyModel* proxy_;
  QTableView* table_;
  QLineEdit* filter_;
  QComboBox* by_;
  QPushButton* send_;
  QLabel* note_;  // what headroom and a dash mean
  bool syncing_ = false;
};

}  // namespace nova::ui
