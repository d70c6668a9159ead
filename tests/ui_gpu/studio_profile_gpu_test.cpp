// The studio's Profile action end to end on a GPU, as a user runs it: nova-studio's window over the
// real session (worker processes of the worker Python, $NOVA_PYTHON), the shared example mlp_block.py
// opened and captured by intake, then Tools > Profile model, traced by the CUPTI tracer in a worker.
// What the user then sees is checked: kernels on the timeline, rows in the hot-op table, nearly all GPU
// time attributed to graph nodes, the graph coloured by heat. A summary goes to stdout and pictures
// of the window to <test output>/studio-gpu/. Skipped where no CUDA device exists (CI). A GPU box
// without Qt runs this binary from the kit packaging/studio-kit.sh makes (packaging/studio-gpu.sh).
#include <filesystem>
#include <iostream>

#include <QAction>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTest>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/env/settings.h"
#include "core/trace/profile_runner.h"
#include "ui/graph/model_graph_widget.h"
#include "ui/shell/main_window.h"
#include "ui/shell/studio_session.h"
#include "ui/trace/hot_op_table_model.h"
#include "ui/trace/hot_op_view.h"
#include "ui/trace/profile_panel.h"
#include "ui/trace/timeline_view.h"

#include "studio_gpu_fixture.h"

namespace nova::ui {
namespace {
namespace fs = std::filesystem;
constexpr int kProfileMs = 600'000;  // the profile job's own budget is 10 minutes

TEST_F(StudioGpu, ProfileActionTracesTheOpenModelIntoTheTimelineAndHotOps) {
  ASSERT_NO_FATAL_FAILURE(useExample("mlp_block.py"));
  // The window as app/studio_main.cpp builds it: the saved settings and the default backend (the
  // engine's ProjectSession with worker processes, the CUDA driver probed for a GPU).
  MainWindow w(Settings::load());
  w.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&w));

  QSignalSpy candidates(&w, &MainWindow::candidatesReady);
  ASSERT_NO_FATAL_FAILURE(openModel(w));
  std::cout << "intake: " << w.graph()->nodes.size() << " graph nodes; " << w.statusBar()->currentMessage().toStdString()
            << "\n";
  // The builtin generator's job follows intake; the profile is not run beside it.
  EXPECT_TRUE(candidates.count() > 0 || candidates.wait(kIntakeMs)) << w.statusBar()->currentMessage().toStdString();
  saveScreenshot(w, "1-after-intake");

  // This machine has a GPU, so the studio offers the action (it decides as ProfileRunner does).
  ASSERT_TRUE(w.profileAction()->isEnabled()) << w.profileAction()->toolTip().toStdString();
  QSignalSpy stored(w.studio(), &StudioSession::profileStored);
  QSignalSpy profiled(&w, &MainWindow::profileSettled);
  w.profileAction()->trigger();
  ASSERT_TRUE(profiled.wait(kProfileMs)) << "the profile did not end in " << kProfileMs / 1000 << " s";
  const QString message = profiled.first().at(1).toString();
  ASSERT_TRUE(profiled.first().at(0).toBool()) << message.toStdString();
  std::cout << "profile: " << message.toStdString() << "\n";

  // The trace is the project's, in its folder.
  ASSERT_EQ(stored.count(), 1);
  const fs::path trace = stored.first().at(0).toString().toStdString();
  EXPECT_TRUE(fs::exists(trace)) << trace;

  // The timeline: the traced kernels, drawn.
  ProfilePanel* panel = w.profilePanel();
  EXPECT_FALSE(panel->isEmpty());
  EXPECT_TRUE(panel->isVisible());
  const TimelineModel* timeline = panel->timeline()->model();
  ASSERT_NE(timeline, nullptr);
  ASSERT_NE(timeline->trace(), nullptr);
  const std::size_t kernels = timeline->trace()->kernel_count();
  EXPECT_GT(kernels, 0u);
  EXPECT_GT(timeline->item_count(), 0u);
  saveScreenshot(w, "2-after-profile");
  int drawn = 0;
  for (int n : panel->timeline()->lastPaintedItems()) drawn += n;
  EXPECT_GT(drawn, 0) << "the timeline drew no kernel";

  // The hot-op table: rows naming the graph's nodes, and nearly all GPU time attributed to them.
  const HotOpTableModel* hot = panel->hotOps()->tableModel();
  ASSERT_GT(hot->rowCount(), 0);
  double attributed = 0;
  for (const OpStats& op : hot->rows()) {
    if (op.level == OpStats::Level::Unattributed) continue;
    attributed += op.share;
    EXPECT_EQ(op.level, OpStats::Level::Node) << op.name;  // the table ranks nodes first
    EXPECT_NE(w.graph()->node(op.id), nullptr) << op.name << " is no node of the graph";
  }
  EXPECT_GT(attributed, 0.9) << panel->statusText().toStdString();
  EXPECT_TRUE(panel->statusText().contains("attributed")) << panel->statusText().toStdString();

  // The graph: coloured by each node's share of GPU time.
  EXPECT_FALSE(panel->nodeShares().empty());
  EXPECT_TRUE(w.graphWidget()->view()->showsHeat());

  std::cout << fmt::format("studio profile of {}: {} kernels, {} hot-op rows, {:.1f}% of GPU time attributed\n",
                           model_.filename().string(), kernels, hot->rowCount(), attributed * 100);
  for (int row = 0; row < std::min(hot->rowCount(), 5); ++row) {
    const OpStats& op = hot->op(row);
    std::cout << fmt::format("  #{} {:<40} {:5.1f}%  {:9.1f} us  calls {:3}  kernels {:4}\n", row + 1, op.name,
                             op.share * 100, op.gpu_ns / 1e3, op.calls, op.kernels);
  }
}

}  // namespace
}  // namespace nova::ui
