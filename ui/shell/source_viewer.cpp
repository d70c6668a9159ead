#include "ui/shell/source_viewer.h"

#include <Qsci/qscilexerpython.h>
#include <Qsci/qsciscintilla.h>
#include <QFile>
#include <QFileInfo>
#include <QFontDatabase>
#include <QVBoxLayout>

namespace nova::ui {

SourceViewer::SourceViewer(QWidget* parent) : QDialog(parent) {
  resize(900, 640);
  editor_ = new QsciScintilla(this);
  auto* lexer = new QsciLexerPython(editor_);
  lexer->setDefaultFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  editor_->setLexer(lexer);
  editor_->setReadOnly(true);
  editor_->setMarginType(0, QsciScintilla::NumberMargin);
  editor_->setMarginWidth(0, "00000");
  editor_->setCaretLineVisible(true);
  editor_->setCaretLineBackgroundColor(QColor("#fff3c4"));
  marker_ = editor_->markerDefine(QsciScintilla::RightArrow);
  editor_->setMarkerBackgroundColor(QColor("#fca311"), marker_);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(editor_);
}

bool SourceViewer::showFile(const QString& file, int line) {
  QFile f(file);
  if (!f.open(QIODevice::ReadOnly)) {
    editor_->setText(tr("Cannot read %1: %2").arg(file, f.errorString()));
    return false;
  }
  editor_->setText(QString::fromUtf8(f.readAll()));
  setWindowTitle(tr("%1 — line %2").arg(QFileInfo(file).fileName()).arg(line));
  editor_->markerDeleteAll();
  if (line > 0) {
    editor_->markerAdd(line - 1, marker_);
    editor_->setCursorPosition(line - 1, 0);
    editor_->ensureLineVisible(line - 1);
  }
  return true;
}

int SourceViewer::currentLine() const {
  int line = 0, index = 0;
  editor_->getCursorPosition(&line, &index);
  return line + 1;
}

QString SourceViewer::text() const { return editor_->text(); }

SourceViewer* SourceViewer::open(const QString& file, int line, QWidget* parent) {
  auto* viewer = new SourceViewer(parent);
  viewer->setAttribute(Qt::WA_DeleteOnClose);
  viewer->showFile(file, line);
  viewer->show();
  return viewer;
}

}  // namespace nova::ui
