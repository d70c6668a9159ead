#include "ui/shell/main_window.h"

#include <QAction>
#include <QApplication>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QStatusBar>

#include <QFile>
#include <QStackedWidget>

#include <QThread>
#include <QTimer>
#include <fstream>

#include <fmt/format.h>

#include "core/doctor/doctor_report.h"
#include "core/env/resource_paths.h"
#include "core/gen/builtin_generator.h"
#include "core/gen/generation_run.h"
#include "core/gen/stored_generation.h"
#include "core/project/project_error.h"
#include "core/project/project_location.h"
#include "core/trace/profile_runner.h"
#include "core/trace/trace_reader.h"
#include "ui/graph/model_graph_widget.h"
#include "ui/jobs/jobs_panel.h"
#include "ui/results/results_panel.h"
#include "ui/shell/about_dialog.h"
#include "ui/shell/intake_job.h"
#include "ui/shell/placeholder_panel.h"
#include "ui/shell/settings_dialog.h"
#include "ui/shell/source_viewer.h"
#include "ui/trace/profile_panel.h"
#include "ui/versions/kernel_workspace.h"
#include "ui/versions/version_tree_view.h"

namespace nova::ui {

namespace {
JobQueue::Options job_options() {
  JobQueue::Options o;
  o.results_dir = projects_root() / "jobs";
  return o;
}
}  // namespace

MainWindow::MainWindow(Settings settings, QWidget* parent)
    : QMainWindow(parent),
      settings_(std::move(settings)),
      jobs_(job_options()),
      runner_(settings_.resolved_python()) {
  evaluator_ = std::make_unique<CandidateEvaluator>(runner_, compiler_, projects_root() / "work");
  evaluation_ = std::make_unique<EvaluationJobs>(jobs_, *evaluator_, runner_, EvaluationJobs::Options{});
  setWindowTitle(tr("Nova Studio"));
  setWindowIcon(QIcon(":/nova/nova.svg"));
  resize(1400, 900);
  setDockOptions(QMainWindow::AnimatedDocks | QMainWindow::AllowTabbedDocks);
  buildDocks();
  buildMenus();
  generatorLabel_ = new QLabel(this);
  statusBar()->addPermanentWidget(generatorLabel_);
  generatorLabel_->setText(tr("Generator: %1").arg(QString::fromStdString(settings_.default_generator)));
  statusBar()->showMessage(tr("Open a model to begin (File > Open model…)"));
}

void MainWindow::buildDocks() {
  // The centre shows the graph once intake has captured it, and a message panel until then.
  auto* graph =
      new PlaceholderPanel(tr("Model graph"), tr("Open a model to begin: File > Open model…"), this);
  panels_.insert("graph", graph);
  graphWidget_ = new ModelGraphWidget(this);
  centre_ = new QStackedWidget(this);
  centre_->addWidget(graph);
  centre_->addWidget(graphWidget_);
  setCentralWidget(centre_);
  connect(graphWidget_, &ModelGraphWidget::openSourceRequested, this, &MainWindow::showSource);

  struct DockSpec {
    const char* key;
    QString title;
    QString message;
    Qt::DockWidgetArea area;
  };
  const DockSpec specs[] = {
      {"hotops", tr("Hot ops"), tr("Profile the model to rank its ops by GPU time."),
       Qt::RightDockWidgetArea},
      {"editor", tr("Kernel editor"), tr("Generated CUDA kernels appear here for review and editing."),
       Qt::RightDockWidgetArea},
      {"timeline", tr("Timeline"), tr("A CUPTI timeline of the model's kernels appears after profiling."),
       Qt::BottomDockWidgetArea},
      {"jobs", tr("Jobs"), tr("Background work (intake, profiling, builds, validation) is listed here."),
       Qt::BottomDockWidgetArea},
      {"results", tr("Results"), tr("Validation and benchmark results of candidates appear here."),
       Qt::RightDockWidgetArea},
  };
  QDockWidget* firstRight = nullptr;
  QDockWidget* firstBottom = nullptr;
  for (const auto& s : specs) {
    auto* panel = new PlaceholderPanel(s.title, s.message, this);
    panels_.insert(s.key, panel);
    auto* dock = new QDockWidget(s.title, this);
    if (QString(s.key) == "editor") editorDock_ = dock;
    dock->setObjectName(QString("dock_") + s.key);
    dock->setWidget(panel);
    addDockWidget(s.area, dock);
    QDockWidget*& first = s.area == Qt::RightDockWidgetArea ? firstRight : firstBottom;
    if (!first)
      first = dock;
    else
      tabifyDockWidget(first, dock);  // hot ops | editor on the right; timeline | jobs | results below
  }
  // The jobs and results docks hold their real panels.
  jobsPanel_ = new JobsPanel(jobs_, this);
  resultsPanel_ = new ResultsPanel(this);
  for (auto* dock : findChildren<QDockWidget*>()) {
    if (dock->objectName() == "dock_jobs") dock->setWidget(jobsPanel_);
    if (dock->objectName() == "dock_results") dock->setWidget(resultsPanel_);
  }
  connect(jobsPanel_, &JobsPanel::jobFinished, this, &MainWindow::evaluationFinished);
  // The timeline dock holds the profile panel (timeline over the hot-op table) once a profile exists.
  profilePanel_ = new ProfilePanel(this);
  profilePanel_->hide();
  if (firstBottom) firstBottom->raise();
  if (editorDock_) editorDock_->raise();
  rightDock_ = firstRight;
  bottomDock_ = firstBottom;
}

void MainWindow::showEvent(QShowEvent* event) {
  QMainWindow::showEvent(event);
  if (docksSized_) return;
  docksSized_ = true;
  // Dock sizes apply only once the window has its geometry.
  QTimer::singleShot(0, this, [this] {
    if (rightDock_) resizeDocks({rightDock_}, {width() * 45 / 100}, Qt::Horizontal);
    if (bottomDock_) resizeDocks({bottomDock_}, {height() / 4}, Qt::Vertical);
  });
}

QStringList MainWindow::dockNames() const {
  QStringList names;
  for (auto* dock : findChildren<QDockWidget*>()) names << dock->windowTitle();
  return names;
}

void MainWindow::buildMenus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  QAction* open = file->addAction(tr("&Open model…"), this, &MainWindow::showOpenModelDialog);
  open->setShortcut(QKeySequence::Open);
  recentMenu_ = file->addMenu(tr("Open &recent"));
  file->addAction(tr("Open &trace…"), this, [this] {
    QString path = QFileDialog::getOpenFileName(this, tr("Open a recorded trace"), QString(),
                                                tr("Nova trace (*.novatrace);;All files (*)"));
    if (!path.isEmpty()) openTrace(path);
  });
  rebuildRecentMenu();
  file->addSeparator();
  QAction* quit = file->addAction(tr("&Quit"), qApp, &QApplication::closeAllWindows);
  quit->setShortcut(QKeySequence::Quit);

