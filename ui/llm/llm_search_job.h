#pragma once
// Runs the LLM search (core/llm/llm_search.h) on one fusion group as a job of the open project's
// session (CPU lane; it queues each candidate's evaluation as the session's jobs), so it shows in the
// Jobs panel, never runs on the GUI thread, and stops when the job's CancelToken is cancelled. What the
// search says, the answer text as it streams and how it ended come back as signals, which Qt queues
// to the GUI thread. The API key is captured for the LLM client only: not in the job's title, log or
// result, nor in any environment.
#include <QObject>
#include <QString>

#include "core/llm/llm_provider.h"
#include "core/llm/llm_search.h"

namespace nova {
class ProjectSession;
}

namespace nova::ui {

class LlmSearchJob : public QObject {
  Q_OBJECT
 public:
  explicit LlmSearchJob(QObject* parent = nullptr) : QObject(parent) {}
  // Submits the search; returns the job's id. The session must outlive the job (the session's
  // destructor cancels it and waits). Emits nothing from this call itself.
  int start(ProjectSession& session, const LlmProvider& provider, const std::string& key, int group,
            const LlmSearchOptions& options);

 signals:
  void said(const QString& line);
  void textArrived(int lineage, int round, const QString& delta);
  // The search returned: "finished", "stopped" (cancelled or a budget: resumable) or "failed".
  void ended(const QString& state, const QString& reason, qint64 searchId);
  // It threw: `noGpu` when it stopped at an evaluation this machine cannot run (NoGpuError).
  void failed(const QString& message, bool noGpu);
};

}  // namespace nova::ui
