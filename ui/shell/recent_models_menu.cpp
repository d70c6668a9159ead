#include "ui/shell/recent_models_menu.h"

#include <QFileInfo>

namespace nova::ui {

RecentModelsMenu::RecentModelsMenu(QWidget* parent) : QMenu(tr("Open &recent"), parent) {}

void RecentModelsMenu::setModels(const std::vector<std::string>& paths) {
  clear();
  for (const auto& path : paths) {
    QString p = QString::fromStdString(path);
    addAction(QFileInfo(p).fileName() + "  —  " + p, this, [this, p] { emit modelChosen(p); });
  }
  setEnabled(!paths.empty());
}

}  // namespace nova::ui