  viewMenu_ = menuBar()->addMenu(tr("&View"));
  for (auto* dock : findChildren<QDockWidget*>()) viewMenu_->addAction(dock->toggleViewAction());

  QMenu* tools = menuBar()->addMenu(tr("&Tools"));
  tools->addAction(tr("&Profile model"), this, &MainWindow::profileModel);
  tools->addAction(tr("&Settings…"), this, &MainWindow::showSettings);

  QMenu* help = menuBar()->addMenu(tr("&Help"));
  help->addAction(tr("&About Nova Studio"), this, &MainWindow::showAbout);
}

void MainWindow::rebuildRecentMenu() {
  recentMenu_->clear();
  for (const auto& path : settings_.recent_models) {
    QString p = QString::fromStdString(path);
    recentMenu_->addAction(QFileInfo(p).fileName() + "  —  " + p, this, [this, p] { openModel(p); });
  }
  recentMenu_->setEnabled(!settings_.recent_models.empty());
}

void MainWindow::saveSettings() {
  try {
    settings_.save();
  } catch (const std::exception& e) {
    statusBar()->showMessage(tr("Settings not saved: %1").arg(e.what()), 10000);
  }
}

void MainWindow::showOpenModelDialog() {
  QString start = currentModel_.isEmpty() ? QString::fromStdString(examples_dir().string())
                                          : QFileInfo(currentModel_).absolutePath();
  QString path = QFileDialog::getOpenFileName(this, tr("Open a PyTorch model"), start,
                                              tr("PyTorch model (*.py);;All files (*)"));
  if (!path.isEmpty()) openModel(path);
}

