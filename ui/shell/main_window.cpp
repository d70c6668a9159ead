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

#include "core/env/resource_paths.h"
#include "ui/shell/about_dialog.h"
#include "ui/shell/placeholder_panel.h"
#include "ui/shell/settings_dialog.h"

namespace nova::ui {

MainWindow::MainWindow(Settings settings, QWidget* parent)
    : QMainWindow(parent), settings_(std::move(settings)) {
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
  auto* graph =
      new PlaceholderPanel(tr("Model graph"), tr("Open a model to begin: File > Open model…"), this);
  panels_.insert("graph", graph);
  setCentralWidget(graph);

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
       Qt::BottomDockWidgetArea},
  };
  QDockWidget* firstRight = nullptr;
  QDockWidget* firstBottom = nullptr;
  for (const auto& s : specs) {
    auto* panel = new PlaceholderPanel(s.title, s.message, this);
    panels_.insert(s.key, panel);
    auto* dock = new QDockWidget(s.title, this);
    dock->setObjectName(QString("dock_") + s.key);
    dock->setWidget(panel);
    addDockWidget(s.area, dock);
    QDockWidget*& first = s.area == Qt::RightDockWidgetArea ? firstRight : firstBottom;
    if (!first)
      first = dock;
    else if (s.area == Qt::BottomDockWidgetArea)
      tabifyDockWidget(first, dock);
    else
      splitDockWidget(first, dock, Qt::Vertical);
  }
  if (firstBottom) firstBottom->raise();
  resizeDocks({firstRight}, {480}, Qt::Horizontal);
  resizeDocks({firstBottom}, {260}, Qt::Vertical);
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
  rebuildRecentMenu();
  file->addSeparator();
  QAction* quit = file->addAction(tr("&Quit"), qApp, &QApplication::closeAllWindows);
  quit->setShortcut(QKeySequence::Quit);

  viewMenu_ = menuBar()->addMenu(tr("&View"));
  for (auto* dock : findChildren<QDockWidget*>()) viewMenu_->addAction(dock->toggleViewAction());

  QMenu* tools = menuBar()->addMenu(tr("&Tools"));
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
  statusBar()->showMessage(tr("Opened %1").arg(currentModel_));
  panels_.value("graph")->setMessage(
      tr("%1 is open. Graph capture (intake) is not part of this build yet.").arg(info.fileName()));
  emit modelOpened(currentModel_);
  emit modelSettled(currentModel_, true);
  return true;
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
