// The hot-op table on the offscreen platform: the model under QAbstractItemModelTester, numeric
// sorting, filtering, "Send to generator" for a selection of nodes or groups, selection sync with the
// timeline both ways, and the share palette; a screenshot goes to the test output folder.
#include "ui/trace/hot_op_view.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QFontMetrics>
#include <QHeaderView>
#include <QHBoxLayout>
#include <QItemSelectionModel>
#include <QPushButton>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QTest>

#include <gtest/gtest.h>

#include "core/trace/hot_op_ranking.h"
#include "core/trace/trace_reader.h"
#include "support/synthetic_trace.h"
#include "support/test_paths.h"
#include "ui/trace/hot_op_table_model.h"
#include "ui/trace/share_palette.h"
#include "ui/trace/timeline_view.h"

namespace nova::ui {
namespace {

class HotOpViewTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // One folder per test: CTest runs the tests of a fixture in parallel processes.
    auto dir = test::scratch_dir(std::string("hot_op_view_") +
                                 ::testing::UnitTest::GetInstance()->current_test_info()->name());
    auto p = test::seed_profile(dir, 4);
    trace_ = p.trace;
    graph_ = p.graph;
    result_ = p.attribution;
  }
  // Source-model names of the proxy's rows, top to bottom.
  static QStringList names(const HotOpView& v) {
    QStringList out;
    for (int r = 0; r < v.proxy()->rowCount(); ++r)
      out << v.proxy()->index(r, HotOpTableModel::Name).data().toString();
    return out;
  }
  std::shared_ptr<Trace> trace_;
  ModelGraph graph_;
  AttributionResult result_;
};

TEST_F(HotOpViewTest, ModelPassesTheItemModelTester) {
  HotOpTableModel model;
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
  model.setRows(HotOpRanking::rank(result_, HotOpRanking::By::Node));
  EXPECT_EQ(model.rowCount(), 5);
  EXPECT_EQ(model.columnCount(), HotOpTableModel::ColumnCount);
  EXPECT_EQ(model.index(0, HotOpTableModel::Name).data().toString(), "[0] convolution");
  EXPECT_EQ(model.index(0, HotOpTableModel::Share).data().toString().toStdString(), "42.7%");
  EXPECT_EQ(model.index(0, HotOpTableModel::PerCall).data().toString(), "17.70");
  EXPECT_EQ(model.index(0, HotOpTableModel::Calls).data().toInt(), 4);
  EXPECT_TRUE(model.index(0, HotOpTableModel::Headroom).data().toString().endsWith("x"));
  EXPECT_TRUE(
      model.index(0, HotOpTableModel::Name).data(Qt::ToolTipRole).toString().contains("implicit_convolve"));
  EXPECT_EQ(model.rowOfNode(4), 3);
  model.setRows(HotOpRanking::rank(result_, HotOpRanking::By::Group));
  EXPECT_EQ(model.rowOfNode(4), 0);
  model.setRows({});
  EXPECT_EQ(model.rowCount(), 0);
}

// In a dock as narrow as the studio's (about 830 px for 12 columns) every op's name is shown whole, on one
// line: the name column is as wide as its longest name, not squeezed by a stretch (the GPU box's screenshot
// showed "[5] lin..." over two lines).
TEST_F(HotOpViewTest, OpNamesAreNotClippedInANarrowDock) {
  HotOpView v;
  v.resize(830, 300);
  v.show();
  v.setAttribution(result_);
  QApplication::processEvents();
  const QFontMetrics fm(v.table()->font());
  ASSERT_GT(v.proxy()->rowCount(), 0);
  for (int r = 0; r < v.proxy()->rowCount(); ++r) {
    const QString name = v.proxy()->index(r, HotOpTableModel::Name).data().toString();
    EXPECT_GE(v.table()->columnWidth(HotOpTableModel::Name), fm.horizontalAdvance(name)) << name.toStdString();
  }
  EXPECT_FALSE(v.table()->wordWrap());
  EXPECT_GE(v.table()->horizontalHeader()->sectionSize(HotOpTableModel::Headroom),
            fm.horizontalAdvance(v.proxy()->headerData(HotOpTableModel::Headroom, Qt::Horizontal).toString()));
}