bool MainWindow::openModel(const QString& path) {
  QFileInfo info(path);
  QString error;
  if (!info.exists())
    error = tr("%1 does not exist.").arg(path);
  else if (!info.isFile() || !info.isReadable())
    error = tr("%1 is not a readable file.").arg(path);
  else if (info.suffix() != "py")
    error =
        tr("%1 is not a Python file: a model is a .py file with Model, get_inputs() and get_init_inputs().")
            .arg(path);
  if (!error.isEmpty()) {
    statusBar()->showMessage(error, 15000);
    if (isVisible()) QMessageBox::warning(this, tr("Cannot open model"), error);
    return false;
  }
  currentModel_ = info.absoluteFilePath();
  settings_.add_recent(currentModel_.toStdString());
  saveSettings();
  rebuildRecentMenu();
  setWindowTitle(tr("%1 — Nova Studio").arg(info.fileName()));
  emit modelOpened(currentModel_);
  openProject();
  startIntake();
  return true;
}

void MainWindow::openProject() {
  // The workspace refers to the store: it goes first.
  if (workspace_) {
    editorDock_->setWidget(panels_.value("editor"));
    delete workspace_;
    workspace_ = nullptr;
  }
  project_.reset();
  try {
    project_ = std::make_unique<ProjectStore>(open_project_for(currentModel_.toStdString()));
  } catch (const std::exception& e) {
    panels_.value("editor")->setMessage(tr("The project for this model cannot be opened: %1").arg(e.what()));
    return;
  }
  workspace_ = new KernelWorkspace(*project_, editorDock_);
  editorDock_->setWidget(workspace_);
  connect(workspace_->versionTree(), &VersionTreeView::validateRequested, this, &MainWindow::validateVersion);
}

void MainWindow::startIntake() {
  hasGraph_ = false;
  centre_->setCurrentWidget(panels_.value("graph"));
  QString name = QFileInfo(currentModel_).fileName();
  panels_.value("graph")->setMessage(tr("Capturing the graph of %1…").arg(name));
  statusBar()->showMessage(tr("Intake of %1: starting the worker…").arg(name));
  QString inputs = project_ ? QString::fromStdString(project_->folder().string()) : QString();
  auto* job = new IntakeJob(currentModel_, QString::fromStdString(settings_.resolved_python()), inputs, this);
  if (intake_) intake_->deleteLater();  // superseded: its result will never be delivered
  intake_ = job;
  connect(job, &IntakeJob::progress, this,
          [this, name](const QString& m) { statusBar()->showMessage(tr("Intake of %1: %2").arg(name, m)); });
  connect(job, &IntakeJob::succeeded, this, &MainWindow::intakeSucceeded);
  connect(job, &IntakeJob::failed, this, &MainWindow::intakeFailed);
  job->start();
}

