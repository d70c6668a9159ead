#pragma once
// The studio's jobs panel: queued, running and finished jobs of a JobQueue with progress bars,
// elapsed time, the selected job's log and error, and a cancel button. The queue's listener is
// the one place its progress reaches widgets (posted to the GUI thread).
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
  explicit JobsPanel(JobQueue& queue, QWidget* parent = nullptr);
  ~JobsPanel() override;

  JobListModel* model() const { return model_; }
  QTableView* table() const { return table_; }
  QPushButton* cancelButton() const { return cancel_; }
  void selectJob(int id);

 signals:
  // A job reached a final state (succeeded, failed, cancelled, superseded, timed out); on the UI thread.
  void jobFinished(int id);

 private:
  void refreshDetails();
  void refreshElapsed();

  JobQueue& queue_;
  JobListModel* model_;
  QTableView* table_;
  QPlainTextEdit* log_;
  QPushButton* cancel_;
};

}  // namespace nova::ui
