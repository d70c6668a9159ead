#include "ui/shell/studio_session.h"

#include <algorithm>
#include <thread>

#include <QFileInfo>
#include <QMetaObject>

#include "core/gen/builtin_generator.h"
#include "core/session/stored_generation.h"
#include "core/jobs/child_process_worker_runner.h"
#include "core/project/project_error.h"
#include "core/project/project_location.h"
#include "core/session/project_evidence.h"
#include "ui/shell/workflow_messages.h"

namespace nova::ui {

namespace {
const QString kIntake = "intake", kGenerate = "generate", kProfile = "profile";
QString evaluationRequest(qint64 version) {
  return QString::fromStdString(ProjectSession::evaluation_key(version));
}
}  // namespace

StudioSession::StudioSession(Settings settings, SessionBackend backend, QObject* parent)
    : QObject(parent), settings_(std::move(settings)), backend_(backend.resolved()) {
  qRegisterMetaType<nova::JobInfo>();
}

StudioSession::~StudioSession() {
  if (session_) {
    session_->set_listener({});
    session_.reset();  // cancels its jobs and waits for them
  }
  for (auto& r : retiring_) r.wait();
}

QString StudioSession::modelFileProblem(const QString& path) {
  QFileInfo info(path);
  if (!info.exists()) return tr("%1 does not exist.").arg(path);
  if (!info.isFile() || !info.isReadable()) return tr("%1 is not a readable file.").arg(path);
  if (info.suffix() != "py")
    return tr("%1 is not a Python file: a model is a .py file with Model, get_inputs() and "
              "get_init_inputs().")
        .arg(path);
  return {};
}

bool StudioSession::open(const QString& model, QString* error) {
  retire();
  model_ = model;
  SessionOptions options;
  options.model = model.toStdString();
  options.python = settings_.resolved_python();
  options.gpus = settings_.gpu_lanes;
  options.cpu_threads = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));  // builds
  options.ray_address = settings_.ray_address;
  options.ray_gpu_kind = settings_.ray_gpu_kind;
  damaged_.reset();
  try {
    session_ = backend_.factory(std::move(options));
  } catch (const ProjectError& e) {
    if (e.damaged())
      damaged_ = DamagedProject{QString::fromStdString(e.what()), QString::fromStdString(e.detail()),
                                QString::fromStdString(project_folder_for(model.toStdString()).string())};
    if (error) *error = QString::fromStdString(e.what());
    return false;
  } catch (const std::exception& e) {
    if (error) *error = QString::fromStdString(e.what());
    return false;
  }
  const unsigned serial = ++serial_;
  session_->set_listener([this, serial](const JobInfo& info) {
    QMetaObject::invokeMethod(
        this, [this, serial, info] { onJob(serial, info); }, Qt::QueuedConnection);
  });
  emit opened();
  graph_ = session_->graph();
  const bool current = graph_ && session_->model_unchanged();
  if (graph_) emit graphReady(current);
  if (current)
    startGeneration();
  else
    startIntake();
  return true;
}

void StudioSession::retire() {
  requests_.clear();
  graph_.reset();
  olderRevision_.reset();
  if (!session_) return;
  emit closing();
  session_->set_listener({});  // waits for a call under way; what it posted is dropped (serial)
  ++serial_;
  std::vector<int> unfinished;
  for (const auto& info : session_->jobs().snapshot())
    if (!is_finished(info.state)) unfinished.push_back(info.id);
  for (int id : unfinished) session_->jobs().cancel(id);  // running workers are told to end now
  retiring_.erase(std::remove_if(retiring_.begin(), retiring_.end(),
                                 [](const std::future<void>& r) {
                                   return r.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
                                 }),
                  retiring_.end());
  // The workers end and the queue's threads stop away from the UI thread.
  retiring_.push_back(
      std::async(std::launch::async, [this, old = std::move(session_), unfinished, model = model_]() mutable {
        QList<JobInfo> ended;
        for (int id : unfinished)
          if (auto info = old->jobs().wait(id, std::chrono::minutes(1))) ended << *info;
        old.reset();
        QMetaObject::invokeMethod(
            this, [this, model, ended] { emit retired(model, ended); }, Qt::QueuedConnection);
      }));
}

void StudioSession::startIntake() {
  requests_.track(kIntake, session_->intake());
  emit intakeStarted();
}

void StudioSession::startGeneration() {
  std::size_t todo = 0;
  try {
    // What the generate job will write: the groups the project holds nothing for, and those an
    // older builtin generator revision wrote (new versions beside the stored ones).
    // Groups without a version include those whose storing a kill or a damaged WAL lost: said, not silent.
    const MissingGroups missing = missing_groups(session_->store(), *graph_);
    todo += missing.groups.size();
    if (const std::string lost = missing.lost(); !lost.empty())
      emit message(tr("%1: generating them again").arg(QString::fromStdString(lost)), 0);
    OutdatedGroups outdated = outdated_groups(session_->store(), *graph_);
    if (!outdated.groups.empty()) olderRevision_ = outdated.oldest_revision;
    todo += outdated.groups.size();
  } catch (const std::exception& e) {
    emit message(tr("The project's candidates cannot be read: %1").arg(e.what()), 30000);
  }
  if (todo > 0) emit message(WorkflowMessages::generating(todo, olderRevision_), 0);
  requests_.track(kGenerate, session_->generate());
}

