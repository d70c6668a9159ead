#include "ui/diff/diff_view.h"

#include <Qsci/qsciscintilla.h>

#include <QFontDatabase>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QRegularExpression>
#include <QScrollBar>
#include <QStackedWidget>
#include <QToolButton>
#include <QVBoxLayout>

#include "ui/editor/cuda_lexer.h"

namespace nova::ui {

namespace {

QsciScintilla* make_pane(QWidget* parent) {
  auto* pane = new QsciScintilla(parent);
  pane->setUtf8(true);
  pane->setLexer(new CudaLexer(pane));
  pane->setReadOnly(true);
  pane->setMarginsFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  // Margin 0 shows the source line numbers as text (padding rows have none); margin 1 is unused.
  pane->setMarginType(0, QsciScintilla::TextMargin);
  pane->setMarginWidth(0, "00000");
  pane->setMarginWidth(1, 0);
  pane->markerDefine(QsciScintilla::Background, DiffView::RemovedMarker);
  pane->setMarkerBackgroundColor(QColor("#ffebe9"), DiffView::RemovedMarker);
  pane->markerDefine(QsciScintilla::Background, DiffView::AddedMarker);
  pane->setMarkerBackgroundColor(QColor("#e6ffec"), DiffView::AddedMarker);
  pane->markerDefine(QsciScintilla::Background, DiffView::PaddingMarker);
  pane->setMarkerBackgroundColor(QColor("#eeeeee"), DiffView::PaddingMarker);
  pane->markerDefine(QsciScintilla::Background, DiffView::HunkMarker);
  pane->setMarkerBackgroundColor(QColor("#ddf4ff"), DiffView::HunkMarker);
  pane->indicatorDefine(QsciScintilla::FullBoxIndicator, DiffView::ChangeIndicator);
  pane->setIndicatorDrawUnder(true, DiffView::ChangeIndicator);
  pane->setCaretLineVisible(false);
  return pane;
}

// Vertically through Scintilla's first visible line (the Qt scrollbar's range can lag behind the
// text and would clamp); horizontally through the scrollbars. Equal values change nothing, so a pair
// cannot ping-pong.
void link_panes(QsciScintilla* a, QsciScintilla* b) {
  for (auto [from, to] : {std::pair{a, b}, std::pair{b, a}}) {
    QObject::connect(from->verticalScrollBar(), &QScrollBar::valueChanged, to, [from, to] {
      if (to->firstVisibleLine() != from->firstVisibleLine())
        to->setFirstVisibleLine(from->firstVisibleLine());
    });
    QObject::connect(from->horizontalScrollBar(), &QScrollBar::valueChanged, to->horizontalScrollBar(),
                     &QScrollBar::setValue);
  }
}

void fill_pane(QsciScintilla* pane, const std::vector<const DiffRow*>& rows, bool left) {
  QStringList lines;
  for (const DiffRow* row : rows) lines << QString::fromStdString(left ? row->left_text : row->right_text);
  pane->setReadOnly(false);
  pane->setText(lines.join('\n'));
  pane->setReadOnly(true);
  pane->markerDeleteAll();
  pane->clearMarginText();
  pane->clearIndicatorRange(0, 0, pane->lines(), 0, DiffView::ChangeIndicator);
  // Translucent boxes under the text: the changed characters stay readable.
  QColor box = left ? QColor(255, 100, 100, 70) : QColor(60, 190, 90, 70);
  pane->setIndicatorForegroundColor(box, DiffView::ChangeIndicator);
  pane->setIndicatorOutlineColor(box, DiffView::ChangeIndicator);
  for (int i = 0; i < static_cast<int>(rows.size()); ++i) {
    const DiffRow& row = *rows[i];
    int number = left ? row.left_line : row.right_line;
    if (number) pane->setMarginText(i, QString::number(number), QsciScintillaBase::STYLE_LINENUMBER);
    if (row.kind == DiffRowKind::equal) continue;
    if (!number)
      pane->markerAdd(i, DiffView::PaddingMarker);
    else
      pane->markerAdd(i, left ? DiffView::RemovedMarker : DiffView::AddedMarker);
    for (const CharRange& r : left ? row.left_changes : row.right_changes)
      pane->fillIndicatorRange(i, r.start, i, r.start + r.length, DiffView::ChangeIndicator);
  }
}

}  // namespace

DiffView::DiffView(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  auto* bar = new QHBoxLayout;
  auto* prev = new QToolButton(this);
  prev->setText("◀ Previous change");
  prev->setShortcut(QKeySequence(Qt::SHIFT | Qt::Key_F8));
  prev->setToolTip("Previous change (Shift+F8)");
  auto* next = new QToolButton(this);
  next->setText("Next change ▶");
  next->setShortcut(QKeySequence(Qt::Key_F8));
  next->setToolTip("Next change (F8)");
  mode_button_ = new QToolButton(this);
  mode_button_->setText("Unified");
  mode_button_->setCheckable(true);
  mode_button_->setToolTip("Switch between side by side and unified");
  summary_ = new QLabel(this);
  bar->addWidget(prev);
  bar->addWidget(next);
  bar->addWidget(mode_button_);
  bar->addStretch();
  bar->addWidget(summary_);
  layout->addLayout(bar);

  stack_ = new QStackedWidget(this);
  auto* side = new QWidget(stack_);
  auto* grid = new QGridLayout(side);
  grid->setContentsMargins(0, 0, 0, 0);
  grid->setHorizontalSpacing(2);
  left_label_ = new QLabel(side);
  right_label_ = new QLabel(side);
  left_ = make_pane(side);
  right_ = make_pane(side);
  grid->addWidget(left_label_, 0, 0);
  grid->addWidget(right_label_, 0, 1);
  grid->addWidget(left_, 1, 0);
  grid->addWidget(right_, 1, 1);
  unified_ = make_pane(stack_);
  stack_->addWidget(side);
  stack_->addWidget(unified_);
  layout->addWidget(stack_, 1);

  link_panes(left_, right_);
  connect(next, &QToolButton::clicked, this, [this] { nextChange(); });
  connect(prev, &QToolButton::clicked, this, [this] { previousChange(); });
  connect(mode_button_, &QToolButton::toggled, this,
          [this](bool unified) { setMode(unified ? Mode::unified : Mode::side_by_side); });
}

DiffView::~DiffView() = default;

void DiffView::setTexts(const QString& left_title, const QString& left, const QString& right_title,
                        const QString& right) {
  left_title_ = left_title;
  right_title_ = right_title;
  diff_ = std::make_unique<LineDiff>(left.toStdString(), right.toStdString());
  current_row_ = -1;
  left_label_->setText("<b>" + left_title.toHtmlEscaped() + "</b>");
  right_label_->setText("<b>" + right_title.toHtmlEscaped() + "</b>");
  summary_->setText(summary());
  fillSideBySide();
  fillUnified();
  if (!diff_->identical()) nextChange();
}

QString DiffView::summary() const {
  if (!diff_) return {};
  if (diff_->identical()) return "No differences";
  int added = 0, removed = 0;
  for (const auto& row : diff_->rows()) {
    if (row.kind == DiffRowKind::added || row.kind == DiffRowKind::changed) ++added;
    if (row.kind == DiffRowKind::removed || row.kind == DiffRowKind::changed) ++removed;
  }
  return QString("%1 change%2: −%3 +%4 lines")
      .arg(diff_->hunks().size())
      .arg(diff_->hunks().size() == 1 ? "" : "s")
      .arg(removed)
      .arg(added);
}

void DiffView::fillSideBySide() {
  std::vector<const DiffRow*> rows;
  for (const auto& row : diff_->rows()) rows.push_back(&row);
  fill_pane(left_, rows, true);
  fill_pane(right_, rows, false);
}

void DiffView::fillUnified() {
  QString text =
      QString::fromStdString(diff_->unified(left_title_.toStdString(), right_title_.toStdString()));
  if (text.endsWith('\n')) text.chop(1);
  unified_->setReadOnly(false);
  unified_->setText(text);
  unified_->setReadOnly(true);
  unified_->markerDeleteAll();
  unified_->setMarginWidth(0, 0);
  for (int i = 0; i < unified_->lines(); ++i) {
    QString line = unified_->text(i);
    if (i < 2) continue;  // the ---/+++ header
    if (line.startsWith("@@"))
      unified_->markerAdd(i, HunkMarker);
    else if (line.startsWith('-'))
      unified_->markerAdd(i, RemovedMarker);
    else if (line.startsWith('+'))
      unified_->markerAdd(i, AddedMarker);
  }
}

void DiffView::setMode(Mode mode) {
  mode_ = mode;
  stack_->setCurrentIndex(mode == Mode::unified ? 1 : 0);
  mode_button_->blockSignals(true);
  mode_button_->setChecked(mode == Mode::unified);
  mode_button_->blockSignals(false);
  if (current_row_ >= 0) showRow(current_row_);
}

void DiffView::showRow(int row) {
  if (mode_ == Mode::side_by_side) {
    // Leave a little context above the change; the right pane follows through the linked scrollbar.
    left_->setFirstVisibleLine(std::max(0, row - 3));
    right_->setFirstVisibleLine(left_->firstVisibleLine());
    left_->setCursorPosition(row, 0);
    right_->setCursorPosition(row, 0);
    return;
  }
  // The unified text merges changes closer than the context: show the hunk whose line ranges hold
  // the change's left or right line.
  const DiffRow& target = diff_->rows()[row];
  static const QRegularExpression header(R"(^@@ -(\d+),(\d+) \+(\d+),(\d+) @@)");
  for (int i = 0; i < unified_->lines(); ++i) {
    auto m = header.match(unified_->text(i));
    if (!m.hasMatch()) continue;
    int a = m.captured(1).toInt(), b = m.captured(2).toInt(), c = m.captured(3).toInt(),
        d = m.captured(4).toInt();
    bool holds_left = target.left_line && target.left_line >= a && target.left_line < a + b;
    bool holds_right = target.right_line && target.right_line >= c && target.right_line < c + d;
    if (holds_left || holds_right) {
      unified_->setFirstVisibleLine(std::max(0, i - 1));
      unified_->setCursorPosition(i, 0);
      return;
    }
  }
}

bool DiffView::nextChange() {
  if (!diff_) return false;
  auto row = diff_->next_change(current_row_);
  if (!row) return false;
  current_row_ = *row;
  showRow(current_row_);
  emit currentChangeChanged(current_row_);
  return true;
}

bool DiffView::previousChange() {
  if (!diff_) return false;
  auto row = diff_->previous_change(current_row_);
  if (!row) return false;
  current_row_ = *row;
  showRow(current_row_);
  emit currentChangeChanged(current_row_);
  return true;
}

}  // namespace nova::ui
