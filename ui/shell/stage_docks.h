#pragma once
#include <QList>
#include <QMap>
#include <QObject>
#include <QString>

class QDockWidget;
class QMainWindow;

namespace nova::ui {

class PlaceholderPanel;

// The studio's stage docks on a main window: hot ops, kernel editor and results tabbed on the right,
// timeline and jobs below, each holding a placeholder panel that says what will appear there until
// the stage's real view takes its place. Keys: "hotops", "editor", "timeline", "jobs", "results",
// "warnings".
class StageDocks : public QObject {
  Q_OBJECT
 public:
  explicit StageDocks(QMainWindow* window);
  QDockWidget* dock(const QString& key) const { return docks_.value(key); }
  PlaceholderPanel* placeholder(const QString& key) const { return panels_.value(key); }
  QList<QDockWidget*> all() const;  // in the order they were made
  QStringList titles() const;       // the docks' titles, in that order

 private:
  QStringList keys_;
  QMap<QString, QDockWidget*> docks_;
  QMap<QString, PlaceholderPanel*> panels_;
};

}  // namespace nova::ui
