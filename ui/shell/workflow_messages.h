#pragma once
#include <optional>

#include <QString>
#include <nlohmann/json.hpp>

#include "core/graph/model_graph.h"
#include "core/jobs/job.h"
#include "core/verify/benchmark_result.h"
#include "core/verify/validation_result.h"

namespace nova::ui {

// The sentences the studio tells the user about the workflow's jobs (status bar, the graph panel),
// written from what the session's jobs returned or stored. Plain functions of their inputs.
class WorkflowMessages {
 public:
  static QString intakeRunning(const QString& model, const QString& progress);
  // `workerStart`: the part of `seconds` spent waiting for the worker's Python and torch
  // (ProjectSession::worker_start_note).
  static QString intakeDone(const QString& model, const ModelGraph& graph, double seconds, double workerStart = 0.0);
  // The graph panel's text: the job's error and the worker's last log lines (the user's traceback).
  static QString intakeFailed(const QString& model, const JobInfo& job);
  // `olderRevision`: the oldest builtin generator revision that wrote a stored group, when an older
  // one did (0: not recorded).
  static QString generating(std::size_t groups, std::optional<int> olderRevision);
  static QString generated(const nlohmann::json& result, std::optional<int> olderRevision);
  static QString evaluated(qint64 version, const std::optional<ValidationResult>& validation,
                           const std::optional<BenchmarkResult>& benchmark);
  static QString jobEnded(const QString& what, const JobInfo& job);
  static QString evaluationNeedsGpu(const QString& why);
  static QString profilingNeedsGpu(const QString& why);
};

}  // namespace nova::ui
