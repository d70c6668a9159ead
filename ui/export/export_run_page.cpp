#include "ui/export/export_run_page.h"

#include <QFontDatabase>
#include <QLabel>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QVBoxLayout>

#include "core/session/project_session.h"
#include "ui/export/export_command_line.h"
#include "ui/export/export_wizard.h"
#include "ui/shell/studio_session.h"

namespace nova::ui {

ExportRunPage::ExportRunPage(ExportWizard& wizard) : wizard_(wizard) {
  setTitle(tr("Export"));
  setSubTitle(tr("The package is written to a temporary folder and moved into place at the end: a failure "
                 "or a cancel leaves nothing behind."));
  auto* layout = new QVBoxLayout(this);
  progress_ = new QProgressBar(this);
  progress_->setRange(0, 100);
  step_ = new QLabel(this);
  step_->setWordWrap(true);
  cancel_ = new QPushButton(tr("Cancel the e&xport"), this);
  result_ = new QLabel(this);
  result_->setTextFormat(Qt::RichText);
  result_->setWordWrap(true);
  result_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  install_ = new QPlainTextEdit(this);
  install_->setReadOnly(true);
  install_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  install_->setLineWrapMode(QPlainTextEdit::WidgetWidth);
  install_->setWordWrapMode(QTextOption::WrapAnywhere);
  install_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  install_->setFixedHeight(install_->fontMetrics().lineSpacing() * 4 + 16);
  install_->hide();
  layout->addWidget(progress_);
  layout->addWidget(step_);
  layout->addWidget(cancel_, 0, Qt::AlignLeft);
  layout->addSpacing(12);
  layout->addWidget(result_);
  layout->addWidget(install_);
  layout->addStretch();
  connect(cancel_, &QPushButton::clicked, this, [this] {
    if (wizard_.job() && wizard_.studio().session()) wizard_.studio().session()->jobs().cancel(wizard_.job());
  });
  connect(&wizard_, &ExportWizard::exportEnded, this, &ExportRunPage::ended);
}

void ExportRunPage::initializePage() {
  done_ = succeeded_ = false;
  result_->clear();
  install_->hide();
  QString error;
  const int job = wizard_.startExport(&error);
  if (job == 0) {
    ended(false, error);
    return;
  }
  progress_->setValue(0);
  progress_->show();
  step_->setText(tr("Export job %1 queued…").arg(job));
  cancel_->show();
}

void ExportRunPage::showJob(const JobInfo& info) {
  progress_->setValue(qRound(info.progress * 100));
  if (!info.message.empty()) step_->setText(QString::fromStdString(info.message));
}

void ExportRunPage::ended(bool ok, const QString& message) {
  done_ = true;
  succeeded_ = ok;
  cancel_->hide();
  progress_->setVisible(ok);
  step_->setText(ok ? tr("Done.") : tr("The export ended without a package."));
  if (ok) {
    progress_->setValue(100);
    result_->setText(tr("<b>The package is in %1.</b><br>Install it into the client's Python environment (with "
                        "its torch and a CUDA toolkit; the build compiles the kernels):")
                         .arg(message.toHtmlEscaped()));
    install_->setPlainText("pip install --no-build-isolation " + ExportCommandLine::quoted(message));
    install_->show();
  } else {
    result_->setText(tr("<span style='color:#b00020'><b>Nothing was exported:</b> %1</span>").arg(message.toHtmlEscaped()));
  }
  emit completeChanged();
}

bool ExportRunPage::isComplete() const { return done_; }

}  // namespace nova::ui
