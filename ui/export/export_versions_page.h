#pragma once
#include <map>

#include <QWizardPage>

class QComboBox;
class QLabel;
class QVBoxLayout;

namespace nova::ui {

class ExportWizard;

// The Export wizard's first page: per fusion group, a combo of its versions with the one the export
// ships pre-selected (the user's choice for export, else the selection policy's). A version that
// cannot ship (not validated, failed, declined, a tie, slower, the generator declined the group) is a
// disabled entry whose tooltip says why, and the page lists those reasons under the group; a group
// without a shippable version shows "PyTorch" and why it stays the client's original code.
class ExportVersionsPage : public QWizardPage {
  Q_OBJECT
 public:
  explicit ExportVersionsPage(ExportWizard& wizard);
  QComboBox* combo(int groupId) const;
  QLabel* reasonLabel(int groupId) const;  // why the group ships what it ships, or a refusal
  bool isComplete() const override;        // false when the project cannot be exported

 private:
  void addGroup(QVBoxLayout* layout, int index);
  void chosen(int index, int row);

  ExportWizard& wizard_;
  QLabel* summary_;
  std::map<int, QComboBox*> combos_;
  std::map<int, QLabel*> reasons_;
};

}  // namespace nova::ui
