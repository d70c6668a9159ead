#pragma once
#include <QAction>
#include <QPointer>

#include "core/env/settings.h"

namespace nova::ui {

class StudioSession;
class ExportWizard;

// File > "Export package…": opens the Export wizard over the open model's project. Disabled, with the
// reason as its tooltip, while there is nothing to export: no model, no graph yet, a project the
// export refuses (a model changed since intake), or no fusion group with a version that ships.
// Follows the session's signals; refresh() checks again.
class ExportAction : public QAction {
  Q_OBJECT
 public:
  // `settings`: the studio's (the CUDA toolkit of the build check); must outlive the action.
  ExportAction(StudioSession& studio, const Settings& settings, QObject* parent);
  void refresh();
  ExportWizard* wizard() const;  // the open wizard, if any

 private:
  void open();

  StudioSession& studio_;
  const Settings& settings_;
  QPointer<ExportWizard> wizard_;
};

}  // namespace nova::ui
