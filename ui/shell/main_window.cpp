#include "ui/shell/main_window.h"

#include <QAction>
#include <QApplication>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QStackedWidget>
#include <QStatusBar>

#include <utility>

#include "core/env/resource_paths.h"
#include "ui/export/export_action.h"
#include "ui/report/report_action.h"
#include "ui/graph/graph_view.h"
#include "ui/graph/model_graph_widget.h"
#include "ui/jobs/jobs_panel.h"
#include "ui/llm/llm_launcher.h"
#include "ui/llm/llm_panel.h"
#include "ui/results/results_panel.h"
#include "ui/shell/about_dialog.h"
#include "ui/shell/placeholder_panel.h"
#include "ui/shell/recent_models_menu.h"
#include "ui/shell/settings_dialog.h"
#include "ui/shell/source_viewer.h"
#include "ui/shell/stage_docks.h"
#include "ui/shell/damaged_project_prompt.h"
#include "ui/shell/studio_session.h"
#include "ui/shell/trace_docks.h"
#include "ui/shell/warnings_panel.h"
#include "ui/trace/profile_panel.h"
#include "ui/versions/kernel_workspace.h"
#include "ui/versions/version_tree_view.h"

namespace nova::ui {

MainWindow::MainWindow(Settings settings, SessionBackend backend, QWidget* parent)
    : QMainWindow(parent), settings_(std::move(settings)) {
  studio_ = new StudioSession(settings_, std::move(backend), this);
  setWindowTitle(tr("Nova Studio"));
  setWindowIcon(QIcon(":/nova/nova.svg"));
  resize(1400, 900);
  setDockOptions(QMainWindow::AnimatedDocks | QMainWindow::AllowTabbedDocks);
  buildDocks();
  buildMenus();
  connectSession();
  statusBar()->addPermanentWidget(generatorLabel_ = new QLabel(this));
  generatorLabel_->setText(tr("Generator: %1").arg(QString::fromStdString(settings_.default_generator)));
  statusBar()->showMessage(tr("Open a model to begin (File > Open model…)"));
}

PlaceholderPanel* MainWindow::panel(const QString& name) const {
  return name == "graph" ? graphPanel_ : docks_->placeholder(name);
}

MainWindow::~MainWindow() {
  delete workspace_;  // it reads the session's store: it goes first
  delete studio_;
}

void MainWindow::buildDocks() {
  // The centre shows the graph once there is one, and a message panel until then.
  graphPanel_ =
      new PlaceholderPanel(tr("Model graph"), tr("Open a model to begin: File > Open model…"), this);
  graphWidget_ = new ModelGraphWidget(this);
  centre_ = new QStackedWidget(this);
  centre_->addWidget(graphPanel_);
  centre_->addWidget(graphWidget_);
  setCentralWidget(centre_);
  docks_ = new StageDocks(this);
  jobsPanel_ = docks_->put("jobs", new JobsPanel(this));
  resultsPanel_ = docks_->put("results", new ResultsPanel(this));
  warningsPanel_ = docks_->put("warnings", new WarningsPanel(this));
  connect(warningsPanel_, &WarningsPanel::countChanged, this, [this](int n) {
    docks_->dock("warnings")->setWindowTitle(n > 0 ? tr("Warnings (%1)").arg(n) : tr("Warnings"));
  });
  llmPanel_ = docks_->put("llm", new LlmPanel(this));
  llmLauncher_ = new LlmLauncher(*studio_, settings_, *llmPanel_, [this] { docks_->show("llm"); },
                                 [this] { return currentModel_; }, this);
  profilePanel_ = new ProfilePanel(this);  // in the timeline and hot-op docks once a profile exists
  profilePanel_->hide();
  traceDocks_ = new TraceDocks(*docks_, *profilePanel_, this);
  docks_->dock("timeline")->raise();
  docks_->dock("editor")->raise();
}

void MainWindow::connectSession() {
  connect(graphWidget_, &ModelGraphWidget::openSourceRequested, this, &MainWindow::showSource);
  connect(profilePanel_, &ProfilePanel::nodeSelected, graphWidget_, &ModelGraphWidget::selectNode);
  connect(profilePanel_, &ProfilePanel::sendToGenerator, this, &MainWindow::sendToGenerator);
  connect(profilePanel_, &ProfilePanel::sendToLlm, this,
          [this](const QList<int>& ids, bool groups) { llmLauncher_->sendNodes(ids, groups, graph()); });
  connect(graphWidget_->view(), &GraphView::sendToLlm, this, &MainWindow::sendToLlm);
  connect(studio_, &StudioSession::jobChanged, llmPanel_, &LlmPanel::jobChanged);
  connect(llmPanel_, &LlmPanel::versionsStored, this, [this] {
    if (workspace_) workspace_->versionTree()->refresh();
  });
  connect(llmPanel_, &LlmPanel::searchEnded, this, [this](const QString&, const QString& message) {
    if (workspace_) workspace_->versionTree()->refresh();
    statusBar()->showMessage(message, 30000);
  });
  connect(studio_, &StudioSession::closing, this, &MainWindow::closeProject);
  connect(studio_, &StudioSession::opened, this, &MainWindow::showProject);
  connect(studio_, &StudioSession::jobChanged, jobsPanel_, &JobsPanel::apply);
  connect(studio_, &StudioSession::message, statusBar(), &QStatusBar::showMessage);
  connect(studio_, &StudioSession::intakeStarted, this, [this] {
    if (!graph())
      panel("graph")->setMessage(tr("Capturing the graph of %1…").arg(QFileInfo(currentModel_).fileName()));
  });
  connect(studio_, &StudioSession::graphReady, this, &MainWindow::showGraph);
  connect(studio_, &StudioSession::intakeFailed, this, &MainWindow::showIntakeFailure);
  connect(studio_, &StudioSession::candidatesStored, this, &MainWindow::showCandidates);
  connect(studio_, &StudioSession::evaluationSettled, this, &MainWindow::showEvaluation);
  connect(studio_, &StudioSession::profileStored, this, &MainWindow::openTrace);
  connect(studio_, &StudioSession::profileFailed, this, [this](const QString& message) {
    statusBar()->showMessage(message, 30000);
    emit profileSettled(false, message);
  });
}

QStringList MainWindow::dockNames() const { return docks_->titles(); }

ProjectStore* MainWindow::project() const {
  return studio_->session() ? &studio_->session()->store() : nullptr;
}
const ModelGraph* MainWindow::graph() const { return studio_->graph(); }

void MainWindow::buildMenus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  file->addAction(tr("&Open model…"), this, &MainWindow::showOpenModelDialog)
      ->setShortcut(QKeySequence::Open);
  recentMenu_ = new RecentModelsMenu(this);
  file->addMenu(recentMenu_);
  connect(recentMenu_, &RecentModelsMenu::modelChosen, this, &MainWindow::openModel);
  file->addAction(tr("Open &trace…"), this, [this] {
    QString path = QFileDialog::getOpenFileName(this, tr("Open a recorded trace"), QString(),
                                                tr("Nova trace (*.novatrace);;All files (*)"));
    if (!path.isEmpty()) openTrace(path);
  });
  recentMenu_->setModels(settings_.recent_models);
  file->addAction(new ExportAction(*studio_, settings_, this));  // the Export wizard (ui/export)
  file->addAction(new ReportAction(*studio_, this));             // the client report (ui/report)
  file->addSeparator();
  file->addAction(tr("&Quit"), qApp, &QApplication::closeAllWindows)->setShortcut(QKeySequence::Quit);
  QMenu* view = menuBar()->addMenu(tr("&View"));
  for (auto* dock : docks_->all()) view->addAction(dock->toggleViewAction());
  QMenu* tools = menuBar()->addMenu(tr("&Tools"));
  for (QMenu* menu : {file, tools}) menu->setToolTipsVisible(true);
  profileAction_ = tools->addAction(tr("&Profile model"), this, &MainWindow::profileModel);
  profileAction_->setEnabled(false);
  profileAction_->setToolTip(tr("Open a model to profile it."));
  tools->addAction(tr("&Settings…"), this, &MainWindow::showSettings);
  menuBar()->addMenu(tr("&Help"))->addAction(tr("&About Nova Studio"), this, &MainWindow::showAbout);
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
  QString error = StudioSession::modelFileProblem(path);
  if (error.isEmpty()) {
    currentModel_ = info.absoluteFilePath();
    settings_.add_recent(currentModel_.toStdString());
    saveSettings();
    recentMenu_->setModels(settings_.recent_models);
    setWindowTitle(tr("%1 — Nova Studio").arg(info.fileName()));
    emit modelOpened(currentModel_);
    if (studio_->open(currentModel_, &error)) return true;
    if (DamagedProjectPrompt::reopen(this, *studio_, currentModel_, &error)) return true;
    error = tr("The project for %1 cannot be opened: %2").arg(info.fileName(), error);
    panel("graph")->setMessage(error);
  }
  statusBar()->showMessage(error, 15000);
  if (isVisible()) QMessageBox::warning(this, tr("Cannot open model"), error);
  return false;
}

