#pragma once
// The jobs panel's table model: one row per job (title, lane, state, progress, elapsed, message),
// fed with JobInfo snapshots by JobsPanel on the GUI thread.
#include <QAbstractTableModel>
#include <vector>

#include "core/jobs/job.h"

namespace nova::ui {

class JobListModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { Title, Lane, State, Progress, Elapsed, Message, ColumnCount };
  static constexpr int ProgressRole = Qt::UserRole + 1;  // 0..100
  static constexpr int JobIdRole = Qt::UserRole + 2;

  using QAbstractTableModel::QAbstractTableModel;
  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

  void apply(const JobInfo& info);  // inserts or updates the job's row
  void clear();
  const JobInfo* job(int row) const;
  int rowOf(int id) const;

 private:
  std::vector<JobInfo> jobs_;
};

}  // namespace nova::ui
