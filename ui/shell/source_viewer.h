#pragma once
// A read-only view of a model's Python source, opened at a line: where "click opens the source"
// from the graph's node details lands.
#include <QDialog>

class QsciScintilla;

namespace nova::ui {

class SourceViewer : public QDialog {
  Q_OBJECT
 public:
  explicit SourceViewer(QWidget* parent = nullptr);
  // A viewer of `file` at `line`, shown beside `parent` and deleted when closed.
  static SourceViewer* open(const QString& file, int line, QWidget* parent);
  // Loads `file` and shows `line` (1-based) highlighted; false (with a message shown) if unreadable.
  bool showFile(const QString& file, int line);
  int currentLine() const;  // 1-based
  QString text() const;

 private:
  QsciScintilla* editor_;
  int marker_ = -1;
};

}  // namespace nova::ui
