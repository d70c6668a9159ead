#pragma once
// The studio's jobs panel: queued, running and finished jobs of the queue it follows (the open
// session's) with progress bars, elapsed time, the selected job's log and error, and a cancel
// button. Job changes reach it through apply() on the GUI thread (the studio session relays the
// queue's listener); following another queue starts an empty list.
#include <QWidget>

#include "core/jobs/job_queue.h"

class QPlainTextEdit;
class QPushButton;
class QTableView;

namespace nova::ui {

class JobListModel;

class JobsPanel : public QWidget {
  Q_OBJECT
 public:
  explicit JobsPanel(QWidget* parent = nullptr);

  // Follows `queue` (null: none): its jobs as they are now; cancel and elapsed times go to it.
  void setQueue(JobQueue* queue);
  JobQueue* queue() const { return queue_; }
  // A job of the followed queue changed (a snapshot from its listener, on the GUI thread).
  void apply(const JobInfo& info);

  JobListModel* model() const { return model_; }
  QTableView* table() const { return table_; }
  QPushButton* cancelButton() const { return cancel_; }
  void selectJob(int id);

 private:
  void refreshDetails();
  void refreshElapsed();

  JobQueue* queue_ = nullptr;
  JobListModel* model_;
  QTableView* table_;
  QPlainTextEdit* log_;
  QPushButton* cancel_;
};

}  // namespace nova::ui
