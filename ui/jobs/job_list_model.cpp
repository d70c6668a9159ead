#include "ui/jobs/job_list_model.h"

#include <QBrush>
#include <QColor>

namespace nova::ui {

int JobListModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : int(jobs_.size());
}
int JobListModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant JobListModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  static const char* names[] = {"Job", "Lane", "State", "Progress", "Elapsed", "Message"};
  return section >= 0 && section < ColumnCount ? tr(names[section]) : QVariant();
}

QVariant JobListModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= int(jobs_.size())) return {};
  const JobInfo& j = jobs_[index.row()];
  if (role == JobIdRole) return j.id;
  if (role == ProgressRole) return int(j.progress * 100 + 0.5);
  if (role == Qt::ForegroundRole && index.column() == State) {
    switch (j.state) {
      case JobState::Failed:
      case JobState::TimedOut:
        return QBrush(QColor(190, 30, 30));
      case JobState::Succeeded:
        return QBrush(QColor(30, 130, 60));
      case JobState::Cancelled:
      case JobState::Superseded:
        return QBrush(QColor(120, 120, 120));
      default:
        return {};
    }
  }
  if (role == Qt::ToolTipRole) return QString::fromStdString(j.error.empty() ? j.message : j.error);
  if (role != Qt::DisplayRole) return {};
  switch (index.column()) {
    case Title:
      return QString::fromStdString(j.title);
    case Lane:
      return QString::fromStdString(to_string(j.lane));
    case State:
      return QString::fromStdString(to_string(j.state));
    case Progress:
      return QString("%1%").arg(int(j.progress * 100 + 0.5));
    case Elapsed:
      return j.state == JobState::Queued ? QString()
                                         : QString("%1 s").arg(j.elapsed_s, 0, 'f', j.elapsed_s < 10 ? 2 : 1);
    case Message:
      return QString::fromStdString(j.error.empty() ? j.message : j.error);
  }
  return {};
}

int JobListModel::rowOf(int id) const {
  for (std::size_t i = 0; i < jobs_.size(); ++i)
    if (jobs_[i].id == id) return int(i);
  return -1;
}

const JobInfo* JobListModel::job(int row) const {
  return row >= 0 && row < int(jobs_.size()) ? &jobs_[row] : nullptr;
}

void JobListModel::clear() {
  beginResetModel();
  jobs_.clear();
  endResetModel();
}

void JobListModel::apply(const JobInfo& info) {
  int row = rowOf(info.id);
  if (row < 0) {
    beginInsertRows({}, int(jobs_.size()), int(jobs_.size()));
    jobs_.push_back(info);
    endInsertRows();
    return;
  }
  if (info.revision < jobs_[row].revision) return;  // a late, older snapshot
  jobs_[row] = info;
  emit dataChanged(index(row, 0), index(row, ColumnCount - 1));
}

}  // namespace nova::ui
