#include "ui/shell/damaged_project_prompt.h"

#include <QAbstractButton>
#include <QPushButton>

#include "core/project/damaged_project.h"
#include "core/project/project_error.h"

namespace nova::ui {

namespace {
const char* kMoveAside = "Move aside and start over";
}

std::unique_ptr<QMessageBox> DamagedProjectPrompt::build(QWidget* parent,
                                                         const StudioSession::DamagedProject& damaged) {
  auto box = std::make_unique<QMessageBox>(QMessageBox::Warning, QObject::tr("The project cannot be opened"),
                                           damaged.message, QMessageBox::Cancel, parent);
  box->setInformativeText(
      QObject::tr("Move the damaged file aside to start a new project for this model in %1. The damaged "
                  "file stays there, renamed, for you or support to look at.")
          .arg(damaged.folder));
  if (!damaged.detail.isEmpty()) box->setDetailedText(damaged.detail);
  box->addButton(QObject::tr(kMoveAside), QMessageBox::AcceptRole);
  return box;
}

QAbstractButton* DamagedProjectPrompt::moveAsideButton(const QMessageBox& box) {
  for (QAbstractButton* b : box.buttons())
    if (b->text() == QObject::tr(kMoveAside)) return b;
  return nullptr;
}

QString DamagedProjectPrompt::moveAside(const QString& folder, bool* ok) {
  try {
    auto moved = move_aside(folder.toStdString());
    if (ok) *ok = true;
    return QObject::tr("The damaged project file was moved to %1; a new project starts.")
        .arg(QString::fromStdString(moved.string()));
  } catch (const ProjectError& e) {
    if (ok) *ok = false;
    return QObject::tr("The damaged project could not be moved aside: %1").arg(QString::fromStdString(e.what()));
  }
}

bool DamagedProjectPrompt::reopen(QWidget* parent, StudioSession& studio, const QString& model, QString* error) {
  const auto damaged = studio.lastDamagedProject();
  if (!damaged || !parent || !parent->isVisible()) return false;
  auto box = build(parent, *damaged);
  box->exec();
  if (box->clickedButton() != moveAsideButton(*box)) return false;
  bool ok = false;
  QString sentence = moveAside(damaged->folder, &ok);
  if (!ok) QMessageBox::warning(parent, QObject::tr("Cannot move the project aside"), sentence);
  return ok && studio.open(model, error);
}

}  // namespace nova::ui