void MainWindow::intakeSucceeded(const ModelGraph& graph, double seconds) {
  graph_ = graph;
  hasGraph_ = true;
  graphWidget_->setGraph(graph_);
  centre_->setCurrentWidget(graphWidget_);
  if (project_) {
    try {
      ModelRecord record;
      record.path = currentModel_.toStdString();
      QFile f(currentModel_);
      if (f.open(QIODevice::ReadOnly)) record.source = f.readAll().toStdString();
      record.graph_json = nlohmann::json(graph_).dump();
      project_->set_model(record);
    } catch (const std::exception& e) {
      statusBar()->showMessage(tr("The graph was not saved to the project: %1").arg(e.what()), 15000);
    }
  }
  QString warnings;
  for (const auto& w : graph_.warnings) warnings += "  ⚠ " + QString::fromStdString(w);
  statusBar()->showMessage(tr("%1: %2 nodes, %3 fusion groups, captured by %4 in %5 s%6")
                               .arg(QFileInfo(currentModel_).fileName())
                               .arg(graph_.nodes.size())
                               .arg(graph_.groups.size())
                               .arg(QString::fromStdString(graph_.capture_route))
                               .arg(seconds, 0, 'f', 1)
                               .arg(warnings));
  emit modelSettled(currentModel_, true);
  generateCandidates();
}

void MainWindow::showStoredCandidates() {
  workspace_->versionTree()->refresh();
  // The first group's newest version goes to the editor, as after generating.
  for (const auto& rec : project_->fusion_groups())
    if (auto versions = project_->versions(rec.id); !versions.empty()) {
      workspace_->openVersion(versions.back().id);
      break;
    }
}

void MainWindow::generateCandidates() {
  if (!project_ || !workspace_) return;
  ModelGraph graph = graph_;
  std::optional<int> olderRevision;          // set when regenerating groups an older generator wrote
  if (!project_->fusion_groups().empty()) {  // generated in an earlier session: show what is stored
    showStoredCandidates();
    OutdatedGroups outdated;
    try {
      outdated = outdated_groups(*project_, graph_);
    } catch (const std::exception& e) {
      statusBar()->showMessage(tr("The project's candidates cannot be read: %1").arg(e.what()), 30000);
    }
    if (outdated.groups.empty() || settings_.default_generator != "builtin") {
      emit candidatesReady(static_cast<int>(project_->all_versions().size()));
      return;
    }
    // An older builtin generator wrote some of them: generate those groups again, keeping every
    // stored version (the user's edits and results among them).
    graph.groups = outdated.groups;
    olderRevision = outdated.oldest_revision;
  }
  if (settings_.default_generator != "builtin") {
    statusBar()->showMessage(tr("The %1 generator is not available in this version.")
                                 .arg(QString::fromStdString(settings_.default_generator)));
    return;
  }
  QPointer<MainWindow> self(this);
  QPointer<IntakeJob> owner(intake_);
  statusBar()->showMessage(
      (olderRevision ? tr("The builtin generator changed since this project was generated: ") : QString()) +
      tr("Builtin generator: writing kernels for %1 fusion groups…").arg(graph.groups.size()));
  QThread* t = QThread::create([self, owner, graph, olderRevision] {
    DoctorReport gpu;
    probe_cuda_driver(gpu);  // specialise for the GPU here, if there is one
    GenerationTarget target;
    if (gpu.has_gpu()) target = {gpu.gpus[0].arch(), gpu.gpus[0].sm_count};
    auto generated =
        std::make_shared<std::vector<GeneratedGroup>>(generate_and_build(graph, target, NvrtcCompiler()));
    if (!self) return;
    QMetaObject::invokeMethod(
        self.data(),
        [self, owner, generated, olderRevision] {
          // A newer model superseded this one: its project is gone; drop the result.
          if (!self || !owner || self->intake_ != owner || !self->project_) return;
          int built = 0, declined = 0, alternatives = 0;
          for (const auto& g : *generated) {
            built += g.build.ok;
            declined += g.candidate.declined.has_value();
            alternatives += static_cast<int>(g.alternatives.size());
          }
          StoredGeneration stored;
          try {
            stored = store_generated(*self->project_, *generated);
          } catch (const std::exception& e) {
            self->statusBar()->showMessage(tr("Candidates not saved: %1").arg(e.what()), 30000);
            return;
          }
          self->workspace_->versionTree()->refresh();
          const int added = stored.added();
          for (auto id : stored.primary)
            if (id) {
              self->workspace_->openVersion(id);
              break;
            }
          if (olderRevision) {
            QString from = *olderRevision > 0 ? QString::number(*olderRevision) : tr("unrecorded");
            QString what = added == 0   ? tr("its kernels for this model are unchanged")
                           : added == 1 ? tr("added 1 new version; earlier versions are kept")
                                        : tr("added %1 new versions; earlier versions are kept").arg(added);
            self->statusBar()->showMessage(
                tr("The builtin generator changed since this project was generated (revision %1 → %2): %3")
                    .arg(from)
                    .arg(kBuiltinGeneratorRevision)
                    .arg(what));
            emit self->candidatesReady(added);
            return;
          }
          self->statusBar()->showMessage(
              tr("Builtin generator: %1 candidates, %2 compiled with NVRTC, %3 declined%4")
                  .arg(generated->size() - declined)
                  .arg(built)
                  .arg(declined)
                  .arg(alternatives == 0 ? QString()
                                         : tr("; %1 alternative forms beside them (tensor-core GEMM): "
                                              "validate and benchmark each, and export the faster one "
                                              "that passes")
                                               .arg(alternatives)));
          emit self->candidatesReady(static_cast<int>(generated->size()) - declined);
        },
        Qt::QueuedConnection);
  });
  connect(t, &QThread::finished, t, &QObject::deleteLater);
  t->start();
}

