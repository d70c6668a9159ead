#pragma once
// The version tree panel of the kernel workspace: the VersionTreeModel of a project in a tree view,
// with "Diff selected" (two versions), "Validate & benchmark" (emitted for the jobs system to run;
// disabled with the reason on a machine without a GPU) and "Choose for export" (written to the
// project store; only for a version that passed validation and is faster than eager beyond the
// noise, not declined or a tie). Its context menu adds "Diff against parent" (an LLM candidate or a
// user edit against the version it was derived from) and "Send to LLM" (the search on its group).
#include <QWidget>

#include <optional>

class QLabel;
class QPushButton;
class QTreeView;

namespace nova {
class ProjectStore;
}

namespace nova::ui {

class VersionTreeModel;

class VersionTreeView : public QWidget {
  Q_OBJECT
 public:
  // `store` must outlive the view.
  explicit VersionTreeView(ProjectStore& store, QWidget* parent = nullptr);

  void refresh();  // reloads from the store, keeping the selection
  void selectVersions(const QList<qint64>& ids);
  QList<qint64> selectedVersions() const;
  QString message() const;
  VersionTreeModel* model() const { return model_; }
  QTreeView* tree() const { return tree_; }

  void diffSelected();
  // The selected version against the version it was derived from (older on the left).
  void diffAgainstParent();
  void validateSelected();
  void chooseSelectedForExport();
  // Why validation cannot run here (no GPU); empty when it can.
  void setGpuMissing(const QString& why);
  // Why version `id` cannot be chosen for export; empty when it can.
  QString exportProblem(qint64 id) const;
  QPushButton* validateButton() const { return validate_; }
  QPushButton* exportButton() const { return export_; }

 signals:
  void versionActivated(qint64 id);
  void diffRequested(qint64 left, qint64 right);
  void validateRequested(qint64 id);
  void sendToLlmRequested(qint64 id);

 private:
  void updateButtons();
  void setMessage(const QString& text);

  ProjectStore& store_;
  VersionTreeModel* model_;
  QTreeView* tree_;
  QPushButton* diff_;
  QPushButton* validate_;
  QPushButton* export_;
  QLabel* message_;
  QString gpuMissing_;
};

}  // namespace nova::ui
