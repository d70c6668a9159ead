#pragma once
#include <QDialog>
#include <QString>

#include "core/jobs/job.h"

class QCheckBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QTextBrowser;

namespace nova::ui {

class StudioSession;

// The studio's `nova report`: the output folder and the forms (HTML, PDF, JSON), the equivalent command
// line, then the report written as a job of the open session (Jobs panel, cancel with Close), and a
// preview of the HTML (a QTextBrowser shows its text and tables; the charts are SVG, which it does not
// draw: "Open in browser" shows the whole file). A project that cannot be reported (no validated
// version) or a non-empty folder is refused with the reason, and nothing is written. Closes when the
// session goes.
class ReportDialog : public QDialog {
  Q_OBJECT
 public:
  ReportDialog(StudioSession& studio, QWidget* parent = nullptr);

  QLineEdit* outEdit() const { return out_; }
  QPushButton* writeButton() const { return write_; }
  QPushButton* openButton() const { return open_; }
  QLabel* statusLabel() const { return status_; }
  QLineEdit* commandEdit() const { return command_; }
  QTextBrowser* preview() const { return preview_; }
  QString commandLine() const;
  int job() const { return job_; }
  // The folder the last report was written to; empty until one was.
  const QString& written() const { return written_; }

  // Submits the report job; false with the reason in the status line when nothing was queued.
  bool startReport();
  void reject() override;  // cancels a report under way

 signals:
  void reportEnded(bool ok, const QString& message);

 private:
  QString formats() const;
  void follow(const nova::JobInfo& info);
  void updateCommand();

  StudioSession& studio_;
  QLineEdit* out_;
  QCheckBox* html_;
  QCheckBox* pdf_;
  QCheckBox* json_;
  QLineEdit* command_;
  QPushButton* write_;
  QPushButton* open_;
  QLabel* status_;
  QTextBrowser* preview_;
  int job_ = 0;
  QString written_;
};

}  // namespace nova::ui
