#pragma once
// The studio's LLM dock: runs the LLM search on a fusion group as a job (LlmSearchJob) and shows it
// as it goes: the answer text streaming in as it arrives, the search's progress line, one row per
// candidate (round, lineage, version, outcome, tokens, cost, detail) read back from the project's
// search records, a best-so-far chart of cold time against round, the tokens and cost so far, and a
// Cancel button that cancels the job's CancelToken. Without a GPU the search stores its first candidate
// and stops at its evaluation: the panel says so in plain words.
#include <QWidget>

#include <memory>
#include <optional>
#include <string>

#include "core/jobs/job.h"
#include "core/llm/llm_provider.h"
#include "core/llm/llm_search.h"

class QLabel;
class QPlainTextEdit;
class QPushButton;
class QSpinBox;
class QDoubleSpinBox;
class QTableWidget;

namespace nova {
class LlmSearchStore;
class ProjectSession;
}  // namespace nova

namespace nova::ui {

class LlmBestChart;
class LlmSearchJob;

class LlmPanel : public QWidget {
  Q_OBJECT
 public:
  enum Column { RoundColumn, LineageColumn, VersionColumn, OutcomeColumn, TokensColumn, CostColumn, DetailColumn };
  explicit LlmPanel(QWidget* parent = nullptr);
  ~LlmPanel() override;

  // Starts (or resumes) the search on graph group `group`. `gpuMissing`: why nothing can be evaluated
  // here (empty: a GPU is there). False, with the reason shown, when it cannot start.
  bool start(ProjectSession& session, const LlmProvider& provider, const std::string& key, int group,
             const QString& gpuMissing);
  void cancel();
  // The session is closing: forget it (its destructor ends the job).
  void detach();
  // Says why no search could start (no provider, no key, no model open).
  void showProblem(const QString& text);
  bool running() const { return running_; }
  LlmSearchOptions options() const;

  QString answerText() const;
  QString status() const;
  QString totals() const;
  QTableWidget* candidates() const { return table_; }
  QPushButton* cancelButton() const { return cancel_; }
  LlmBestChart* chart() const { return chart_; }

 public slots:
  // The session's job changes: the search's job ending (a cancel before it started included).
  void jobChanged(const nova::JobInfo& info);

 signals:
  // New candidate versions are stored: the version tree reloads.
  void versionsStored();
  // The search ended: "finished", "stopped", "failed" or "no_gpu", and the sentence shown.
  void searchEnded(const QString& state, const QString& message);

 private:
  void onSaid(const QString& line);
  void onText(int lineage, int round, const QString& delta);
  void onEnded(const QString& state, const QString& reason, qint64 searchId);
  void onFailed(const QString& message, bool noGpu);
  void finish(const QString& state, const QString& message);
  void reload();
  void setStatus(const QString& text, const char* colour = nullptr);

  ProjectSession* session_ = nullptr;
  std::unique_ptr<LlmSearchStore> records_;
  LlmSearchJob* job_;
  int jobId_ = 0;
  bool running_ = false;
  int64_t groupRecord_ = 0;
  int64_t newestBefore_ = 0;  // searches up to this id existed before this one started
  std::optional<int64_t> searchId_;
  std::optional<int64_t> bar_;
  int storedVersions_ = 0;
  int streaming_ = -1;  // lineage * 1000 + round of the answer streaming in
  QString gpuMissing_;

  QLabel* title_;
  QSpinBox* lineages_;
  QSpinBox* rounds_;
  QSpinBox* idleRounds_;
  QDoubleSpinBox* budget_;
  QPushButton* cancel_;
  QLabel* status_;
  QPlainTextEdit* text_;
  QTableWidget* table_;
  LlmBestChart* chart_;
  QLabel* totals_;
};

}  // namespace nova::ui
