#pragma once
// The way out of a project the studio cannot open because its file is damaged: a message box with the
// readable sentence in view and SQLite's check output folded under "Show Details...", and a "Move
// aside and start over" button that keeps the damaged file beside a new project
// (core/project/damaged_project.h). Nothing is deleted.
#include <memory>

#include <QMessageBox>
#include <QString>

#include "ui/shell/studio_session.h"

namespace nova::ui {

class DamagedProjectPrompt {
 public:
  // The box for `damaged` (not shown); its "move aside" button is moveAsideButton(box).
  static std::unique_ptr<QMessageBox> build(QWidget* parent, const StudioSession::DamagedProject& damaged);
  static QAbstractButton* moveAsideButton(const QMessageBox& box);
  // After studio.open(model) failed: when the project file was damaged and `parent` is shown, asks, and
  // if the user agrees moves the file aside and opens the model again (its result, `error` set when it
  // fails). False without asking otherwise. A failed move says why.
  static bool reopen(QWidget* parent, StudioSession& studio, const QString& model, QString* error);
  // Moves the project file aside; the sentence for the status bar, or why it could not.
  static QString moveAside(const QString& folder, bool* ok);
};

}  // namespace nova::ui
