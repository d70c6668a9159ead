// The diff view on the offscreen platform: both panes aligned row for row with padding, changed
// lines and characters marked, scrolling linked, next/previous change, unified mode.
#include "ui/diff/diff_view.h"

#include <Qsci/qsciscintilla.h>

#include <QScrollBar>
#include <QTest>

#include <gtest/gtest.h>

#include "ui/screenshot.h"

namespace nova::ui {
namespace {

const QString kLeft =
    "__global__ void k(const float* x, float* y, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i >= n) return;\n"
    "  float v = x[i];\n"
    "  y[i] = v * 2.0f;\n"
    "}\n";
const QString kRight =
    "__global__ void k(const float* __restrict__ x, float* __restrict__ y, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i >= n) return;\n"
    "  float v = __ldg(&x[i]);\n"
    "  v = fmaxf(v, 0.0f);\n"
    "  y[i] = v * 2.0f;\n"
    "}\n";

QString margin_text(QsciScintilla* pane, int line) {
  long size = pane->SendScintilla(QsciScintillaBase::SCI_MARGINGETTEXT, line, static_cast<void*>(nullptr));
  QByteArray text(size + 1, '\0');
  pane->SendScintilla(QsciScintillaBase::SCI_MARGINGETTEXT, line, static_cast<void*>(text.data()));
  return QString::fromUtf8(text.constData());
}

bool has_indicator(QsciScintilla* pane, int line, int index) {
  long pos = pane->positionFromLineIndex(line, index);
  return pane->SendScintilla(QsciScintillaBase::SCI_INDICATORVALUEAT, DiffView::ChangeIndicator, pos) != 0;
}

TEST(DiffView, AlignsBothSidesWithPaddingAndMarksChanges) {
  DiffView view;
  view.setTexts("v1", kLeft, "v2", kRight);
  QsciScintilla* left = view.leftPane();
  QsciScintilla* right = view.rightPane();
  ASSERT_EQ(left->lines(), right->lines());
  ASSERT_EQ(left->lines(), 7);
  // Row 4 exists only on the right: the left has an empty padding line there.
  EXPECT_EQ(left->text(4), "\n");
  EXPECT_EQ(right->text(4), "  v = fmaxf(v, 0.0f);\n");
  EXPECT_EQ(left->markersAtLine(4), 1u << DiffView::PaddingMarker);
  EXPECT_EQ(right->markersAtLine(4), 1u << DiffView::AddedMarker);
  EXPECT_EQ(margin_text(left, 4), "");
  EXPECT_EQ(margin_text(right, 4), "5");
  EXPECT_EQ(margin_text(left, 5), "5");  // source line numbers, not row numbers
  EXPECT_EQ(margin_text(right, 5), "6");
  // Row 0 changed: "__restrict__ " boxed on the right only, equal characters not boxed.
  EXPECT_EQ(left->markersAtLine(0), 1u << DiffView::RemovedMarker);
  int restrict_at = right->text(0).indexOf("__restrict__");
  EXPECT_TRUE(has_indicator(right, 0, restrict_at));
  EXPECT_FALSE(has_indicator(right, 0, 0));
  EXPECT_FALSE(has_indicator(left, 0, 0));
  // Unchanged rows carry no marker.
  EXPECT_EQ(left->markersAtLine(1), 0u);
  EXPECT_EQ(right->markersAtLine(1), 0u);
  EXPECT_EQ(view.summary(), "2 changes: −2 +3 lines");
}

TEST(DiffView, NextAndPreviousChangeAndLinkedScrolling) {
  QString left, right;
  for (int i = 0; i < 200; ++i) {
    left += QString("line %1\n").arg(i);
    right += (i == 20 || i == 150) ? QString("changed %1\n").arg(i) : QString("line %1\n").arg(i);
  }
  DiffView view;
  view.resize(800, 300);
  view.setTexts("a", left, "b", right);
  view.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&view));
  EXPECT_EQ(view.currentRow(), 20);  // the view opens on the first change
  EXPECT_TRUE(view.nextChange());
  EXPECT_EQ(view.currentRow(), 150);
  EXPECT_FALSE(view.nextChange());
  QCoreApplication::processEvents();
  int first = view.leftPane()->firstVisibleLine();
  EXPECT_GT(first, 100);
  EXPECT_EQ(view.rightPane()->firstVisibleLine(), first);
  view.rightPane()->verticalScrollBar()->setValue(60);
  EXPECT_EQ(view.leftPane()->firstVisibleLine(), 60);
  EXPECT_TRUE(view.previousChange());
  EXPECT_EQ(view.currentRow(), 20);
  EXPECT_FALSE(view.previousChange());
}

TEST(DiffView, UnifiedModeShowsHunksWithMarkers) {
  DiffView view;
  view.setTexts("v1.cu", kLeft, "v2.cu", kRight);
  view.setMode(DiffView::Mode::unified);
  QsciScintilla* u = view.unifiedPane();
  EXPECT_EQ(u->text(0), "--- v1.cu\n");
  EXPECT_EQ(u->text(1), "+++ v2.cu\n");
  EXPECT_TRUE(u->text(2).startsWith("@@"));
  int removed = 0, added = 0;
  for (int i = 0; i < u->lines(); ++i) {
    if (u->markersAtLine(i) == (1u << DiffView::RemovedMarker)) ++removed;
    if (u->markersAtLine(i) == (1u << DiffView::AddedMarker)) ++added;
  }
  EXPECT_EQ(removed, 2);
  EXPECT_EQ(added, 3);
}

TEST(DiffView, Screenshots) {
  DiffView view;
  view.resize(1300, 420);
  view.setTexts("v1 · builtin: fuse_epilogue", kLeft, "v2 · user edit", kRight);
  view.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&view));
  EXPECT_TRUE(test::save_screenshot(view, "diff_side_by_side"));
  view.setMode(DiffView::Mode::unified);
  QCoreApplication::processEvents();
  EXPECT_TRUE(test::save_screenshot(view, "diff_unified"));
}

}  // namespace
}  // namespace nova::ui
