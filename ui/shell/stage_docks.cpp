#include "ui/shell/stage_docks.h"

#include <QDockWidget>
#include <QEvent>
#include <QMainWindow>
#include <QTimer>

#include "ui/shell/placeholder_panel.h"

namespace nova::ui {

StageDocks::StageDocks(QMainWindow* window) : QObject(window), window_(window) {
  window->installEventFilter(this);
  struct Spec {
    const char* key;
    QString title, message;
    Qt::DockWidgetArea area;
  };
  const Spec specs[] = {
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
      {"warnings", tr("Warnings"), tr("Intake's warnings about the open model are listed here."),
       Qt::BottomDockWidgetArea},
      {"llm", tr("LLM"), tr("Send a fusion group, a hot op or a version to the LLM to see its search here."),
       Qt::BottomDockWidgetArea},
  };
  QMap<Qt::DockWidgetArea, QDockWidget*> first;
  for (const auto& s : specs) {
    auto* panel = new PlaceholderPanel(s.title, s.message, window);
    auto* dock = new QDockWidget(s.title, window);
    dock->setObjectName(QString("dock_") + s.key);
    dock->setWidget(panel);
    window->addDockWidget(s.area, dock);
    if (!first.contains(s.area))
      first.insert(s.area, dock);
    else
      window->tabifyDockWidget(first.value(s.area), dock);
    keys_ << s.key;
    docks_.insert(s.key, dock);
    panels_.insert(s.key, panel);
  }
}

QList<QDockWidget*> StageDocks::all() const {
  QList<QDockWidget*> out;
  for (const auto& key : keys_) out << docks_.value(key);
  return out;
}

QStringList StageDocks::titles() const {
  QStringList names;
  for (const auto& key : keys_) names << docks_.value(key)->windowTitle();
  return names;
}

void StageDocks::fitTo(QMainWindow& window) const {
  window.resizeDocks({dock("hotops")}, {window.width() * 55 / 100}, Qt::Horizontal);  // the editor's room
  window.resizeDocks({dock("timeline")}, {window.height() / 4}, Qt::Vertical);
}

bool StageDocks::eventFilter(QObject* watched, QEvent* event) {
  if (watched == window_ && event->type() == QEvent::Show && !fitted_) {
    fitted_ = true;
    QTimer::singleShot(0, this, [this] { fitTo(*window_); });  // once the window has its geometry
  }
  return QObject::eventFilter(watched, event);
}

void StageDocks::show(const QString& key) const {
  dock(key)->show();
  dock(key)->raise();
}

}  // namespace nova::ui
