#include "ui/editor/find_replace_bar.h"

#include <Qsci/qsciscintilla.h>

#include <QCheckBox>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QShortcut>
#include <QToolButton>

namespace nova::ui {

FindReplaceBar::FindReplaceBar(QsciScintilla* editor, QWidget* parent) : QWidget(parent), editor_(editor) {
  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(4, 2, 4, 2);
  find_ = new QLineEdit(this);
  find_->setPlaceholderText("Find");
  find_->setClearButtonEnabled(true);
  replace_ = new QLineEdit(this);
  replace_->setPlaceholderText("Replace with");
  case_ = new QCheckBox("Aa", this);
  case_->setToolTip("Match case");
  word_ = new QCheckBox("Word", this);
  word_->setToolTip("Whole words only");
  regex_ = new QCheckBox(".*", this);
  regex_->setToolTip("Regular expression");
  auto button = [this](const QString& text, const QString& tip, auto slot) {
    auto* b = new QToolButton(this);
    b->setText(text);
    b->setToolTip(tip);
    connect(b, &QToolButton::clicked, this, slot);
    return b;
  };
  status_ = new QLabel(this);
  status_->setMinimumWidth(90);
  layout->addWidget(find_, 2);
  layout->addWidget(button("Previous", "Previous match (Shift+Enter)", [this] { findPrevious(); }));
  layout->addWidget(button("Next", "Next match (Enter)", [this] { findNext(); }));
  layout->addWidget(case_);
  layout->addWidget(word_);
  layout->addWidget(regex_);
  layout->addWidget(replace_, 2);
  layout->addWidget(button("Replace", "Replace this match and find the next", [this] { replaceCurrent(); }));
  layout->addWidget(button("Replace all", "Replace every match (one undo step)", [this] { replaceAll(); }));
  layout->addWidget(status_);
  layout->addWidget(button("✕", "Close (Esc)", [this] {
    hide();
    editor_->setFocus();
  }));

  connect(find_, &QLineEdit::returnPressed, this, [this] {
    if (QGuiApplication::keyboardModifiers() & Qt::ShiftModifier)
      findPrevious();
    else
      findNext();
  });
  connect(replace_, &QLineEdit::returnPressed, this, [this] { replaceCurrent(); });
  auto* esc =
      new QShortcut(QKeySequence(Qt::Key_Escape), this, nullptr, nullptr, Qt::WidgetWithChildrenShortcut);
  connect(esc, &QShortcut::activated, this, [this] {
    hide();
    editor_->setFocus();
  });
}

void FindReplaceBar::setFindText(const QString& text) { find_->setText(text); }
void FindReplaceBar::setReplaceText(const QString& text) { replace_->setText(text); }
void FindReplaceBar::setCaseSensitive(bool on) { case_->setChecked(on); }
QString FindReplaceBar::status() const { return status_->text(); }

void FindReplaceBar::focusFind() {
  show();
  if (editor_->hasSelectedText() && !editor_->selectedText().contains('\n'))
    find_->setText(editor_->selectedText());
  find_->setFocus();
  find_->selectAll();
}

void FindReplaceBar::focusReplace() {
  focusFind();
  replace_->setFocus();
}

bool FindReplaceBar::find(bool forward, bool from_start) {
  if (find_->text().isEmpty()) return false;
  int line = -1, index = -1;
  if (from_start) {
    line = 0;
    index = 0;
  } else if (!forward && editor_->hasSelectedText()) {
    // Searching backwards starts before the current match, or it would find it again.
    int l2, i2;
    editor_->getSelection(&line, &index, &l2, &i2);
  }
  bool found = editor_->findFirst(find_->text(), regex_->isChecked(), case_->isChecked(), word_->isChecked(),
                                  /*wrap=*/!from_start, forward, line, index, /*show=*/true,
                                  /*posix=*/false, /*cxx11=*/regex_->isChecked());
  status_->setText(found ? QString() : QString("No match"));
  return found;
}

bool FindReplaceBar::findNext() { return find(true); }
bool FindReplaceBar::findPrevious() { return find(false); }

bool FindReplaceBar::replaceCurrent() {
  if (!editor_->hasSelectedText() && !find(true)) return false;
  editor_->replace(replace_->text());
  find(true);
  return true;
}

int FindReplaceBar::replaceAll() {
  if (find_->text().isEmpty()) return 0;
  int count = 0;
  editor_->beginUndoAction();
  // No wrap: each search continues after the last replacement, so a replacement that contains the
  // pattern is not replaced again.
  for (bool found = find(true, true); found; found = editor_->findNext()) {
    editor_->replace(replace_->text());
    ++count;
  }
  editor_->endUndoAction();
  status_->setText(count ? QString("%1 replaced").arg(count) : QString("No match"));
  return count;
}

}  // namespace nova::ui
