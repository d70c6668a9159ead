// The profiling panel as the studio shows it: timeline over hot-op table, kept in step both ways,
// kernel search and the range selection reported in the status line; screenshot to the test output folder.
#include "ui/trace/profile_panel.h"

#include <fstream>

#include <QItemSelectionModel>
#include <QLineEdit>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QTest>

#include <gtest/gtest.h>

#include "core/graph/model_graph.h"
#include "core/trace/attribution.h"
#include "core/trace/gpu_iterations.h"
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

// A real H100 trace (session 24, `nova profile` of mlp_block): the host launched all 20 iterations in its
// first 1.5 ms of 28. The boundaries are drawn where each iteration began on the GPU, across the trace.
TEST(ProfilePanel, IterationBoundariesAreWhereEachIterationBeganOnTheGpu) {
  auto trace = std::make_shared<Trace>(
      TraceReader::read(test::fixtures_dir() / "traces" / "h100_session24" / "mlp_block.novatrace"));
  std::ifstream in(test::fixtures_dir() / "traces" / "mlp_block.graph.json");
  ASSERT_TRUE(in) << "missing fixture mlp_block.graph.json";
  ModelGraph graph = nlohmann::json::parse(in).get<ModelGraph>();
  ProfilePanel panel;
  panel.resize(1400, 520);
  panel.setProfile(trace, Attribution::compute(*trace, graph), graph);
  panel.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&panel));
  EXPECT_TRUE(panel.timeline()->iterationsOnGpu());
  EXPECT_EQ(panel.timeline()->iterations(), GpuIterations::starts(*trace));
  ASSERT_EQ(panel.timeline()->iterations().size(), 20u);
  // The last boundary lies in the trace's last twentieth, where the host's mark lay in its first.
  const double span = static_cast<double>(trace->end_ns() - trace->begin_ns());
  EXPECT_GT(static_cast<double>(panel.timeline()->iterations().back().first - trace->begin_ns()), 0.9 * span);
  EXPECT_LT(static_cast<double>(trace->iterations.back().first - trace->begin_ns()), 0.1 * span);
  panel.timeline()->fitAll();
  panel.grab();
  EXPECT_EQ(panel.timeline()->lastPaintedIterations(), 20);
  ASSERT_TRUE(panel.grab().save(
      QString::fromStdString((nova::test::test_output_dir() / "profile_panel_gpu_iterations.png").string())));

  // A trace that cannot say (an extra launch breaks the equal runs): the host's marks, labelled so.
  auto odd = std::make_shared<Trace>(*trace);
  odd->activities.push_back(odd->activities.back());
  odd->activities.back().correlation += 1000;
  panel.setProfile(odd, Attribution::compute(*odd, graph), graph);
  EXPECT_FALSE(panel.timeline()->iterationsOnGpu());
  EXPECT_EQ(panel.timeline()->iterations(), odd->iterations);
}

}  // namespace
}  // namespace nova::ui
