#pragma once
#include <future>
#include <memory>
#include <optional>
#include <vector>

#include <QList>
#include <QObject>
#include <QString>

#include "core/env/settings.h"
#include "core/graph/model_graph.h"
#include "core/jobs/job.h"
#include "ui/shell/request_tracker.h"
#include "ui/shell/session_backend.h"

namespace nova::ui {

// The studio's hold on the engine: owns the ProjectSession of the open model and turns its job
// listener into Qt signals delivered on the UI thread. Opening a model runs the workflow as the
// session's jobs (the stored graph at once, intake unless the stored graph was captured from the
// model's current text, then the builtin generator for missing or outdated groups); Validate &
// benchmark and Profile are jobs too. Opening another model replaces the session: the old one's jobs
// are cancelled and its workers end (in the background), and nothing the old session's jobs return
// is shown; within a session only a request's latest job is shown (RequestTracker). Every result is
// stored by the session's jobs; the signals say where to read it back.
class StudioSession : public QObject {
  Q_OBJECT
 public:
  StudioSession(Settings settings, SessionBackend backend, QObject* parent = nullptr);
  ~StudioSession() override;  // cancels the open session's jobs and waits for every worker to end

  // Why `path` cannot be a model (missing, unreadable, not a .py file); empty when it can.
  static QString modelFileProblem(const QString& path);

  // Opens the model's project (replacing the open one) and starts the workflow. False with `error`
  // when the project cannot be opened; the previous session is closed either way.
  bool open(const QString& model, QString* error = nullptr);
  // Why the last open() failed, when the project file is damaged (not a database, damaged pages, no
  // Nova schema): the readable sentence, SQLite's check output, and the project folder, so the
  // window can offer to move the damaged file aside (DamagedProjectPrompt). Unset otherwise.
  struct DamagedProject {
    QString message, detail, folder;
  };
  const std::optional<DamagedProject>& lastDamagedProject() const { return damaged_; }
  void setSettings(Settings settings) { settings_ = std::move(settings); }

  ProjectSession* session() const { return session_.get(); }
  QString model() const { return model_; }
  const ModelGraph* graph() const { return graph_ ? &*graph_ : nullptr; }
  // Empty when validation, benchmarks and profiling can run here; otherwise why not.
  QString gpuMissing() const { return backend_.gpu(); }
  // Why validation and benchmarks cannot run (empty: they can): with a Ray cluster set they run there.
  QString evaluationGpuMissing() const { return settings_.ray_address.empty() ? backend_.gpu() : QString(); }

  // Validates and benchmarks a stored version as the session's jobs (the build, then the GPU job);
  // without a GPU, says so (evaluationSettled) and runs nothing.
  void evaluate(qint64 version);
  // Profiles the model with the CUPTI tracer as a session job; without a GPU, says so.
  void profile();

 signals:
  // The open session is about to go: drop every reference to its store and queue.
  void closing();
  // A new session is open (session() is it).
  void opened();
  // A job of the open session changed: state, progress, a log line.
  void jobChanged(const nova::JobInfo& info);
  // A replaced session's unfinished jobs, as they ended once its workers had stopped.
  void retired(const QString& model, const QList<nova::JobInfo>& ended);
  void message(const QString& text, int timeoutMs);
  void intakeStarted();
  // graph() holds the model's graph: stored (captured from the model's current text or not) or just
  // captured by intake (`captured`).
  void graphReady(bool captured);
  void intakeFailed(const QString& text);
  // The builtin generator's versions are stored; `first` is the first group's new primary (0: none new).
  void candidatesStored(qint64 first);
  // A version's evaluation ended; `stored`: its results are in the project (read them back).
  void evaluationSettled(qint64 version, const QString& message, bool stored);
  // A profile's trace is stored in the project (its file), or profiling failed.
  void profileStored(const QString& traceFile);
  void profileFailed(const QString& message);

 private:
  void retire();
  void startIntake();
  void startGeneration();
  void onJob(unsigned serial, const JobInfo& info);
  void intakeEnded(const JobInfo& info);
  void generationEnded(const JobInfo& info);
  void evaluationEnded(qint64 version, const JobInfo& info);
  void profileEnded(const JobInfo& info);

  Settings settings_;
  SessionBackend backend_;
  std::unique_ptr<ProjectSession> session_;
  QString model_;
  std::optional<ModelGraph> graph_;
  std::optional<int> olderRevision_;  // the generation under way replaces an older generator's kernels
  unsigned serial_ = 0;               // which session the listener's events belong to
  std::optional<DamagedProject> damaged_;
  RequestTracker requests_;
  std::vector<std::future<void>> retiring_;  // replaced sessions whose workers are ending
};

}  // namespace nova::ui
