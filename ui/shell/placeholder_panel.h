#pragma once
// A labelled empty panel that tells the user what will appear in a dock ("Open a model to
// begin") until the real view for that stage is there.
#include <QWidget>

class QLabel;

namespace nova::ui {

class PlaceholderPanel : public QWidget {
  Q_OBJECT
 public:
  PlaceholderPanel(const QString& title, const QString& message, QWidget* parent = nullptr);
  void setMessage(const QString& message);
  QString message() const;

 private:
  QLabel* message_;
};

}  // namespace nova::ui
