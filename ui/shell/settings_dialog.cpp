#include "ui/shell/settings_dialog.h"

#include <algorithm>

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPointer>
#include <QPushButton>
#include <QSpinBox>
#include <QThread>

#include "core/doctor/doctor_report.h"
#include "core/env/resource_paths.h"
#include "ui/llm/llm_provider_form.h"

namespace nova::ui {

SettingsDialog::SettingsDialog(const Settings& settings, QWidget* parent) : QDialog(parent), base_(settings) {
  setWindowTitle(tr("Settings"));
  auto* form = new QFormLayout;

  python_ = new QLineEdit(QString::fromStdString(settings.python), this);
  python_->setPlaceholderText(QString::fromStdString(default_python()));
  python_->setObjectName("pythonEdit");
  auto* browsePy = new QPushButton(tr("Browse…"), this);
  checkButton_ = new QPushButton(tr("Check"), this);
  auto* pyRow = new QHBoxLayout;
  pyRow->addWidget(python_, 1);
  pyRow->addWidget(browsePy);
  pyRow->addWidget(checkButton_);
  form->addRow(tr("Worker Python:"), pyRow);
  pythonStatus_ = new QLabel(tr("Workers run your model with this interpreter; it needs torch."), this);
  pythonStatus_->setWordWrap(true);
  pythonStatus_->setObjectName("pythonStatus");
  form->addRow(QString(), pythonStatus_);

  toolkit_ = new QLineEdit(QString::fromStdString(settings.cuda_toolkit), this);
  toolkit_->setPlaceholderText(QString::fromStdString(Settings{}.resolved_cuda_toolkit()));
  auto* browseTk = new QPushButton(tr("Browse…"), this);
  auto* tkRow = new QHBoxLayout;
  tkRow->addWidget(toolkit_, 1);
  tkRow->addWidget(browseTk);
  form->addRow(tr("CUDA toolkit:"), tkRow);

  copyReference_ = new QCheckBox(tr("Time a copy of the group's bytes alongside (the memory floor)"), this);
  copyReference_->setObjectName("copyReference");
  copyReference_->setChecked(settings.bench_copy_reference);
  form->addRow(tr("Benchmarks:"), copyReference_);
  l2Flush_ = new QComboBox(this);
  l2Flush_->setObjectName("l2Flush");
  l2Flush_->addItem(tr("Clean: 256 MB written, then 2x L2 read (no dirty line left to write back)"), "clean");
  l2Flush_->addItem(tr("Dirty: 256 MB written only (the call writes the flush's lines back)"), "dirty");
  l2Flush_->setCurrentIndex(std::max(0, l2Flush_->findData(QString::fromStdString(settings.bench_l2_flush))));
  form->addRow(tr("Cold-mode L2 flush:"), l2Flush_);

  gpuLanes_ = new QSpinBox(this);
  gpuLanes_->setObjectName("gpuLanes");
  gpuLanes_->setRange(1, 64);
  gpuLanes_->setValue(settings.gpu_lanes);
  gpuLanes_->setToolTip(tr("GPUs used at once, one worker each; benchmarks stay alone on their GPU"));
  form->addRow(tr("GPU lanes:"), gpuLanes_);
  rayAddress_ = new QLineEdit(QString::fromStdString(settings.ray_address), this);
  rayAddress_->setObjectName("rayAddress");
  rayAddress_->setPlaceholderText(tr("empty: this machine's GPUs; host:port: a Ray cluster's head"));
  rayAddress_->setToolTip(tr("Validation and benchmarks run on the Ray cluster as tasks of one GPU each "
                             "(nova optimize --ray). Needs ray in the worker Python. LLM-written code "
                             "still runs here, in its sandbox."));
  form->addRow(tr("Ray cluster:"), rayAddress_);
  rayGpuKind_ = new QLineEdit(QString::fromStdString(settings.ray_gpu_kind), this);
  rayGpuKind_->setObjectName("rayGpuKind");
  rayGpuKind_->setPlaceholderText(tr("empty: the cluster's only GPU kind (such as H100)"));
  form->addRow(tr("Ray GPU kind:"), rayGpuKind_);
  llm_ = new LlmProviderForm(settings.llm_providers, settings.llm_default_provider, this);
  llm_->setObjectName("llmProviderForm");
  form->addRow(llm_);

  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(form);
  layout->addWidget(buttons);

  connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  connect(browsePy, &QPushButton::clicked, this, [this] {
    QString f = QFileDialog::getOpenFileName(this, tr("Python interpreter"), python_->text());
    if (!f.isEmpty()) python_->setText(f);
  });
  connect(browseTk, &QPushButton::clicked, this, [this] {
    QString d = QFileDialog::getExistingDirectory(this, tr("CUDA toolkit folder"), toolkit_->text());
    if (!d.isEmpty()) toolkit_->setText(d);
  });
  connect(checkButton_, &QPushButton::clicked, this, &SettingsDialog::checkPython);
  connect(this, &SettingsDialog::pythonChecked, this, [this](const QString& summary, bool ok) {
    pythonStatus_->setText(summary);
    pythonStatus_->setStyleSheet(ok ? "color: #2e7d32" : "color: #c62828");
    checkButton_->setEnabled(true);
  });
}

Settings SettingsDialog::settings() const {
  Settings s = base_;
  s.python = python_->text().trimmed().toStdString();
  s.cuda_toolkit = toolkit_->text().trimmed().toStdString();
  s.llm_providers = llm_->providers();
  s.llm_default_provider = llm_->defaultProvider();
  s.bench_copy_reference = copyReference_->isChecked();
  s.bench_l2_flush = l2Flush_->currentData().toString().toStdString();
  s.gpu_lanes = gpuLanes_->value();
  s.ray_address = rayAddress_->text().trimmed().toStdString();
  s.ray_gpu_kind = rayGpuKind_->text().trimmed().toStdString();
  return s;
}

void SettingsDialog::checkPython() {
  checkButton_->setEnabled(false);
  pythonStatus_->setText(tr("Checking…"));
  std::string interpreter = settings().resolved_python();
  QPointer<SettingsDialog> self(this);
  // Importing torch takes seconds: never on the UI thread.
  QThread* t = QThread::create([self, interpreter] {
    PythonInfo info = probe_python(interpreter);
    QString summary;
    bool ok = info.ran && info.torch_ok;
    if (!info.ran)
      summary = QString::fromStdString(info.error);
    else if (!info.torch_ok)
      summary = tr("Python %1 runs, but torch cannot be imported: %2")
                    .arg(QString::fromStdString(info.version), QString::fromStdString(info.torch_error));
    else
      summary = tr("Python %1, torch %2 (CUDA %3), GPU %4")
                    .arg(QString::fromStdString(info.version), QString::fromStdString(info.torch_version),
                         QString::fromStdString(info.torch_cuda.empty() ? "none" : info.torch_cuda),
                         info.cuda_available ? tr("available") : tr("not available"));
    if (self) emit self->pythonChecked(summary, ok);
  });
  connect(t, &QThread::finished, t, &QObject::deleteLater);
  t->start();
}

}  // namespace nova::ui