void StudioSession::evaluate(qint64 version) {
  if (!session_) return;
  if (QString why = evaluationGpuMissing(); !why.isEmpty()) {
    emit evaluationSettled(version, WorkflowMessages::evaluationNeedsGpu(why), false);
    return;
  }
  EvaluateOptions options;
  options.copy_reference = settings_.bench_copy_reference;
  options.l2_flush = settings_.bench_l2_flush;
  int job = 0;
  try {
    job = session_->evaluate(version, options);
  } catch (const std::exception& e) {
    emit evaluationSettled(version, tr("Version %1 cannot be validated: %2").arg(version).arg(e.what()),
                           false);
    return;
  }
  // From the first evaluation on, a worker is kept started ahead (torch imported), so each later
  // submission skips that start; each evaluation still runs in a process of its own.
  if (auto* child = dynamic_cast<ChildProcessWorkerRunner*>(&session_->runner()))
    child->keep_standby(true, settings_.gpu_lanes);
  requests_.track(evaluationRequest(version), job);
  emit message(tr("Validating and benchmarking version %1 in the background (job %2)…").arg(version).arg(job),
               0);
}

void StudioSession::profile() {
  if (!session_) {
    emit profileFailed(tr("Open a model first."));
    return;
  }
  if (QString why = gpuMissing(); !why.isEmpty()) {
    emit profileFailed(WorkflowMessages::profilingNeedsGpu(why));
    return;
  }
  requests_.track(kProfile, session_->profile());
  emit message(tr("Profiling %1 with CUPTI…").arg(QFileInfo(model_).fileName()), 0);
}

void StudioSession::onJob(unsigned serial, const JobInfo& info) {
  if (serial != serial_ || !session_) return;  // a replaced session's event
  emit jobChanged(info);
  const std::optional<QString> request = requests_.requestOf(info.id);
  if (!request) return;  // a job a newer request replaced: its result is not shown
  if (!is_finished(info.state)) {
    if (*request == kIntake && !info.message.empty())
      emit message(
          WorkflowMessages::intakeRunning(QFileInfo(model_).fileName(), QString::fromStdString(info.message)),
          0);
    return;
  }
  if (*request == kIntake)
    intakeEnded(info);
  else if (*request == kGenerate)
    generationEnded(info);
  else if (*request == kProfile)
    profileEnded(info);
  else
    evaluationEnded(request->section('v', -1).toLongLong(), info);
}

void StudioSession::intakeEnded(const JobInfo& info) {
  requests_.forget(kIntake);
  const QString name = QFileInfo(model_).fileName();
  if (info.state == JobState::Succeeded) graph_ = session_->graph();
  if (info.state != JobState::Succeeded || !graph_) {
    emit intakeFailed(WorkflowMessages::intakeFailed(name, info));
    return;
  }
  emit graphReady(true);
  emit message(WorkflowMessages::intakeDone(name, *graph_, info.result.value("seconds", 0.0),
                                            info.result.value("worker_start_seconds", 0.0)),
               0);
  startGeneration();
}

void StudioSession::generationEnded(const JobInfo& info) {
  requests_.forget(kGenerate);
  if (info.state != JobState::Succeeded) {
    emit message(WorkflowMessages::jobEnded(tr("The builtin generator"), info), 30000);
    return;
  }
  qint64 first = 0;
  for (const auto& id : info.result.value("primary", nlohmann::json::array()))
    if (id.is_number_integer() && id.get<qint64>() != 0) {
      first = id.get<qint64>();
      break;
    }
  emit message(WorkflowMessages::generated(info.result, olderRevision_), 0);
  olderRevision_.reset();
  emit candidatesStored(first);
}

void StudioSession::evaluationEnded(qint64 version, const JobInfo& info) {
  const QString request = evaluationRequest(version);
  if (info.state == JobState::Succeeded && info.result.contains("gpu_job")) {
    // The build queued the GPU job: follow it (it may have ended before this event arrived).
    const int gpu = info.result["gpu_job"].get<int>();
    requests_.track(request, gpu);
    if (auto g = session_->jobs().info(gpu); g && is_finished(g->state)) evaluationEnded(version, *g);
    return;
  }
  requests_.forget(request);
  if (info.state != JobState::Succeeded) {
    emit evaluationSettled(version, WorkflowMessages::jobEnded(tr("Version %1").arg(version), info), false);
    return;
  }
  const ProjectStore& store = session_->store();
  emit evaluationSettled(
      version,
      WorkflowMessages::evaluated(version, ProjectEvidence::latest_validation(store, version),
                                  ProjectEvidence::latest_benchmark(store, version)),
      true);
}

void StudioSession::profileEnded(const JobInfo& info) {
  requests_.forget(kProfile);
  if (info.state == JobState::Succeeded && info.result.contains("trace_file"))
    emit profileStored(QString::fromStdString(info.result["trace_file"].get<std::string>()));
  else
    emit profileFailed(WorkflowMessages::jobEnded(tr("Profiling failed"), info));
}

}  // namespace nova::ui
