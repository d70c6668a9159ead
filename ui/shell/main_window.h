#pragma once
// The studio's main window: the model graph in the centre and one dock per workflow stage
// (timeline, hot ops, editor, jobs, results), the File menu with recent models, settings and the
// About box. Stage views replace the placeholder panels as they arrive.
#include <QMainWindow>
#include <QMap>
#include <QPointer>
#include <memory>

#include "core/build/nvrtc_compiler.h"
#include "core/env/settings.h"
#include "core/graph/model_graph.h"
#include "core/jobs/child_process_worker_runner.h"
#include "core/jobs/job_queue.h"
#include "core/project/project_store.h"
#include "core/trace/attribution.h"
#include "core/trace/trace.h"
#include "core/verify/candidate_evaluator.h"
#include "core/verify/evaluation_jobs.h"

class QMenu;
class QLabel;
class QStackedWidget;
class QDockWidget;

namespace nova::ui {

class PlaceholderPanel;
class ModelGraphWidget;
class KernelWorkspace;
class IntakeJob;
class JobsPanel;
class ResultsPanel;
class ProfilePanel;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit MainWindow(Settings settings, QWidget* parent = nullptr);

  // Opens a model file; a bad path gives a message box (or a status message when quiet).
  bool openModel(const QString& path);
  QString currentModel() const { return currentModel_; }
  const Settings& settings() const { return settings_; }
  PlaceholderPanel* panel(const QString& name) const { return panels_.value(name); }
  QStringList dockNames() const;
  ModelGraphWidget* graphWidget() const { return graphWidget_; }
  KernelWorkspace* workspace() const { return workspace_; }
  ProjectStore* project() const { return project_.get(); }
  JobQueue& jobs() { return jobs_; }
  ResultsPanel* resultsPanel() const { return resultsPanel_; }
  const ModelGraph* graph() const { return hasGraph_ ? &graph_ : nullptr; }

 public slots:
  void showOpenModelDialog();
  void showSettings();
  void showAbout();
  void showSource(const QString& file, int line);
  // Validates and benchmarks a stored version in the background (needs a GPU; says so otherwise).
  void validateVersion(qint64 version);
  // Shows a recorded trace (.novatrace, e.g. from a GPU server) on the timeline and hot-op table,
  // attributed to the open model's graph. False (with a message) if it cannot be read.
  bool openTrace(const QString& path);
  // Profiles the open model in the background with the CUPTI tracer (needs a GPU; says so otherwise).
  void profileModel();
  // "Send to generator" from the hot-op table: opens the group's candidate in the editor.
  void sendToGenerator(const QList<int>& ids, bool groups);
  ProfilePanel* profilePanel() const { return profilePanel_; }

 signals:
  void modelOpened(const QString& path);
  // The model's intake finished (or failed): every view shows its final state.
  void modelSettled(const QString& path, bool ok);
  // The builtin generator's candidates for the open model are in the project and the editor.
  void candidatesReady(int count);
  // A version's validation (and benchmark) finished or failed; the message says how.
  void evaluationSettled(qint64 version, const QString& message);
  // A profile (recorded or just traced) is on the timeline, or profiling failed.
  void profileSettled(bool ok, const QString& message);

 protected:
  void showEvent(QShowEvent* event) override;

 private:
  void buildMenus();
  void buildDocks();
  void rebuildRecentMenu();
  void saveSettings();
  void startIntake();
  void intakeSucceeded(const ModelGraph& graph, double seconds);
  void intakeFailed(const QString& message, const QString& details);
  void openProject();
  // Shows the stored candidates; generates those of groups not generated yet or written by an older
  // builtin generator revision (as new versions: stored ones are kept).
  void generateCandidates();
  void showStoredCandidates();
  void evaluationFinished(int job);

  Settings settings_;
  QString currentModel_;
  QMap<QString, PlaceholderPanel*> panels_;
  QMenu* recentMenu_ = nullptr;
  QMenu* viewMenu_ = nullptr;
  QLabel* generatorLabel_ = nullptr;
  QStackedWidget* centre_ = nullptr;
  ModelGraphWidget* graphWidget_ = nullptr;
  QDockWidget* editorDock_ = nullptr;
  QDockWidget* rightDock_ = nullptr;
  QDockWidget* bottomDock_ = nullptr;
  bool docksSized_ = false;
  KernelWorkspace* workspace_ = nullptr;
  std::unique_ptr<ProjectStore> project_;
  QPointer<IntakeJob> intake_;  // the current intake; results of older ones are ignored
  ModelGraph graph_;
  bool hasGraph_ = false;
  // Background work: the job queue (CPU lane for builds, GPU lane for validation and benchmarks),
  // the worker processes it runs, and which evaluation job belongs to which stored version.
  JobQueue jobs_;
  ChildProcessWorkerRunner runner_;
  NvrtcCompiler compiler_;
  std::unique_ptr<CandidateEvaluator> evaluator_;
  std::unique_ptr<EvaluationJobs> evaluation_;
  JobsPanel* jobsPanel_ = nullptr;
  ResultsPanel* resultsPanel_ = nullptr;
  ProfilePanel* profilePanel_ = nullptr;
  void showProfile(std::shared_ptr<const Trace> trace, const AttributionResult& attribution);
  QMap<int, qint64> jobVersion_;  // build or GPU job id -> version id
};

}  // namespace nova::ui
