#pragma once
// Compares two kernel versions: side by side (two read-only panes aligned with padding lines, linked
// scrolling, changed lines tinted and changed characters boxed) or as a unified diff, with next and
// previous change (F8 / Shift+F8, as in Nsight Compute's source view and most IDEs).
#include <QWidget>

#include <memory>

#include "core/diff/line_diff.h"

class QLabel;
class QStackedWidget;
class QToolButton;
class QsciScintilla;

namespace nova::ui {

class DiffView : public QWidget {
  Q_OBJECT
 public:
  enum class Mode { side_by_side, unified };
  // Marker and indicator numbers used in the panes (exposed for tests).
  enum { RemovedMarker = 3, AddedMarker = 4, PaddingMarker = 5, HunkMarker = 6, ChangeIndicator = 8 };

  explicit DiffView(QWidget* parent = nullptr);
  ~DiffView() override;

  void setTexts(const QString& left_title, const QString& left, const QString& right_title,
                const QString& right);
  void setMode(Mode mode);
  Mode mode() const { return mode_; }

  bool nextChange();
  bool previousChange();
  int currentRow() const { return current_row_; }  // row of the current change, -1 before the first

  const LineDiff* diff() const { return diff_.get(); }
  QsciScintilla* leftPane() const { return left_; }
  QsciScintilla* rightPane() const { return right_; }
  QsciScintilla* unifiedPane() const { return unified_; }
  QString summary() const;

 signals:
  void currentChangeChanged(int row);

 private:
  void fillSideBySide();
  void fillUnified();
  void showRow(int row);

  std::unique_ptr<LineDiff> diff_;
  QString left_title_, right_title_;
  Mode mode_ = Mode::side_by_side;
  int current_row_ = -1;
  QsciScintilla* left_;
  QsciScintilla* right_;
  QsciScintilla* unified_;
  QStackedWidget* stack_;
  QLabel* left_label_;
  QLabel* right_label_;
  QLabel* summary_;
  QToolButton* mode_button_;
};

}  // namespace nova::ui
