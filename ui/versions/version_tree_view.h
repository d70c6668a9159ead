#pragma once
// The version tree panel of the kernel workspace: the VersionTreeModel of a project in a tree view,
// with "Diff selected" (two versions), "Validate & benchmark" (emitted for the jobs system to run;
// until something listens, a message says validation is not available yet) and "Choose for export"
// (written to the project store).
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
  void validateSelected();
  void chooseSelectedForExport();

 signals:
  void versionActivated(qint64 id);
  void diffRequested(qint64 left, qint64 right);
  void validateRequested(qint64 id);

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
};

}  // namespace nova::ui
