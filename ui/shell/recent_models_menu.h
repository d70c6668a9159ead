#pragma once
#include <string>
#include <vector>

#include <QMenu>

namespace nova::ui {

// File > Open recent: one entry per recently opened model (file name and path), disabled when there
// is none; choosing one asks for that model to be opened.
class RecentModelsMenu : public QMenu {
  Q_OBJECT
 public:
  explicit RecentModelsMenu(QWidget* parent = nullptr);
  void setModels(const std::vector<std::string>& paths);

 signals:
  void modelChosen(const QString& path);
};

}  // namespace nova::ui
