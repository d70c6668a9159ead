#pragma once
#include <QWizardPage>

class QLabel;
class QPlainTextEdit;
class QTextBrowser;

namespace nova::ui {

class ExportWizard;

// The Export wizard's summary, its commit page: what will ship (group, version, rule, cold and wall
// speedup over eager from the version's stored benchmark) and what stays PyTorch with the reason, the
// selection policy's Amdahl estimate of the whole model for these versions, and the `nova export`
// command line that makes the same package. "Export" starts the job.
class ExportSummaryPage : public QWizardPage {
  Q_OBJECT
 public:
  explicit ExportSummaryPage(ExportWizard& wizard);
  void initializePage() override;
  bool isComplete() const override;  // false when the plan cannot be made (the reason is shown)

  QTextBrowser* summary() const { return summary_; }
  QPlainTextEdit* commandLine() const { return command_; }

 private:
  ExportWizard& wizard_;
  QTextBrowser* summary_;
  QPlainTextEdit* command_;
  QLabel* note_;
  bool ok_ = false;
};

}  // namespace nova::ui
