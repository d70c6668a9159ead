#pragma once
// Find and replace over a QScintilla editor: the bar the kernel workspace shows on Ctrl+F
// (Ctrl+H with the replace field focused). Enter finds the next match, Shift+Enter the previous.
#include <QWidget>

class QCheckBox;
class QLabel;
class QLineEdit;
class QsciScintilla;

namespace nova::ui {

class FindReplaceBar : public QWidget {
  Q_OBJECT
 public:
  explicit FindReplaceBar(QsciScintilla* editor, QWidget* parent = nullptr);

  void setFindText(const QString& text);
  void setReplaceText(const QString& text);
  void setCaseSensitive(bool on);
  bool findNext();
  bool findPrevious();
  bool replaceCurrent();  // replaces the selected match, then finds the next
  int replaceAll();       // one undo step; returns the number of replacements
  QString status() const;
  void focusFind();
  void focusReplace();

 private:
  bool find(bool forward, bool from_start = false);

  QsciScintilla* editor_;
  QLineEdit* find_;
  QLineEdit* replace_;
  QCheckBox* case_;
  QCheckBox* regex_;
  QCheckBox* word_;
  QLabel* status_;
};

}  // namespace nova::ui
