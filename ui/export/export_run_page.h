#pragma once
#include <QWizardPage>

#include "core/jobs/job.h"

class QLabel;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;

namespace nova::ui {

class ExportWizard;

// The Export wizard's last page: starts the export job, follows it (progress, the latest step; the
// Jobs panel shows it too), offers to cancel it, and then says where the package is and how to
// install it (`pip install --no-build-isolation DIR`), or why nothing was written.
class ExportRunPage : public QWizardPage {
  Q_OBJECT
 public:
  explicit ExportRunPage(ExportWizard& wizard);
  void initializePage() override;
  bool isComplete() const override;  // once the job has ended
  void showJob(const nova::JobInfo& info);

  QLabel* result() const { return result_; }
  QPlainTextEdit* installCommand() const { return install_; }
  QPushButton* cancelButton() const { return cancel_; }
  bool succeeded() const { return succeeded_; }

 private:
  void ended(bool ok, const QString& message);

  ExportWizard& wizard_;
  QProgressBar* progress_;
  QLabel *step_, *result_;
  QPlainTextEdit* install_;
  QPushButton* cancel_;
  bool done_ = false, succeeded_ = false;
};

}  // namespace nova::ui