void MainWindow::validateVersion(qint64 id) {
  if (!project_) return;
  auto settle = [this, id](const QString& message) {
    statusBar()->showMessage(message, 30000);
    emit evaluationSettled(id, message);
  };
  DoctorReport gpu;
  probe_cuda_driver(gpu);
  if (!gpu.has_gpu()) {
    settle(
        tr("Validation and benchmarks need a GPU (%1); intake, generation and the editor work without one.")
            .arg(QString::fromStdString(gpu.driver_error)));
    return;
  }
  // The version's own plan (a user edit has its parent's); versions stored before schema 4 use their
  // group's.
  std::optional<StoredCandidate> stored = stored_candidate(*project_, id);
  if (!stored) {
    settle(tr("Version %1 has no launch plan in the project: it cannot be validated.").arg(id));
    return;
  }
  const FusionGroup& group = stored->group;
  const Candidate& candidate = stored->candidate;
  std::filesystem::path reference = project_->folder() / fmt::format("group{}.py", group.id);
  {
    std::ofstream out(reference, std::ios::trunc);
    out << group.functional_source;
  }
  EvaluationRequest request;
  request.label = fmt::format("version {}", id);
  request.reference = reference;
  request.candidate = candidate;
  request.arch = gpu.gpus[0].arch();
  request.copy_reference = settings_.bench_copy_reference;
  request.l2_flush = settings_.bench_l2_flush;
  // From the first evaluation on, a worker is kept started ahead (torch imported), so each later
  // submission skips that start; each evaluation still runs in a process of its own.
  runner_.keep_standby(true);
  int job = evaluation_->submit(request);
  jobVersion_[job] = id;
  statusBar()->showMessage(
      tr("Validating and benchmarking version %1 in the background (job %2)…").arg(id).arg(job));
}

void MainWindow::showProfile(std::shared_ptr<const Trace> trace, const AttributionResult& attribution) {
  profilePanel_->setProfile(trace, attribution, graph_);
  for (auto* dock : findChildren<QDockWidget*>())
    if (dock->objectName() == "dock_timeline") {
      dock->setWidget(profilePanel_);
      profilePanel_->show();
      dock->raise();
    }
  panels_.value("hotops")->setMessage(tr("The hot-op table is in the Timeline dock, under the timeline."));
  std::map<int, double> heat;  // colour the graph by each node's share of GPU time
  for (const auto& n : attribution.nodes) heat[n.id] = n.share;
  if (hasGraph_) graphWidget_->setNodeHeat(heat);
  connect(profilePanel_, &ProfilePanel::nodeSelected, graphWidget_, &ModelGraphWidget::selectNode,
          Qt::UniqueConnection);
  connect(profilePanel_, &ProfilePanel::sendToGenerator, this, &MainWindow::sendToGenerator,
          Qt::UniqueConnection);
}

