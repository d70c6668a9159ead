#include "ui/shell/main_window.h"

#include <QAction>
#include <QApplication>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QPushButton>
#include <QStackedWidget>
#include <QStatusBar>
#include <QTimer>

#include <utility>

#include "core/env/resource_paths.h"
#include "core/sandbox/sandbox_policy.h"
#include "core/sandbox/sandbox_refused.h"
#include "core/sandbox/unsandboxed_consent.h"
#include "core/session/stored_generation.h"
#include "ui/export/export_action.h"
#include "ui/report/report_action.h"
#include "ui/graph/graph_view.h"
#include "ui/graph/model_graph_widget.h"
#include "ui/jobs/jobs_panel.h"
#include "ui/llm/api_key_source.h"
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
#include "ui/versions/version_tree_model.h"
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
  jobsPanel_ = new JobsPanel(this);
  docks_->dock("jobs")->setWidget(jobsPanel_);
  resultsPanel_ = new ResultsPanel(this);
  docks_->dock("results")->setWidget(resultsPanel_);
  warningsPanel_ = new WarningsPanel(this);
  docks_->dock("warnings")->setWidget(warningsPanel_);
  connect(warningsPanel_, &WarningsPanel::countChanged, this, [this](int n) {
    docks_->dock("warnings")->setWindowTitle(n > 0 ? tr("Warnings (%1)").arg(n) : tr("Warnings"));
  });
  llmPanel_ = new LlmPanel(this);
  docks_->dock("llm")->setWidget(llmPanel_);
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
  connect(profilePanel_, &ProfilePanel::sendToLlm, this, [this](const QList<int>& ids, bool groups) {
    if (ids.isEmpty()) return;
    int group = ids.front();
    if (!groups) {
      const FusionGroup* g = graph() ? graph()->group_of(group) : nullptr;
      if (!g) {
        llmPanel_->showProblem(tr("Node %1 belongs to no fusion group: nothing to send to the LLM.").arg(group));
        docks_->dock("llm")->raise();
        return;
      }
      group = g->id;
    }
    sendToLlm(group);
  });
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

void MainWindow::showEvent(QShowEvent* event) {
  QMainWindow::showEvent(event);
  if (docksSized_) return;
  docksSized_ = true;
  // Dock sizes apply only once the window has its geometry.
  QTimer::singleShot(0, this, [this] {
    resizeDocks({docks_->dock("hotops")}, {width() * 55 / 100}, Qt::Horizontal);  // the editor's room
    resizeDocks({docks_->dock("timeline")}, {height() / 4}, Qt::Vertical);
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
  connect(workspace_->versionTree(), &VersionTreeView::sendToLlmRequested, this, [this](qint64 id) {
    const CandidateVersion* v = workspace_->versionTree()->model()->version(id);
    if (!v) return;
    for (const auto& g : stored_groups(*project()))
      if (g.record_id == v->group_id) sendToLlm(g.group.id);
  });
  connect(workspace_, &KernelWorkspace::versionShown, this,
          [this](qint64 id) { resultsPanel_->showStored(*project(), id); });
  jobsPanel_->setQueue(&studio_->session()->jobs());
  const QString noGpu = studio_->gpuMissing();
  workspace_->versionTree()->setGpuMissing(noGpu);
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
  int group = ids.front();
  if (!groups && graph())
    if (const FusionGroup* g = graph()->group_of(group)) group = g->id;
  statusBar()->showMessage(workspace_->openGroup(group), 15000);
  docks_->dock("editor")->raise();
}

bool MainWindow::sendToLlm(int group) {
  docks_->dock("llm")->show();
  docks_->dock("llm")->raise();
  if (!studio_->session()) {
    llmPanel_->showProblem(tr("Open a model first: the LLM search runs on one of its fusion groups."));
    return false;
  }
  const auto& providers = settings_.llm_providers;
  if (providers.empty()) {
    llmPanel_->showProblem(tr("No LLM provider is set up: add one in Tools > Settings… (base URL, model, key "
                              "variable); the key itself goes in that variable or the system keychain."));
    return false;
  }
  LlmProvider provider = providers.front();
  if (!settings_.llm_default_provider.empty()) {
    try {
      provider = find_llm_provider(providers, settings_.llm_default_provider);
    } catch (const std::exception& e) {
      llmPanel_->showProblem(tr("The default LLM provider: %1").arg(e.what()));
      return false;
    }
  }
  const ApiKeySource::Found key = ApiKeySource::find(provider);
  if (!key.error.isEmpty()) {
    llmPanel_->showProblem(key.error);
    return false;
  }
  // LLM-written code runs in the sandbox; where it cannot start, only with this project's consent.
  ProjectSession& session = *studio_->session();
  try {
    SandboxPolicy::decide(session.project_dir(), session.options().bwrap);
  } catch (const SandboxRefused& e) {
    askToRunUnsandboxed(group, QString::fromUtf8(e.what()));
    return false;
  } catch (const std::exception& e) {
    llmPanel_->showProblem(tr("The project's sandbox setting cannot be read: %1").arg(e.what()));
    return false;
  }
  return llmPanel_->start(session, provider, key.key.toStdString(), group, studio_->gpuMissing());
}

void MainWindow::askToRunUnsandboxed(int group, const QString& refusal) {
  llmPanel_->showProblem(refusal);
  auto* box = new QMessageBox(QMessageBox::Warning, tr("No sandbox for LLM-written code"),
                              tr("The sandbox for code an LLM writes cannot start here, so the search did not "
                                 "start and nothing was sent to the provider."),
                              QMessageBox::NoButton, this);
  box->setObjectName("unsandboxedPrompt");
  box->setInformativeText(tr("Allow LLM-written code to run without the sandbox for this project only? Its "
                             "results will say \"sandboxed: false\". (nova llm --require-sandbox withdraws it.)"));
  box->setDetailedText(refusal);
  QPushButton* allow = box->addButton(tr("Allow for this project"), QMessageBox::AcceptRole);
  allow->setObjectName("allowUnsandboxed");
  box->addButton(QMessageBox::Cancel);
  box->setAttribute(Qt::WA_DeleteOnClose);
  const QString model = currentModel();
  connect(box, &QMessageBox::buttonClicked, this, [this, allow, group, model](QAbstractButton* clicked) {
    if (clicked != static_cast<QAbstractButton*>(allow) || currentModel() != model || !studio_->session()) return;
    try {
      UnsandboxedConsent::set(studio_->session()->project_dir(), true);
    } catch (const std::exception& e) {
      llmPanel_->showProblem(tr("The consent cannot be stored in the project: %1").arg(e.what()));
      return;
    }
    sendToLlm(group);
  });
  box->open();  // not exec(): the studio goes on while the question is shown
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
  studio_->setSettings(settings_);
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
