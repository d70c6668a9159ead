#pragma once
// The hot-op table's Qt model over HotOpRanking rows: one row per node or fusion group, columns as
// in Nsight Systems' kernel summary (share, total, per call, calls, kernels, launches) plus the
// achieved rates and the headroom over the roofline floor. Display text is formatted; SortRole gives
// the raw number so a QSortFilterProxyModel sorts numerically.
#include <vector>

#include <QAbstractTableModel>

#include "core/trace/attribution.h"

namespace nova::ui {

class HotOpTableModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column {
    Rank,
    Name,
    Share,
    Total,
    PerCall,
    Calls,
    Kernels,
    Launches,
    Bandwidth,
    FlopRate,
    Headroom,
    ColumnCount
  };
  static constexpr int SortRole = Qt::UserRole + 1;
  static constexpr int IdRole = Qt::UserRole + 2;     // node or group id (-1: outside graph nodes)
  static constexpr int LevelRole = Qt::UserRole + 3;  // OpStats::Level as int

  explicit HotOpTableModel(QObject* parent = nullptr);

  void setRows(std::vector<OpStats> rows);
  const std::vector<OpStats>& rows() const { return rows_; }
  const OpStats& op(int row) const { return rows_.at(static_cast<std::size_t>(row)); }
  // The row holding graph node `node` (itself, or the group containing it); -1 if none.
  int rowOfNode(int node) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

 private:
  std::vector<OpStats> rows_;
};

}  // namespace nova::ui