void MainWindow::closeProject() {
  llmPanel_->detach();
  if (workspace_) docks_->dock("editor")->setWidget(docks_->placeholder("editor"));
  delete std::exchange(workspace_, nullptr);
  jobsPanel_->setQueue(nullptr);
  resultsPanel_->clear(tr("No result yet: validate a candidate."));
  // Nothing of the previous model stays: its profile, heat, node details and warnings go.
  traceDocks_->clear();
  graphWidget_->setNodeHeat({});
  graphWidget_->details()->clear();
  warningsPanel_->clear();
  profileAction_->setEnabled(false);
  centre_->setCurrentWidget(panel("graph"));
}

void MainWindow::showProject() {
  workspace_ = new KernelWorkspace(*project(), docks_->dock("editor"));
  docks_->dock("editor")->setWidget(workspace_);
  connect(workspace_->versionTree(), &VersionTreeView::validateRequested, this, &MainWindow::validateVersion);
  connect(workspace_->versionTree(), &VersionTreeView::sendToLlmRequested, llmLauncher_, &LlmLauncher::sendVersion);
  connect(workspace_, &KernelWorkspace::versionShown, this,
          [this](qint64 id) { resultsPanel_->showStored(*project(), id); });
  jobsPanel_->setQueue(&studio_->session()->jobs());
  const QString noGpu = studio_->gpuMissing();
  workspace_->versionTree()->setGpuMissing(studio_->evaluationGpuMissing());
  profileAction_->setEnabled(noGpu.isEmpty());
  profileAction_->setToolTip(noGpu.isEmpty() ? tr("Trace the model with CUPTI as a job: timeline and hot ops")
                                             : tr("Needs a GPU, and this machine has none: %1").arg(noGpu));
  workspace_->showStoredCandidates();  // what earlier sessions stored, at once
}

