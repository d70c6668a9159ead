#pragma once
// The studio's main window: the model graph in the centre and one dock per workflow stage
// (timeline, hot ops, editor, jobs, results, warnings, the LLM search), the File menu with recent models and Export package…
// (the Export wizard), settings and the About box.
#include <QMainWindow>

#include "core/env/settings.h"
#include "core/graph/model_graph.h"
#include "core/project/project_store.h"
#include "ui/shell/session_backend.h"

class QAction;
class QLabel;
class QStackedWidget;

namespace nova::ui {

class PlaceholderPanel;
class ModelGraphWidget;
class KernelWorkspace;
class LlmPanel;
class LlmLauncher;
class JobsPanel;
class ResultsPanel;
class ProfilePanel;
class StudioSession;
class StageDocks;
class TraceDocks;
class WarningsPanel;
class RecentModelsMenu;

// Menus, docks and wiring only: the workflow runs in the open model's session (StudioSession, the
// engine's jobs), and the views show what its jobs stored, as its signals say.
class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  // `backend`: how sessions are opened and the GPU is found (tests pass a scripted one).
  explicit MainWindow(Settings settings, SessionBackend backend = {}, QWidget* parent = nullptr);
  ~MainWindow() override;

  // Opens a model file; a bad path gives a message box (or a status message when hidden).
  bool openModel(const QString& path);
  QString currentModel() const { return currentModel_; }
  const Settings& settings() const { return settings_; }
  // The placeholder of the graph area ("graph") or of a stage dock (StageDocks' keys).
  PlaceholderPanel* panel(const QString& name) const;
  QStringList dockNames() const;
  ModelGraphWidget* graphWidget() const { return graphWidget_; }
  KernelWorkspace* workspace() const { return workspace_; }
  StudioSession* studio() const { return studio_; }
  ProjectStore* project() const;  // the open model's project (the session's), or null
  JobsPanel* jobsPanel() const { return jobsPanel_; }
  ResultsPanel* resultsPanel() const { return resultsPanel_; }
  ProfilePanel* profilePanel() const { return profilePanel_; }
  WarningsPanel* warningsPanel() const { return warningsPanel_; }
  LlmPanel* llmPanel() const { return llmPanel_; }
  QAction* profileAction() const { return profileAction_; }
  const ModelGraph* graph() const;

 public slots:
  void showOpenModelDialog();
  void showSettings();
  void showAbout();
  void showSource(const QString& file, int line);
  // Validates and benchmarks a stored version as a job (needs a GPU; says so otherwise).
  void validateVersion(qint64 version);
  // Shows a recorded trace (.novatrace, e.g. from a GPU server) on the timeline and hot-op table,
  // attributed to the open model's graph. False (with a message) if it cannot be read or was
  // recorded from another graph.
  bool openTrace(const QString& path);
  // Profiles the open model as a job with the CUPTI tracer (needs a GPU; says so otherwise).
  void profileModel();
  // "Send to generator" from the hot-op table: opens the group's candidate in the editor.
  void sendToGenerator(const QList<int>& ids, bool groups);
  // "Send to LLM": the LLM search on fusion group `group` (graph id) as a job, shown in the LLM dock,
  // with the settings' default provider and its key (environment variable, else the system keychain).
  // False, with the reason in the LLM dock, when it cannot start.
  bool sendToLlm(int group);

 signals:
  void modelOpened(const QString& path);
  // The model's graph is captured from its current text (or intake failed): the views show it.
  void modelSettled(const QString& path, bool ok);
  // The builtin generator's versions for the open model are stored and in the editor; `count`: the
  // versions the project holds.
  void candidatesReady(int count);
  // A version's validation (and benchmark) finished or failed; the message says how.
  void evaluationSettled(qint64 version, const QString& message);
  // A profile (recorded or just traced) is on the timeline, or profiling failed.
  void profileSettled(bool ok, const QString& message);

 private:
  void buildMenus();
  void buildDocks();
  void connectSession();
  void saveSettings();
  void closeProject();
  void showProject();
  void showGraph(bool current);
  void showIntakeFailure(const QString& text);
  void showCandidates(qint64 first);
  void showEvaluation(qint64 version, const QString& message, bool stored);

  Settings settings_;
  QString currentModel_;
  PlaceholderPanel* graphPanel_ = nullptr;
  StageDocks* docks_ = nullptr;
  RecentModelsMenu* recentMenu_ = nullptr;
  QLabel* generatorLabel_ = nullptr;
  QStackedWidget* centre_ = nullptr;
  ModelGraphWidget* graphWidget_ = nullptr;
  KernelWorkspace* workspace_ = nullptr;
  JobsPanel* jobsPanel_ = nullptr;
  ResultsPanel* resultsPanel_ = nullptr;
  ProfilePanel* profilePanel_ = nullptr;
  TraceDocks* traceDocks_ = nullptr;
  WarningsPanel* warningsPanel_ = nullptr;
  LlmPanel* llmPanel_ = nullptr;
  LlmLauncher* llmLauncher_ = nullptr;  // "Send to LLM": its checks, then the search in the panel
  QAction* profileAction_ = nullptr;
  StudioSession* studio_ = nullptr;
};

}  // namespace nova::ui
