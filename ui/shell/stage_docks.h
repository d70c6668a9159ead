#pragma once
#include <QDockWidget>
#include <QList>
#include <QMap>
#include <QObject>
#include <QString>

class QEvent;
class QMainWindow;

namespace nova::ui {

class PlaceholderPanel;

// The studio's stage docks on a main window: hot ops, kernel editor and results tabbed on the right,
// timeline and jobs below, each holding a placeholder panel that says what will appear there until
// the stage's real view takes its place. Keys: "hotops", "editor", "timeline", "jobs", "results",
// "warnings". The first time the window is shown (when it has its geometry), the docks are sized
// for the work: the editor gets most of the width.
class StageDocks : public QObject {
  Q_OBJECT
 public:
  explicit StageDocks(QMainWindow* window);
  QDockWidget* dock(const QString& key) const { return docks_.value(key); }
  PlaceholderPanel* placeholder(const QString& key) const { return panels_.value(key); }
  QList<QDockWidget*> all() const;  // in the order they were made
  QStringList titles() const;       // the docks' titles, in that order
  // Puts `panel` in the dock `key` and returns the panel.
  template <typename Panel>
  Panel* put(const QString& key, Panel* panel) const {
    dock(key)->setWidget(panel);
    return panel;
  }
  void show(const QString& key) const;  // shown and raised
  // Sizes the docks for `window`'s geometry (once it has one): the editor gets most of the width.
  void fitTo(QMainWindow& window) const;

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  QMainWindow* window_;
  bool fitted_ = false;
  QStringList keys_;
  QMap<QString, QDockWidget*> docks_;
  QMap<QString, PlaceholderPanel*> panels_;
};

}  // namespace nova::ui
