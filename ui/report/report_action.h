#pragma once
#include <QAction>
#include <QPointer>

namespace nova::ui {

class StudioSession;
class ReportDialog;

// File > "Report…": opens the Report dialog over the open model's project (the studio's `nova report`).
// Disabled, with the reason as its tooltip, while no model with a graph is open. Follows the session's
// signals; refresh() checks again.
class ReportAction : public QAction {
  Q_OBJECT
 public:
  ReportAction(StudioSession& studio, QObject* parent);
  void refresh();
  ReportDialog* dialog() const;  // the open dialog, if any

 private:
  void open();

  StudioSession& studio_;
  QPointer<ReportDialog> dialog_;
};

}  // namespace nova::ui