void MainWindow::sendToGenerator(const QList<int>& ids, bool groups) {
  // The builtin generator has already written a candidate for every fusion group: show the one for
  // the first hot group (or the group of the first hot node) in the editor.
  if (!project_ || !workspace_ || ids.isEmpty()) return;
  int group = ids.front();
  if (!groups && hasGraph_)
    if (const FusionGroup* g = graph_.group_of(group)) group = g->id;
  for (const auto& rec : project_->fusion_groups()) {
    auto j = nlohmann::json::parse(rec.ops_json, nullptr, false);
    if (j.is_discarded() || !j.contains("group") || j["group"].value("id", -1) != group) continue;
    auto versions = project_->versions(rec.id);
    if (versions.empty()) {
      statusBar()->showMessage(
          tr("The builtin generator declined group %1: %2")
              .arg(group)
              .arg(QString::fromStdString(j["candidate"].value("declined", std::string("no rule")))),
          30000);
      return;
    }
    workspace_->openVersion(versions.back().id);
    editorDock_->raise();
    statusBar()->showMessage(tr("Group %1: the builtin candidate is in the kernel editor.").arg(group),
                             15000);
    return;
  }
  statusBar()->showMessage(tr("No fusion group %1 in this project.").arg(group), 15000);
}

bool MainWindow::openTrace(const QString& path) {
  std::shared_ptr<const Trace> trace;
  try {
    trace = std::make_shared<Trace>(TraceReader::read(path.toStdString()));
  } catch (const std::exception& e) {
    QString message = tr("Cannot open the trace: %1").arg(e.what());
    statusBar()->showMessage(message, 30000);
    emit profileSettled(false, message);
    return false;
  }
  AttributionResult attribution = Attribution::compute(*trace, graph_, DeviceCeilings{});
  showProfile(trace, attribution);
  QString message = tr("%1: %2 kernels, %3% of GPU time attributed to graph nodes%4")
                        .arg(QFileInfo(path).fileName())
                        .arg(trace->kernel_count())
                        .arg(attribution.attributed_fraction * 100, 0, 'f', 1)
                        .arg(hasGraph_ ? QString() : tr(" (open the model to name the nodes)"));
  statusBar()->showMessage(message, 30000);
  emit profileSettled(true, message);
  return true;
}

void MainWindow::profileModel() {
  if (currentModel_.isEmpty()) {
    statusBar()->showMessage(tr("Open a model first."), 10000);
    return;
  }
  DoctorReport gpu;
  probe_cuda_driver(gpu);
  if (!gpu.has_gpu()) {
    QString message =
        tr("Profiling needs a GPU (%1). A trace recorded on a GPU machine opens with File > Open trace.")
            .arg(QString::fromStdString(gpu.driver_error));
    statusBar()->showMessage(message, 30000);
    emit profileSettled(false, message);
    return;
  }
  ProfileOptions options;
  options.model = currentModel_.toStdString();
  options.python = settings_.resolved_python();
  if (hasGraph_) options.graph = graph_;
  statusBar()->showMessage(tr("Profiling %1 with CUPTI…").arg(QFileInfo(currentModel_).fileName()));
  QPointer<MainWindow> self(this);
  QThread* t = QThread::create([self, options] {
    try {
      auto result = std::make_shared<ProfileResult>(ProfileRunner(options).run());
      QMetaObject::invokeMethod(
          self.data(),
          [self, result] {
            if (!self) return;
            self->showProfile(result->trace, result->attribution);
            emit self->profileSettled(true, tr("Profiled: %1 kernels").arg(result->trace->kernel_count()));
          },
          Qt::QueuedConnection);
    } catch (const std::exception& e) {
      QString message = QString::fromStdString(e.what());
      QMetaObject::invokeMethod(
          self.data(),
          [self, message] {
            if (!self) return;
            self->statusBar()->showMessage(tr("Profiling failed: %1").arg(message), 30000);
            emit self->profileSettled(false, message);
          },
          Qt::QueuedConnection);
    }
  });
  connect(t, &QThread::finished, t, &QObject::deleteLater);
  t->start();
}

