#pragma once
// The "Kernel editor" dock's content: the version tree of a project above a CUDA editor (with find
// and replace, a Build action and the version's build diagnostics) and a diff view, so the editor
// has the dock's full width. Stored versions are read-only; saving an edit stores a new "user edit"
// version whose parent is the version being edited, and builds it with NVRTC.
#include <QWidget>

#include <optional>
#include <vector>

#include "core/build/diagnostics.h"
#include "core/graph/model_graph.h"

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
class EditBuilder;
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
  // Opens the primary candidate of fusion group `group` (the newest of its rule; not an alternative);
  // a sentence saying what was opened, or why nothing was (the generator declined the group, no
  // such group).
  QString openGroup(int group);
  // The hot-op table's selection (fusion group ids, or node ids whose groups are meant): opens the
  // first one's group.
  QString openSelection(const QList<int>& ids, bool groups, const ModelGraph* graph);
  std::optional<qint64> currentVersion() const { return current_; }
  bool hasUnsavedEdit() const;
  // Stores the editor's text as a user edit of the current version; returns the new version's id.
  std::optional<qint64> saveEdit();
  void showDiff(qint64 left, qint64 right);
  // Compiles the version shown with NVRTC (saving an unsaved edit first); versionBuilt() follows.
  void buildCurrent();
  EditBuilder* builder() const { return builder_; }

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
  // An NVRTC build of the version shown ended; its diagnostics are in the editor and the list.
  void versionBuilt(qint64 id);

 private:
  void updateHeader();
  void showBuild(qint64 id, bool ok, const std::vector<Diagnostic>& diagnostics, const QString& summary);

  ProjectStore& store_;
  std::optional<qint64> current_;
  VersionTreeView* tree_;
  QTabWidget* tabs_;
  QLabel* header_;
  QPushButton* save_;
  QPushButton* build_;
  EditBuilder* builder_;
  CudaEditor* editor_;
  FindReplaceBar* find_;
  DiagnosticsList* diagnostics_;
  DiffView* diff_;
  QLabel* status_;
};

}  // namespace nova::ui
