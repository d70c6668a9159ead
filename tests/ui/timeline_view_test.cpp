// The timeline widget on the offscreen platform: painting a seed-like trace (screenshot saved to
// the test output folder), level of detail on a large trace, keyboard and wheel zoom and pan, range
// selection, clicking a kernel, selecting a node, search, tooltips.
#include "ui/trace/timeline_view.h"

#include <QApplication>

#include <QSignalSpy>
#include <QTest>
#include <QWheelEvent>

#include <gtest/gtest.h>

#include "core/trace/trace_reader.h"
#include "support/synthetic_trace.h"
#include "support/test_paths.h"

namespace nova::ui {
namespace {

struct Fixture {
  std::shared_ptr<Trace> trace;
  AttributionResult attribution;
  std::shared_ptr<TimelineModel> model;
};

Fixture seed_fixture(int iterations) {
  // One folder per test: CTest runs the tests of a fixture in parallel processes.
  auto dir = test::scratch_dir(std::string("timeline_view_") +
                               ::testing::UnitTest::GetInstance()->current_test_info()->name());
  auto p = test::seed_profile(dir, iterations);
  return {p.trace, p.attribution, std::make_shared<TimelineModel>(p.trace, p.attribution, p.graph)};
}

class TimelineViewTest : public ::testing::Test {
 protected:
  void SetUp() override {
    f_ = seed_fixture(3);
    view_.resize(1100, 140);
    view_.setModel(f_.model);
    view_.show();
    ASSERT_TRUE(QTest::qWaitForWindowExposed(&view_));
  }
  // Centre pixel of an item of the stream row (row 1).
  QPoint centreOf(std::size_t index) {
    const auto& it = f_.model->rows()[1].items[index];
    int x = (view_.xOf(static_cast<double>(it.start)) + view_.xOf(static_cast<double>(it.end()))) / 2;
    return {x, 24 + 22 + 11};
  }
  Fixture f_;
  TimelineView view_;
};

TEST_F(TimelineViewTest, PaintsRowsAndSavesAScreenshot) {
  QImage shot = view_.grab().toImage();
  ASSERT_FALSE(shot.isNull());
  ASSERT_TRUE(
      shot.save(QString::fromStdString((nova::test::test_output_dir() / "timeline.png").string())));
  ASSERT_EQ(view_.lastPaintedItems().size(), 3u);
  EXPECT_EQ(view_.lastPaintedItems()[0], 12);  // op row: 4 spans per iteration, all wide enough
  EXPECT_EQ(view_.lastPaintedItems()[1], 15);  // stream 7: 4 kernels + 1 copy per iteration
  // The convolution's pixels carry its node colour, not the background.
  QPoint c = centreOf(1);
  EXPECT_NE(shot.pixelColor(c), view_.palette().base().color());
  EXPECT_NE(shot.pixelColor(c), view_.palette().alternateBase().color());
}

TEST_F(TimelineViewTest, DrawsTheIterationBoundariesInView) {
  ASSERT_EQ(f_.trace->iterations.size(), 3u);
  view_.setIterations(f_.trace->iterations);
  view_.setRange(static_cast<double>(f_.trace->begin_ns()), static_cast<double>(f_.trace->end_ns()));
  QImage shot = view_.grab().toImage();
  // The second and third iterations start inside the trace's span (the first one's mark precedes its
  // first kernel, at the span's edge).
  EXPECT_GE(view_.lastPaintedIterations(), 2);
  EXPECT_LE(view_.lastPaintedIterations(), 3);
  // The boundary is drawn: the pixel under the second iteration's mark, in the rows, is the line's.
  const double at = static_cast<double>(f_.trace->iterations[1].first);
  bool line = false;
  for (int y = 24 + 20; y < 24 + 40 && !line; ++y) line = shot.pixelColor(view_.xOf(at), y) == QColor(0x60, 0x60, 0x60);
  EXPECT_TRUE(line);
  ASSERT_TRUE(shot.save(QString::fromStdString((nova::test::test_output_dir() / "timeline_iterations.png").string())));
  // Zoomed inside one iteration's kernels, no boundary is in view.
  const auto& first = f_.model->rows()[1].items[1];
  view_.setRange(static_cast<double>(first.start), static_cast<double>(first.end()));
  view_.grab();
  EXPECT_EQ(view_.lastPaintedIterations(), 0);
}

TEST_F(TimelineViewTest, KeysAndWheelZoomAndPan) {
  double span = view_.rangeEnd() - view_.rangeStart();
  QTest::keyClick(&view_, Qt::Key_W);
  EXPECT_NEAR(view_.rangeEnd() - view_.rangeStart(), span * 0.8, span * 1e-9);
  QTest::keyClick(&view_, Qt::Key_S);
  EXPECT_NEAR(view_.rangeEnd() - view_.rangeStart(), span, span * 1e-9);
  double t0 = view_.rangeStart();
  QTest::keyClick(&view_, Qt::Key_D);
  EXPECT_NEAR(view_.rangeStart() - t0, span * 0.1, span * 1e-9);
  QTest::keyClick(&view_, Qt::Key_A);
  EXPECT_NEAR(view_.rangeStart(), t0, span * 1e-9);
  QPointF at(600, 60);
  QWheelEvent wheel(at, view_.mapToGlobal(at), {}, {0, 120}, Qt::NoButton, Qt::ControlModifier,
                    Qt::NoScrollPhase, false);
  QApplication::sendEvent(&view_, &wheel);
  EXPECT_LT(view_.rangeEnd() - view_.rangeStart(), span * 0.9);
  QTest::keyClick(&view_, Qt::Key_F);  // fit all again
  EXPECT_NEAR(view_.rangeEnd() - view_.rangeStart(), span, span * 1e-9);
}

TEST_F(TimelineViewTest, ShiftDragSelectsARangeAndShowsItsDuration) {
  QSignalSpy spy(&view_, &TimelineView::selectionChanged);
  QTest::mousePress(&view_, Qt::LeftButton, Qt::ShiftModifier, QPoint(300, 60));
  QTest::mouseMove(&view_, QPoint(700, 60));
  QTest::mouseRelease(&view_, Qt::LeftButton, Qt::ShiftModifier, QPoint(700, 60));
  double ns_per_px = (view_.rangeEnd() - view_.rangeStart()) / view_.plotWidth();
  EXPECT_NEAR(view_.selectionDuration(), 400 * ns_per_px, ns_per_px);
  EXPECT_GE(spy.count(), 1);
  QImage shot = view_.grab().toImage();
  shot.save(
      QString::fromStdString((nova::test::test_output_dir() / "timeline_selection.png").string()));
  QTest::keyClick(&view_, Qt::Key_F);  // fit the selection
  EXPECT_NEAR(view_.rangeEnd() - view_.rangeStart(), view_.selectionDuration(), 1.0);
  QTest::keyClick(&view_, Qt::Key_Escape);
  EXPECT_EQ(view_.selectionDuration(), 0);
}

TEST_F(TimelineViewTest, ClickingAKernelNamesItsNodeAndSelectNodeHighlights) {
  QSignalSpy clicked(&view_, &TimelineView::kernelClicked);
  QTest::mouseClick(&view_, Qt::LeftButton, {}, centreOf(3));  // add of the first iteration
  ASSERT_EQ(clicked.count(), 1);
  EXPECT_EQ(clicked[0][0].toInt(), 3);
  QTest::mouseClick(&view_, Qt::LeftButton, {}, centreOf(0));  // the copy: outside graph nodes
  ASSERT_EQ(clicked.count(), 2);
  EXPECT_EQ(clicked[1][0].toInt(), -1);
  view_.setRange(view_.rangeStart() + 1e9, view_.rangeEnd() + 1e9);  // far away
  view_.selectNode(4);
  EXPECT_EQ(view_.selectedNode(), 4);
  const auto& mul = f_.model->rows()[1].items[4];
  EXPECT_LE(view_.rangeStart(), static_cast<double>(mul.start));
  EXPECT_GE(view_.rangeEnd(), static_cast<double>(mul.start));
}

TEST_F(TimelineViewTest, SearchFindsKernelsByNameAndStepsThroughThem) {
  EXPECT_EQ(view_.setSearch("minimum"), 3 + 3);  // the kernels and the op-row spans
  EXPECT_EQ(view_.setSearch("MinimumOps"), 3);
  QTest::keyClick(&view_, Qt::Key_Period);
  QTest::keyClick(&view_, Qt::Key_Comma);
  EXPECT_EQ(view_.setSearch("nothing like it"), 0);
}

TEST_F(TimelineViewTest, TooltipsShowTheLaunchShape) {
  auto [row, index] = view_.itemAt(centreOf(1));
  ASSERT_EQ(row, 1);
  QString tip = view_.tooltipFor(row, index);
  EXPECT_TRUE(tip.contains("implicit_convolve_sgemm")) << tip.toStdString();
  EXPECT_TRUE(tip.contains("grid (512, 1, 1) block (128, 1, 1)")) << tip.toStdString();
  EXPECT_TRUE(tip.contains("32 registers")) << tip.toStdString();
  EXPECT_TRUE(tip.contains("graph node 0")) << tip.toStdString();
}

TEST(TimelineViewLod, NeverDrawsMoreThanOneItemPerPixel) {
  auto dir = test::scratch_dir("timeline_view_lod");
  test::write_seed_trace(dir / "big.novatrace", 20000);  // 100,000 activities
  auto trace = std::make_shared<Trace>(TraceReader::read(dir / "big.novatrace"));
  ModelGraph g = test::seed_graph();
  auto a = Attribution::compute(*trace, g);
  TimelineView view;
  view.resize(900, 140);
  view.setModel(std::make_shared<TimelineModel>(trace, a, g));
  view.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&view));
  for (double zoom : {1.0, 0.05, 0.001}) {
    double mid = (view.rangeStart() + view.rangeEnd()) / 2;
    double half = (view.rangeEnd() - view.rangeStart()) / 2 * zoom;
    view.setRange(mid - half, mid + half);
    view.repaint();
    for (int n : view.lastPaintedItems()) EXPECT_LE(n, view.plotWidth()) << "zoom " << zoom;
    view.fitAll();
  }
  view.grab().save(
      QString::fromStdString((nova::test::test_output_dir() / "timeline_100k.png").string()));
}

}  // namespace
}  // namespace nova::ui