TEST_F(HotOpViewTest, SortsNumericallyAndFilters) {
  HotOpView v;
  v.setAttribution(result_);
  EXPECT_EQ(names(v).first(), "[0] convolution");
  v.table()->sortByColumn(HotOpTableModel::PerCall, Qt::AscendingOrder);
  EXPECT_EQ(names(v).first(), "(outside graph nodes)");  // 2 us per call, then mul at 3.3
  EXPECT_EQ(names(v)[1], "[4] mul");
  v.setFilter("MUL");
  EXPECT_EQ(names(v), QStringList{"[4] mul"});
  v.setFilter("");
  EXPECT_EQ(v.proxy()->rowCount(), 5);
}

TEST_F(HotOpViewTest, SendsTheSelectedNodesOrGroupsToTheGenerator) {
  HotOpView v;
  v.setAttribution(result_);
  QSignalSpy sent(&v, &HotOpView::sendToGenerator);
  EXPECT_FALSE(v.sendButton()->isEnabled());
  auto* sel = v.table()->selectionModel();
  sel->select(v.proxy()->index(0, 0), QItemSelectionModel::Select | QItemSelectionModel::Rows);
  sel->select(v.proxy()->index(2, 0), QItemSelectionModel::Select | QItemSelectionModel::Rows);
  EXPECT_TRUE(v.sendButton()->isEnabled());
  QTest::mouseClick(v.sendButton(), Qt::LeftButton);
  ASSERT_EQ(sent.count(), 1);
  EXPECT_EQ(sent[0][0].value<QList<int>>(), (QList<int>{0, 2}));
  EXPECT_FALSE(sent[0][1].toBool());

  v.setRankByGroup(true);
  EXPECT_EQ(names(v).first(), "conv+epilogue #0: convolution, minimum, add, mul");
  v.table()->selectRow(0);
  v.sendSelection();
  ASSERT_EQ(sent.count(), 2);
  EXPECT_EQ(sent[1][0].value<QList<int>>(), QList<int>{0});
  EXPECT_TRUE(sent[1][1].toBool());
}

TEST_F(HotOpViewTest, SelectionFollowsTheTimelineBothWays) {
  // The splitter owns both views (it is destroyed last and deletes them).
  QSplitter window(Qt::Vertical);
  auto& timeline = *new TimelineView;
  auto& hot = *new HotOpView;
  window.addWidget(&timeline);
  window.addWidget(&hot);
  hot.setAttribution(result_);
  timeline.setModel(std::make_shared<TimelineModel>(trace_, result_, graph_));
  QObject::connect(&timeline, &TimelineView::kernelClicked, &hot, &HotOpView::selectNode);
  QObject::connect(&hot, &HotOpView::nodeSelected, &timeline, &TimelineView::selectNode);

  window.resize(1100, 420);
  window.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&window));

  // Timeline -> table: clicking the add kernel selects the add row, without echoing back.
  const auto& add = timeline.model()->rows()[1].items[3];
  int x = (timeline.xOf(static_cast<double>(add.start)) + timeline.xOf(static_cast<double>(add.end()))) / 2;
  QSignalSpy echoed(&hot, &HotOpView::nodeSelected);
  QTest::mouseClick(&timeline, Qt::LeftButton, {}, QPoint(x, 24 + 22 + 11));
  QModelIndexList rows = hot.table()->selectionModel()->selectedRows();
  ASSERT_EQ(rows.size(), 1);
  EXPECT_EQ(rows[0].data().toInt(), 2);  // rank 2
  EXPECT_EQ(hot.proxy()->index(rows[0].row(), HotOpTableModel::Name).data().toString(), "[3] add");
  EXPECT_EQ(echoed.count(), 0);

  // Table -> timeline.
  hot.table()->selectRow(3);  // mul
  EXPECT_EQ(timeline.selectedNode(), 4);
  QPixmap shot = window.grab();
  ASSERT_TRUE(
      shot.save(QString::fromStdString((nova::test::test_output_dir() / "hot_ops.png").string())));
}

TEST(SharePalette, HotterSharesAreRedder) {
  QColor cold = SharePalette::colour(0.0), warm = SharePalette::colour(0.2), hot = SharePalette::colour(1.0);
  EXPECT_GT(cold.hue(), warm.hue());
  EXPECT_GT(warm.hue(), hot.hue());
  EXPECT_EQ(hot.hue(), 0);
  EXPECT_EQ(SharePalette::colour(5.0), hot);
}

}  // namespace
}  // namespace nova::ui
