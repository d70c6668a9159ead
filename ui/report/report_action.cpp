#include "ui/report/report_action.h"

#include <QWidget>

#include "ui/report/report_dialog.h"
#include "ui/shell/studio_session.h"

namespace nova::ui {

ReportAction::ReportAction(StudioSession& studio, QObject* parent) : QAction(tr("&Report…"), parent), studio_(studio) {
  connect(this, &QAction::triggered, this, &ReportAction::open);
  connect(&studio_, &StudioSession::opened, this, &ReportAction::refresh);
  connect(&studio_, &StudioSession::graphReady, this, &ReportAction::refresh);
  // After `closing` the session is still there: refresh once it has gone.
  connect(&studio_, &StudioSession::closing, this, &ReportAction::refresh, Qt::QueuedConnection);
  refresh();
}

void ReportAction::refresh() {
  QString why;
  if (!studio_.session())
    why = tr("Open a model to write its client report.");
  else if (!studio_.graph())
    why = tr("The model has no graph yet: wait for intake to capture it.");
  setEnabled(why.isEmpty());
  setToolTip(why.isEmpty() ? tr("Write the client report (HTML, PDF, JSON) of what the project measured") : why);
}

ReportDialog* ReportAction::dialog() const { return dialog_.data(); }

void ReportAction::open() {
  refresh();
  if (!isEnabled()) return;
  if (dialog_) {
    dialog_->raise();
    dialog_->activateWindow();
    return;
  }
  dialog_ = new ReportDialog(studio_, qobject_cast<QWidget*>(parent()));
  dialog_->setAttribute(Qt::WA_DeleteOnClose);
  dialog_->show();
}

}  // namespace nova::ui
