#pragma once
// The About box: the product, its version and the doctor report (collected in the background,
// since probing the Python interpreter takes seconds).
#include <QDialog>

class QPlainTextEdit;

namespace nova::ui {

class AboutDialog : public QDialog {
  Q_OBJECT
 public:
  AboutDialog(const QString& python, const QString& toolkit, QWidget* parent = nullptr);
  // Shown beside `parent` (not modal) and deleted when closed.
  static AboutDialog* open(const QString& python, const QString& toolkit, QWidget* parent);
  QString reportText() const;

 signals:
  void reportReady(const QString& text);

 private:
  QPlainTextEdit* report_;
};

}  // namespace nova::ui
