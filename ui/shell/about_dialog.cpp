#include "ui/shell/about_dialog.h"
#include "core/env/build_info.h"

#include <QDialogButtonBox>
#include <QFontDatabase>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPointer>
#include <QThread>
#include <QVBoxLayout>

#include "core/doctor/doctor_report.h"

namespace nova::ui {

AboutDialog::AboutDialog(const QString& python, const QString& toolkit, QWidget* parent) : QDialog(parent) {
  setWindowTitle(tr("About Nova Studio"));
  resize(820, 480);
  auto* layout = new QVBoxLayout(this);
  auto* title = new QLabel(tr("<h2>Nova Studio %1</h2><p>Profile a PyTorch model, generate fused CUDA "
                              "kernels for its hot ops, prove them correct and faster, ship them.</p>")
                               .arg(nova::build_info::version()),
                           this);
  title->setWordWrap(true);
  layout->addWidget(title);
  report_ = new QPlainTextEdit(this);
  report_->setReadOnly(true);
  report_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  report_->setPlainText(tr("Collecting the environment report…"));
  report_->setObjectName("doctorReport");
  layout->addWidget(report_, 1);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  layout->addWidget(buttons);

  connect(this, &AboutDialog::reportReady, report_, &QPlainTextEdit::setPlainText);
  QPointer<AboutDialog> self(this);
  DoctorOptions options{python.toStdString(), toolkit.toStdString(), true};
  QThread* t = QThread::create([self, options] {
    QString text = QString::fromStdString(collect_doctor_report(options).to_text());
    if (self) emit self->reportReady(text);
  });
  connect(t, &QThread::finished, t, &QObject::deleteLater);
  t->start();
}

QString AboutDialog::reportText() const { return report_->toPlainText(); }

AboutDialog* AboutDialog::open(const QString& python, const QString& toolkit, QWidget* parent) {
  auto* about = new AboutDialog(python, toolkit, parent);
  about->setAttribute(Qt::WA_DeleteOnClose);
  about->show();
  return about;
}

}  // namespace nova::ui
