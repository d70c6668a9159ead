#include "ui/jobs/progress_delegate.h"

#include <QApplication>
#include <QStyleOptionProgressBar>

#include "ui/jobs/job_list_model.h"

namespace nova::ui {

void ProgressDelegate::paint(QPainter* painter, const QStyleOptionViewItem& option,
                             const QModelIndex& index) const {
  QStyleOptionProgressBar bar;
  bar.rect = option.rect.adjusted(2, 3, -2, -3);
  bar.minimum = 0;
  bar.maximum = 100;
  bar.progress = index.data(JobListModel::ProgressRole).toInt();
  bar.text = index.data(Qt::DisplayRole).toString();
  bar.textVisible = true;
  bar.state = option.state | QStyle::State_Horizontal;
  QApplication::style()->drawControl(QStyle::CE_ProgressBar, &bar, painter);
}

}  // namespace nova::ui
