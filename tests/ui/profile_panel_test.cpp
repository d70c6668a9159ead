// The profiling panel as the studio shows it: timeline over hot-op table, kept in step both ways,
// kernel search and the range selection reported in the status line; screenshot to the test output folder.
#include "ui/trace/profile_panel.h"

#include <QItemSelectionModel>
#include <QLineEdit>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QTest>

#include <gtest/gtest.h>

#include "core/trace/trace_reader.h"
#include "support/synthetic_trace.h"
#include "support/test_paths.h"
#include "ui/trace/hot_op_table_model.h"
#include "ui/trace/hot_op_view.h"
#include "ui/trace/timeline_view.h"

namespace nova::ui {
namespace {

TEST(ProfilePanel, KeepsTimelineAndHotOpsInStepAndReportsSearchAndSelection) {
  auto p = test::seed_profile(test::scratch_dir("profile_panel"), 4);

  ProfilePanel panel;
  panel.resize(1200, 520);
  panel.setProfile(p.trace, p.attribution, p.graph);
  panel.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&panel));
  EXPECT_TRUE(panel.statusText().startsWith("16 kernels, 166.0 us of GPU time, 95.2% attributed"))
      << panel.statusText().toStdString();

  QSignalSpy selected(&panel, &ProfilePanel::nodeSelected);
  panel.hotOps()->table()->selectRow(1);  // add
  ASSERT_EQ(selected.count(), 1);
  EXPECT_EQ(selected[0][0].toInt(), 3);
  EXPECT_EQ(panel.timeline()->selectedNode(), 3);

  panel.selectNode(2);  // from the graph view
  EXPECT_EQ(panel.timeline()->selectedNode(), 2);
  auto rows = panel.hotOps()->table()->selectionModel()->selectedRows();
  ASSERT_EQ(rows.size(), 1);
  EXPECT_EQ(panel.hotOps()->proxy()->index(rows[0].row(), HotOpTableModel::Name).data().toString(),
            "[2] minimum");

  QTest::keyClicks(panel.searchBox(), "vectorized");
  EXPECT_EQ(panel.timeline()->searchHits(), 12);
  EXPECT_TRUE(panel.statusText().contains("12 matches")) << panel.statusText().toStdString();
  panel.timeline()->setSelection(panel.timeline()->rangeStart(), panel.timeline()->rangeStart() + 25000);
  EXPECT_TRUE(panel.statusText().contains("selection 25.00 us")) << panel.statusText().toStdString();

  EXPECT_EQ(panel.nodeColours().size(), 4);
  EXPECT_GT(panel.nodeColours()[4].hue(), panel.nodeColours()[0].hue());  // conv is hotter than mul
  ASSERT_TRUE(panel.grab().save(
      QString::fromStdString((nova::test::test_output_dir() / "profile_panel.png").string())));
}

}  // namespace
}  // namespace nova::ui