void MainWindow::evaluationFinished(int job) {
  if (!jobVersion_.contains(job)) return;
  qint64 id = jobVersion_.take(job);
  auto info = jobs_.info(job);
  if (!info) return;
  if (info->state == JobState::Succeeded && info->result.contains("gpu_job")) {
    jobVersion_[info->result["gpu_job"].get<int>()] = id;  // the build queued the GPU job: follow it
    return;
  }
  if (info->state != JobState::Succeeded) {
    QString message =
        tr("Version %1: %2")
            .arg(id)
            .arg(QString::fromStdString(info->error.empty() ? to_string(info->state) : info->error));
    statusBar()->showMessage(message, 30000);
    emit evaluationSettled(id, message);
    return;
  }
  ValidationResult validation =
      info->result.value("validation", nlohmann::json::object()).get<ValidationResult>();
  resultsPanel_->setValidation(validation);
  std::optional<double> speedup;
  QString message = tr("Version %1: %2").arg(id).arg(QString::fromStdString(validation.verdict));
  if (info->result.contains("benchmark") && !info->result["benchmark"].is_null()) {
    BenchmarkResult bench = info->result["benchmark"].get<BenchmarkResult>();
    resultsPanel_->setBenchmark(bench);
    speedup = bench.verdict.cold_vs_eager;
    message += "; " + QString::fromStdString(bench.verdict.sentence);
    if (project_)
      project_->add_result({0, id, "benchmark", info->result["benchmark"].dump(), ""}, std::nullopt, speedup,
                           bench.verdict);
  }
  if (project_)
    project_->add_result({0, id, "validation", info->result["validation"].dump(), ""}, validation.passed,
                         speedup);
  if (workspace_) workspace_->versionTree()->refresh();
  statusBar()->showMessage(message, 30000);
  emit evaluationSettled(id, message);
}

void MainWindow::intakeFailed(const QString& message, const QString& details) {
  hasGraph_ = false;
  centre_->setCurrentWidget(panels_.value("graph"));
  QString text = tr("Intake of %1 failed:\n%2").arg(QFileInfo(currentModel_).fileName(), message);
  if (!details.isEmpty()) text += "\n\n" + details;
  panels_.value("graph")->setMessage(text);
  statusBar()->showMessage(tr("Intake failed: %1").arg(message.section('\n', 0, 0)), 30000);
  emit modelSettled(currentModel_, false);
}

void MainWindow::showSource(const QString& file, int line) {
  auto* viewer = new SourceViewer(this);
  viewer->setAttribute(Qt::WA_DeleteOnClose);
  viewer->showFile(file, line);
  viewer->show();
}

void MainWindow::showSettings() {
  SettingsDialog dialog(settings_, this);
  if (dialog.exec() != QDialog::Accepted) return;
  settings_ = dialog.settings();
  saveSettings();
  generatorLabel_->setText(tr("Generator: %1").arg(QString::fromStdString(settings_.default_generator)));
}

void MainWindow::showAbout() {
  auto* about = new AboutDialog(QString::fromStdString(settings_.resolved_python()),
                                QString::fromStdString(settings_.resolved_cuda_toolkit()), this);
  about->setAttribute(Qt::WA_DeleteOnClose);
  about->show();
}

}  // namespace nova::ui
