#include "ui/export/export_options_page.h"

#include <QCheckBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QVBoxLayout>

#include "core/export/export_error.h"
#include "core/export/export_planner.h"
#include "ui/export/export_wizard.h"

namespace nova::ui {
namespace {

QLabel* problemLabel(QWidget* parent) {
  auto* l = new QLabel(parent);
  l->setWordWrap(true);
  l->setStyleSheet("color: #b00020;");
  l->setTextInteractionFlags(Qt::TextSelectableByMouse);
  l->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred);
  return l;
}

// The check's message, or empty when `check` accepts.
template <typename Check>
QString problem(Check check) {
  try {
    check();
    return {};
  } catch (const std::exception& e) {
    return QString::fromUtf8(e.what());
  }
}

}  // namespace

ExportOptionsPage::ExportOptionsPage(ExportWizard& wizard) : wizard_(wizard) {
  setTitle(tr("Package"));
  setSubTitle(tr("The Python package's name (also its ops' namespace), the GPU architectures it builds for, "
                 "and where it is written."));
  auto* form = new QFormLayout(this);
  form->setFieldGrowthPolicy(QFormLayout::ExpandingFieldsGrow);
  // Each field with its problem under it, in one row: the problem wraps at the field's width.
  auto addRow = [&](const QString& label, QWidget* buddy, QLayout* field, QLabel* error) {
    auto* column = new QVBoxLayout;
    column->setSpacing(2);
    column->addLayout(field);
    column->addWidget(error);
    auto* l = new QLabel(label, this);
    l->setBuddy(buddy);
    form->addRow(l, column);
  };
  auto single = [](QWidget* w) {
    auto* row = new QHBoxLayout;
    row->addWidget(w);
    return row;
  };
  name_ = new QLineEdit(QString::fromStdString(ExportPlanner::default_package_name(wizard_.choices().modelPath())), this);
  name_->setToolTip(tr("A Python identifier: the package's import name and its ops' namespace"));
  nameError_ = problemLabel(this);
  addRow(tr("Package &name:"), name_, single(name_), nameError_);
  arch_ = new QLineEdit(QString::fromStdString(ExportOptions{}.arch_list), this);
  arch_->setToolTip(tr("TORCH_CUDA_ARCH_LIST of the package's build: compute capabilities separated by ';', "
                       "'+PTX' for code that later GPUs compile at load (8.0: A100, 9.0: H100/H200)"));
  archError_ = problemLabel(this);
  addRow(tr("Target &architectures:"), arch_, single(arch_), archError_);
  out_ = new QLineEdit(this);
  out_->setPlaceholderText(tr("a new or empty folder; the folders above it are created"));
  browse_ = new QPushButton(tr("&Browse…"), this);
  auto* outRow = new QHBoxLayout;
  outRow->addWidget(out_, 1);
  outRow->addWidget(browse_);
  outError_ = problemLabel(this);
  addRow(tr("&Output folder:"), out_, outRow, outError_);
  check_ = new QCheckBox(tr("&Check that the C++ compiles with nvcc (sm_90) before the package is moved into place"),
                         this);
  checkNote_ = new QLabel(this);
  checkNote_->setWordWrap(true);
  auto* checkColumn = new QVBoxLayout;
  checkColumn->addWidget(check_);
  checkColumn->addWidget(checkNote_);
  form->addRow(QString(), checkColumn);
  if (const QString why = wizard_.nvccProblem(); !why.isEmpty()) {
    check_->setEnabled(false);
    check_->setToolTip(tr("Not available: %1").arg(why));
    checkNote_->setText(tr("Not available: %1").arg(why));
  } else {
    check_->setToolTip(tr("Compiles every source of the package with nvcc (object files only), as "
                          "`nova export --check-build`; takes a minute or more"));
    checkNote_->hide();
  }
  connect(name_, &QLineEdit::textChanged, this, &ExportOptionsPage::check);
  connect(arch_, &QLineEdit::textChanged, this, &ExportOptionsPage::check);
  connect(out_, &QLineEdit::textChanged, this, &ExportOptionsPage::check);
  connect(browse_, &QPushButton::clicked, this, &ExportOptionsPage::browse);
  check();
}

QString ExportOptionsPage::packageName() const { return name_->text().trimmed(); }
QString ExportOptionsPage::archList() const { return arch_->text().trimmed(); }
QString ExportOptionsPage::outFolder() const { return out_->text().trimmed(); }
bool ExportOptionsPage::checkBuild() const { return check_->isEnabled() && check_->isChecked(); }

QString ExportOptionsPage::outFolderProblem(const QString& folder) {
  if (folder.isEmpty()) return tr("Choose the folder the package is written into.");
  if (QDir::isRelativePath(folder)) return tr("Give the folder's full path (%1 is relative).").arg(folder);
  const QFileInfo info(folder);
  if (info.exists() && !info.isDir()) return tr("%1 is a file: choose a folder.").arg(folder);
  if (info.isDir() && !QDir(folder).isEmpty(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden | QDir::System))
    return tr("%1 is not empty: choose a new or empty folder (nothing in it is replaced).").arg(folder);
  return {};
}

void ExportOptionsPage::check() {
  nameError_->setText(problem([&] { ExportPlanner::check_package_name(packageName().toStdString()); }));
  archError_->setText(problem([&] { ExportPlanner::check_arch_list(archList().toStdString()); }));
  outError_->setText(outFolderProblem(outFolder()));
  // An empty field is a hint, not an error.
  outError_->setStyleSheet(outFolder().isEmpty() ? "color: palette(mid);" : "color: #b00020;");
  for (QLabel* l : {nameError_, archError_, outError_}) l->setVisible(!l->text().isEmpty());
  emit completeChanged();
}

void ExportOptionsPage::browse() {
  const QString start = outFolder().isEmpty() ? QFileInfo(QString::fromStdString(wizard_.choices().modelPath())).absolutePath()
                                              : outFolder();
  const QString picked = QFileDialog::getExistingDirectory(this, tr("Where to write the package"), start);
  if (picked.isEmpty()) return;
  // An empty folder is the package's; into a folder that holds files, the package goes as a new folder.
  const bool empty = QDir(picked).isEmpty(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden | QDir::System);
  out_->setText(empty ? picked : QDir(picked).filePath(packageName()));
}

bool ExportOptionsPage::isComplete() const {
  return nameError_->text().isEmpty() && archError_->text().isEmpty() && outFolderProblem(outFolder()).isEmpty();
}

}  // namespace nova::ui
