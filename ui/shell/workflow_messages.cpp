#include "ui/shell/workflow_messages.h"

#include <QObject>

#include "core/gen/builtin_generator.h"
#include "core/session/project_session.h"

namespace nova::ui {

namespace {
QString tr(const char* text) { return QObject::tr(text); }
}  // namespace

QString WorkflowMessages::intakeRunning(const QString& model, const QString& progress) {
  return tr("Intake of %1: %2").arg(model, progress);
}

QString WorkflowMessages::intakeDone(const QString& model, const ModelGraph& graph, double seconds, double workerStart) {
  QString warnings;
  for (const auto& w : graph.warnings) warnings += "  ⚠ " + QString::fromStdString(w);
  const QString start = QString::fromStdString(ProjectSession::worker_start_note(workerStart));
  return tr("%1: %2 nodes, %3 fusion groups, captured by %4 in %5 s%6%7")
      .arg(model)
      .arg(graph.nodes.size())
      .arg(graph.groups.size())
      .arg(QString::fromStdString(graph.capture_route))
      .arg(seconds, 0, 'f', 1)
      .arg(start)
      .arg(warnings);
}

QString WorkflowMessages::intakeFailed(const QString& model, const JobInfo& job) {
  QString error = QString::fromStdString(job.error.empty() ? to_string(job.state) : job.error);
  QString text = tr("Intake of %1 failed:\n%2").arg(model, error);
  constexpr std::size_t kTail = 30;  // the worker's last lines hold the user's traceback
  const std::size_t from = job.log.size() > kTail ? job.log.size() - kTail : 0;
  QStringList tail;
  for (std::size_t i = from; i < job.log.size(); ++i) tail << QString::fromStdString(job.log[i]);
  if (!tail.isEmpty()) text += "\n\n" + tail.join('\n');
  return text;
}

QString WorkflowMessages::generating(std::size_t groups, std::optional<int> olderRevision) {
  return (olderRevision ? tr("The builtin generator changed since this project was generated: ")
                        : QString()) +
         tr("Builtin generator: writing kernels for %1 fusion groups…").arg(groups);
}

QString WorkflowMessages::generated(const nlohmann::json& r, std::optional<int> olderRevision) {
  const int groups = r.value("groups", 0), added = r.value("added", 0), declined = r.value("declined", 0),
            failed = r.value("failed_builds", 0);
  const int alternatives = r.contains("alternatives") ? static_cast<int>(r["alternatives"].size()) : 0;
  if (olderRevision) {
    QString from = *olderRevision > 0 ? QString::number(*olderRevision) : tr("unrecorded");
    QString what = added == 0   ? tr("its kernels for this model are unchanged")
                   : added == 1 ? tr("added 1 new version; earlier versions are kept")
                                : tr("added %1 new versions; earlier versions are kept").arg(added);
    return tr("The builtin generator changed since this project was generated (revision %1 → %2): %3")
        .arg(from)
        .arg(kBuiltinGeneratorRevision)
        .arg(what);
  }
  if (groups == 0)
    return tr("Every fusion group's kernels are in the project, written by the current builtin generator.");
  return tr("Builtin generator: %1 candidates, %2 compiled with NVRTC, %3 declined%4")
      .arg(groups - declined)
      .arg(groups - declined - failed)
      .arg(declined)
      .arg(alternatives == 0 ? QString()
                             : tr("; %1 alternative forms beside them (tensor-core GEMM): validate and "
                                  "benchmark each, and export the faster one that passes")
                                   .arg(alternatives));
}

QString WorkflowMessages::evaluated(qint64 version, const std::optional<ValidationResult>& validation,
                                    const std::optional<BenchmarkResult>& benchmark) {
  QStringList parts;
  if (validation) parts << QString::fromStdString(validation->verdict);
  if (benchmark) parts << QString::fromStdString(benchmark->verdict.sentence);
  if (parts.isEmpty()) parts << tr("no result was stored");
  return tr("Version %1: %2").arg(version).arg(parts.join("; "));
}

QString WorkflowMessages::jobEnded(const QString& what, const JobInfo& job) {
  return tr("%1: %2").arg(what, QString::fromStdString(job.error.empty() ? to_string(job.state) : job.error));
}

QString WorkflowMessages::evaluationNeedsGpu(const QString& why) {
  return tr("Validation and benchmarks need a GPU (%1); intake, generation and the editor work without one.")
      .arg(why);
}

QString WorkflowMessages::profilingNeedsGpu(const QString& why) {
  return tr("Profiling needs a GPU (%1). A trace recorded on a GPU machine opens with File > Open trace.")
      .arg(why);
}

}  // namespace nova::ui
