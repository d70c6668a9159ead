#include "ui/report/report_dialog.h"

#include <QCheckBox>
#include <QDesktopServices>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QTextBrowser>
#include <QUrl>
#include <QVBoxLayout>

#include "core/report/report_error.h"
#include "core/report/report_writer.h"
#include "core/session/project_session.h"
#include "ui/shell/studio_session.h"

namespace nova::ui {

ReportDialog::ReportDialog(StudioSession& studio, QWidget* parent)
    : QDialog(parent),
      studio_(studio),
      out_(new QLineEdit(this)),
      html_(new QCheckBox(tr("HTML"), this)),
      pdf_(new QCheckBox(tr("PDF"), this)),
      json_(new QCheckBox(tr("JSON"), this)),
      command_(new QLineEdit(this)),
      write_(new QPushButton(tr("&Write report"), this)),
      open_(new QPushButton(tr("&Open in browser"), this)),
      status_(new QLabel(this)),
      preview_(new QTextBrowser(this)) {
  setWindowTitle(tr("Client report"));
  resize(820, 680);
  const QFileInfo model(studio_.model());
  out_->setText(QDir(model.absolutePath()).filePath(model.completeBaseName() + "-report"));
  for (QCheckBox* box : {html_, pdf_, json_}) {
    box->setChecked(true);
    connect(box, &QCheckBox::toggled, this, &ReportDialog::updateCommand);
  }
  connect(out_, &QLineEdit::textChanged, this, &ReportDialog::updateCommand);
  auto* browse = new QPushButton(tr("Browse…"), this);
  connect(browse, &QPushButton::clicked, this, [this] {
    const QString dir = QFileDialog::getExistingDirectory(this, tr("Report folder"), out_->text());
    if (!dir.isEmpty()) out_->setText(dir);
  });
  command_->setReadOnly(true);
  status_->setWordWrap(true);
  status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  // Room for a refusal's sentence or the written folder and what the report lacks (long paths wrap
  // anywhere only in a few lines' height).
  status_->setMinimumHeight(status_->fontMetrics().lineSpacing() * 5);
  status_->setAlignment(Qt::AlignLeft | Qt::AlignTop);
  open_->setEnabled(false);
  connect(write_, &QPushButton::clicked, this, &ReportDialog::startReport);
  connect(open_, &QPushButton::clicked, this, [this] {
    QDesktopServices::openUrl(QUrl::fromLocalFile(QDir(written_).filePath("report.html")));
  });
  preview_->setPlaceholderText(tr("The report's HTML shows here once it is written (text and tables; the charts "
                                  "are in the HTML file and the PDF)."));

  auto* folder = new QHBoxLayout;
  folder->addWidget(new QLabel(tr("Folder:"), this));
  folder->addWidget(out_, 1);
  folder->addWidget(browse);
  auto* forms = new QHBoxLayout;
  forms->addWidget(new QLabel(tr("Forms:"), this));
  forms->addWidget(html_);
  forms->addWidget(pdf_);
  forms->addWidget(json_);
  forms->addStretch(1);
  forms->addWidget(write_);
  forms->addWidget(open_);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(folder);
  layout->addLayout(forms);
  auto* command = new QHBoxLayout;
  command->addWidget(new QLabel(tr("The same from a shell:"), this));
  command->addWidget(command_, 1);
  layout->addLayout(command);
  layout->addWidget(status_);
  layout->addWidget(preview_, 1);

  connect(&studio_, &StudioSession::jobChanged, this, &ReportDialog::follow);
  connect(&studio_, &StudioSession::closing, this, &QDialog::reject);
  updateCommand();
}

QString ReportDialog::formats() const {
  QStringList list;
  if (html_->isChecked()) list << "html";
  if (pdf_->isChecked()) list << "pdf";
  if (json_->isChecked()) list << "json";
  return list.join(',');
}

QString ReportDialog::commandLine() const {
  const ProjectSession* s = studio_.session();
  return QStringLiteral("nova report %1 --project %2 --out %3 --format %4")
      .arg(studio_.model(), s ? QString::fromStdString(s->project_dir().string()) : QString(), out_->text(), formats());
}

void ReportDialog::updateCommand() {
  command_->setText(commandLine());
  command_->setCursorPosition(0);
  write_->setEnabled(job_ == 0 && !formats().isEmpty() && !out_->text().trimmed().isEmpty());
}

bool ReportDialog::startReport() {
  ProjectSession* s = studio_.session();
  if (!s || job_ != 0) return false;
  ReportWriter::Options options;
  options.out = out_->text().trimmed().toStdString();
  options.model_path = studio_.model().toStdString();
  try {
    options.formats = ReportWriter::parse_formats(formats().toStdString());
    job_ = ReportWriter::submit(*s, options);
  } catch (const ReportError& e) {
    status_->setText(tr("Not written: %1").arg(QString::fromUtf8(e.what())));
    return false;
  }
  status_->setText(tr("Writing the report (Jobs panel)…"));
  open_->setEnabled(false);
  updateCommand();
  return true;
}

void ReportDialog::follow(const JobInfo& info) {
  if (job_ == 0 || info.id != job_) return;
  if (!is_finished(info.state)) {
    status_->setText(tr("Writing the report: %1").arg(QString::fromStdString(info.message)));
    return;
  }
  job_ = 0;
  updateCommand();
  if (info.state != JobState::Succeeded) {
    const QString why = info.state == JobState::Cancelled ? tr("cancelled") : QString::fromStdString(info.error);
    status_->setText(tr("Not written: %1").arg(why));
    emit reportEnded(false, why);
    return;
  }
  written_ = QString::fromStdString(info.result.value("out", std::string()));
  QString text = tr("Written to %1.").arg(written_);
  const std::string pdf_error = info.result.value("pdf_error", std::string());
  if (!pdf_error.empty()) text += tr(" No PDF: %1").arg(QString::fromStdString(pdf_error));
  for (const auto& p : info.result.value("problems", nlohmann::json::array()))
    text += tr("\nLacks: %1").arg(QString::fromStdString(p.get<std::string>()));
  status_->setText(text);
  QFile html(QDir(written_).filePath("report.html"));
  if (html.open(QIODevice::ReadOnly)) {
    preview_->setHtml(QString::fromUtf8(html.readAll()));
    open_->setEnabled(true);
  } else {
    preview_->setPlainText(tr("No HTML was asked for: the report's files are in %1.").arg(written_));
  }
  emit reportEnded(true, written_);
}

void ReportDialog::reject() {
  if (job_ != 0 && studio_.session()) studio_.session()->jobs().cancel(job_);
  job_ = 0;
  QDialog::reject();
}

}  // namespace nova::ui
