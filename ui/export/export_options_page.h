#pragma once
#include <QString>
#include <QWizardPage>

class QCheckBox;
class QLabel;
class QLineEdit;
class QPushButton;

namespace nova::ui {

class ExportWizard;

// The Export wizard's second page: the package name (default nova_<model stem>), the target
// architectures (TORCH_CUDA_ARCH_LIST, default "8.0;9.0+PTX"), the output folder (new or empty; the
// folders above it are made) and the nvcc build check (disabled with the reason without nvcc). Each
// field is checked as it is typed, with the problem shown under it; Next waits for all three.
class ExportOptionsPage : public QWizardPage {
  Q_OBJECT
 public:
  explicit ExportOptionsPage(ExportWizard& wizard);
  QString packageName() const;
  QString archList() const;
  QString outFolder() const;  // as typed, trimmed
  bool checkBuild() const;

  QLineEdit* nameEdit() const { return name_; }
  QLineEdit* archEdit() const { return arch_; }
  QLineEdit* outEdit() const { return out_; }
  QCheckBox* checkBox() const { return check_; }
  QLabel* nameError() const { return nameError_; }
  QLabel* archError() const { return archError_; }
  QLabel* outError() const { return outError_; }
  // Why the output folder cannot be used ("… is not empty"); empty when it can.
  static QString outFolderProblem(const QString& folder);

  bool isComplete() const override;

 private:
  void check();
  void browse();

  ExportWizard& wizard_;
  QLineEdit *name_, *arch_, *out_;
  QLabel *nameError_, *archError_, *outError_, *checkNote_;
  QPushButton* browse_;
  QCheckBox* check_;
};

}  // namespace nova::ui
