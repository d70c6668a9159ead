#include "ui/jobs/jobs_panel.h"

#include <QHeaderView>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSplitter>
#include <QTableView>
#include <QTextCursor>
#include <QTimer>
#include <QVBoxLayout>

#include "ui/jobs/job_list_model.h"
#include "ui/jobs/progress_delegate.h"

namespace nova::ui {

JobsPanel::JobsPanel(QWidget* parent) : QWidget(parent) {
  model_ = new JobListModel(this);
  table_ = new QTableView;
  table_->setModel(model_);
  table_->setItemDelegateForColumn(JobListModel::Progress, new ProgressDelegate(table_));
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->verticalHeader()->hide();
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->setColumnWidth(JobListModel::Title, 240);
  table_->setColumnWidth(JobListModel::Progress, 140);
  log_ = new QPlainTextEdit;
  log_->setReadOnly(true);
  log_->setPlaceholderText(tr("Select a job to see its log."));
  cancel_ = new QPushButton(tr("Cancel job"));
  cancel_->setEnabled(false);

  auto* split = new QSplitter(Qt::Vertical);
  split->setChildrenCollapsible(false);  // a divider never hides a panel
  split->addWidget(table_);
  split->addWidget(log_);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 1);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(split);
  layout->addWidget(cancel_, 0, Qt::AlignRight);

  connect(table_->selectionModel(), &QItemSelectionModel::selectionChanged, this, &JobsPanel::refreshDetails);
  connect(cancel_, &QPushButton::clicked, this, [this] {
    auto rows = table_->selectionModel()->selectedRows();
    if (queue_ && !rows.isEmpty())
      queue_->cancel(model_->data(rows.front(), JobListModel::JobIdRole).toInt());
  });
  auto* timer = new QTimer(this);
  connect(timer, &QTimer::timeout, this, &JobsPanel::refreshElapsed);
  timer->start(250);
}

void JobsPanel::setQueue(JobQueue* queue) {
  queue_ = queue;
  model_->clear();
  if (queue_)
    for (const auto& info : queue_->snapshot()) model_->apply(info);
  refreshDetails();
}

void JobsPanel::apply(const JobInfo& info) {
  model_->apply(info);
  refreshDetails();
}

void JobsPanel::selectJob(int id) {
  int row = model_->rowOf(id);
  if (row >= 0) table_->selectRow(row);
}

void JobsPanel::refreshElapsed() {
  if (!queue_) return;
  for (const auto& info : queue_->snapshot())
    if (info.state == JobState::Running) model_->apply(info);
}

void JobsPanel::refreshDetails() {
  auto rows = table_->selectionModel()->selectedRows();
  const JobInfo* job = rows.isEmpty() ? nullptr : model_->job(rows.front().row());
  cancel_->setEnabled(queue_ && job && !is_finished(job->state));
  if (!job) {
    log_->clear();
    return;
  }
  QString text;
  for (const auto& line : job->log) text += QString::fromStdString(line) + "\n";
  if (!job->error.empty()) text += "\n" + QString::fromStdString(job->error) + "\n";
  if (log_->toPlainText() != text) {
    log_->setPlainText(text);
    log_->moveCursor(QTextCursor::End);  // follow the newest lines
  }
}

}  // namespace nova::ui
