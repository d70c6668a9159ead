#pragma once
// Paints the jobs table's progress column as a progress bar (JobListModel::ProgressRole).
#include <QStyledItemDelegate>

namespace nova::ui {

class ProgressDelegate : public QStyledItemDelegate {
  Q_OBJECT
 public:
  using QStyledItemDelegate::QStyledItemDelegate;
  void paint(QPainter* painter, const QStyleOptionViewItem& option, const QModelIndex& index) const override;
};

}  // namespace nova::ui
