#pragma once
// The Warnings dock: what intake warned about the open model (value-dependent control flow that
// the captured graph follows for one branch only, a fallback capture route, ...), listed for as
// long as the model is open, unlike the status bar, whose next message replaces the last.
#include <string>
#include <vector>

#include <QWidget>

class QLabel;
class QListWidget;

namespace nova::ui {

class WarningsPanel : public QWidget {
  Q_OBJECT
 public:
  explicit WarningsPanel(QWidget* parent = nullptr);

  // `source` says where they come from ("intake of model.py"); no warnings: says there are none.
  void setWarnings(const QString& source, const std::vector<std::string>& warnings);
  // Nothing to show yet (no model, or intake has not finished): says what fills the list.
  void clear();
  QStringList warnings() const;
  QString message() const;

 signals:
  // How many warnings are listed now (the main window marks the dock's title).
  void countChanged(int count);

 private:
  QLabel* message_;
  QListWidget* list_;
};

}  // namespace nova::ui