void MainWindow::showGraph(bool current) {
  graphWidget_->setGraph(*graph());
  warningsPanel_->setWarnings(tr("intake of %1").arg(QFileInfo(currentModel_).fileName()), graph()->warnings);
  if (!graph()->warnings.empty()) docks_->dock("warnings")->raise();
  centre_->setCurrentWidget(graphWidget_);
  if (current) emit modelSettled(currentModel_, true);
}

void MainWindow::showIntakeFailure(const QString& text) {
  centre_->setCurrentWidget(panel("graph"));
  panel("graph")->setMessage(text);
  warningsPanel_->clear();
  statusBar()->showMessage(tr("Intake failed: %1").arg(text.section('\n', 1, 1)), 30000);
  emit modelSettled(currentModel_, false);
}

void MainWindow::showCandidates(qint64 first) {
  workspace_->showStoredCandidates(first);
  emit candidatesReady(static_cast<int>(project()->all_versions().size()));
}

void MainWindow::validateVersion(qint64 version) { studio_->evaluate(version); }

void MainWindow::showEvaluation(qint64 version, const QString& message, bool stored) {
  statusBar()->showMessage(message, 30000);
  if (stored) {
    workspace_->versionTree()->refresh();
    resultsPanel_->showStored(*project(), version);
    docks_->dock("results")->raise();
  }
  emit evaluationSettled(version, message);
}

bool MainWindow::openTrace(const QString& path) {
  QString message;
  const bool ok = traceDocks_->open(path, graph(), &message);
  if (ok && graph()) graphWidget_->setNodeHeat(profilePanel_->nodeShares());
  if (!ok && !traceDocks_->showing()) panel("timeline")->setMessage(message);  // it stays there
  statusBar()->showMessage(message, 30000);
  emit profileSettled(ok, message);
  return ok;
}

void MainWindow::profileModel() { studio_->profile(); }

void MainWindow::sendToGenerator(const QList<int>& ids, bool groups) {
  // Every fusion group has its candidate already: show the first hot group's (or hot node's group's).
  if (!workspace_ || ids.isEmpty()) return;
  statusBar()->showMessage(workspace_->openSelection(ids, groups, graph()), 15000);
  docks_->dock("editor")->raise();
}

bool MainWindow::sendToLlm(int group) { return llmLauncher_->send(group); }

void MainWindow::showSource(const QString& file, int line) { SourceViewer::open(file, line, this); }

void MainWindow::showSettings() {
  SettingsDialog dialog(settings_, this);
  if (dialog.exec() != QDialog::Accepted) return;
  settings_ = dialog.settings();
  studio_->setSettings(settings_);
  saveSettings();
  generatorLabel_->setText(tr("Generator: %1").arg(QString::fromStdString(settings_.default_generator)));
}

void MainWindow::showAbout() {
  AboutDialog::open(QString::fromStdString(settings_.resolved_python()),
                    QString::fromStdString(settings_.resolved_cuda_toolkit()), this);
}

}  // namespace nova::ui
