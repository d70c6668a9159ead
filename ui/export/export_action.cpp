#include "ui/export/export_action.h"

#include <QWidget>

#include "core/export/export_planner.h"
#include "core/session/project_session.h"
#include "ui/export/export_wizard.h"
#include "ui/shell/studio_session.h"

namespace nova::ui {

ExportAction::ExportAction(StudioSession& studio, const Settings& settings, QObject* parent)
    : QAction(tr("&Export package…"), parent), studio_(studio), settings_(settings) {
  connect(this, &QAction::triggered, this, &ExportAction::open);
  connect(&studio_, &StudioSession::opened, this, &ExportAction::refresh);
  connect(&studio_, &StudioSession::graphReady, this, &ExportAction::refresh);
  connect(&studio_, &StudioSession::candidatesStored, this, &ExportAction::refresh);
  connect(&studio_, &StudioSession::evaluationSettled, this, &ExportAction::refresh);
  // After `closing` the session is still there: refresh once it has gone.
  connect(&studio_, &StudioSession::closing, this, &ExportAction::refresh, Qt::QueuedConnection);
  refresh();
}

void ExportAction::refresh() {
  QString why;
  if (!studio_.session())
    why = tr("Open a model to export its package.");
  else if (!studio_.graph())
    why = tr("The model has no graph yet: wait for intake to capture it.");
  else
    try {
      const ExportPlan plan =
          ExportPlanner::plan(studio_.session()->store(), studio_.session()->model_unchanged(), {});
      if (plan.shipped() == 0)
        why = tr("No fusion group has a version that ships yet: validate and benchmark versions (Versions "
                 "panel); a version ships once it passed validation and beats eager beyond the noise.");
    } catch (const std::exception& e) {
      why = tr("Cannot export: %1").arg(QString::fromUtf8(e.what()));
    }
  setEnabled(why.isEmpty());
  setToolTip(why.isEmpty() ? tr("Write the shipped kernels as a pip-installable drop-in package") : why);
}

ExportWizard* ExportAction::wizard() const { return wizard_.data(); }

void ExportAction::open() {
  refresh();
  if (!isEnabled()) return;
  if (wizard_) {
    wizard_->raise();
    wizard_->activateWindow();
    return;
  }
  wizard_ = new ExportWizard(studio_, settings_, qobject_cast<QWidget*>(parent()));
  wizard_->setAttribute(Qt::WA_DeleteOnClose);
  wizard_->show();
}

}  // namespace nova::ui
