#pragma once
// The studio's main window: the model graph in the centre and one dock per workflow stage
// (timeline, hot ops, editor, jobs, results), the File menu with recent models, settings and the
// About box. Stage views replace the placeholder panels as they arrive.
#include <QMainWindow>
#include <QMap>

#include "core/env/settings.h"

class QMenu;
class QLabel;

namespace nova::ui {

class PlaceholderPanel;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit MainWindow(Settings settings, QWidget* parent = nullptr);

  // Opens a model file; a bad path gives a message box (or a status message when quiet).
  bool openModel(const QString& path);
  QString currentModel() const { return currentModel_; }
  const Settings& settings() const { return settings_; }
  PlaceholderPanel* panel(const QString& name) const { return panels_.value(name); }
  QStringList dockNames() const;

 public slots:
  void showOpenModelDialog();
  void showSettings();
  void showAbout();

 signals:
  void modelOpened(const QString& path);
  // The model's intake finished (or failed): every view shows its final state.
  void modelSettled(const QString& path, bool ok);

 private:
  void buildMenus();
  void buildDocks();
  void rebuildRecentMenu();
  void saveSettings();

  Settings settings_;
  QString currentModel_;
  QMap<QString, PlaceholderPanel*> panels_;
  QMenu* recentMenu_ = nullptr;
  QMenu* viewMenu_ = nullptr;
  QLabel* generatorLabel_ = nullptr;
};

}  // namespace nova::ui
