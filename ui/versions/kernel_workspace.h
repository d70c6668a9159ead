#pragma once
// The "Kernel editor" dock's content: the version tree of a project beside a CUDA editor (with find
// and replace and the version's build diagnostics) and a diff view. Stored versions are read-only;
// saving an edit stores a new "user edit" version whose parent is the version being edited.
#include <QWidget>

#include <optional>

class QLabel;
class QPushButton;
class QTabWidget;

namespace nova {
class ProjectStore;
}

namespace nova::ui {

class CudaEditor;
class DiagnosticsList;
class DiffView;
class FindReplaceBar;
class VersionTreeView;

class KernelWorkspace : public QWidget {
  Q_OBJECT
 public:
  // `store` must outlive the workspace.
  explicit KernelWorkspace(ProjectStore& store, QWidget* parent = nullptr);

  void openVersion(qint64 id);
  // Reloads the version tree and opens `preferred` (0: the first group's newest version, if any).
  void showStoredCandidates(qint64 preferred = 0);
  // Opens the newest version of fusion group `group` of the model's graph; a sentence saying what
  // was opened, or why nothing was (the generator declined the group, no such group).
  QString openGroup(int group);
  std::optional<qint64> currentVersion() const { return current_; }
  bool hasUnsavedEdit() const;
  // Stores the editor's text as a user edit of the current version; returns the new version's id.
  std::optional<qint64> saveEdit();
  void showDiff(qint64 left, qint64 right);

  CudaEditor* editor() const { return editor_; }
  DiagnosticsList* diagnosticsList() const { return diagnostics_; }
  DiffView* diffView() const { return diff_; }
  VersionTreeView* versionTree() const { return tree_; }
  FindReplaceBar* findBar() const { return find_; }
  QTabWidget* tabs() const { return tabs_; }
  QString status() const;

 signals:
  void versionSaved(qint64 id);
  // A version is in the editor (opened from the tree, by the studio, or just saved).
  void versionShown(qint64 id);

 private:
  void updateHeader();

  ProjectStore& store_;
  std::optional<qint64> current_;
  VersionTreeView* tree_;
  QTabWidget* tabs_;
  QLabel* header_;
  QPushButton* save_;
  CudaEditor* editor_;
  FindReplaceBar* find_;
  DiagnosticsList* diagnostics_;
  DiffView* diff_;
  QLabel* status_;
};

}  // namespace nova::ui
