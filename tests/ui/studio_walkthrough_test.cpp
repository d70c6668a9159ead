// The studio walked through as a user does it (issue #27), over sessions with a scripted worker (the
// worker's answers recorded on the H200) and the scripted loopback LLM server: open the seed model and
// see its graph, open its recorded trace (timeline with iteration boundaries, hot ops), send the hot
// group to the generator, edit the kernel and build it with NVRTC (diagnostics at their line), fix it,
// diff two versions, validate and benchmark (results, roofline) and choose a version for export; then
// send a group to the LLM and watch its search. Each step saves the window's picture into
// $NOVA_UI_SCREENSHOTS (default: the test output folder's walkthrough/). ctest runs it a second time on
// a real X server (xvfb-run, the xcb platform) where xvfb-run exists: ui_walkthrough_xvfb.
#include <QDockWidget>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTableWidget>
#include <QTest>

#include <gtest/gtest.h>

#include "core/jobs/worker_run_error.h"
#include "core/sandbox/sandbox_probe.h"
#include "core/sandbox/unsandboxed_consent.h"
#include "ui/shell/studio_session.h"
#include "scripted_sessions.h"
#include "support/llm_server/scripted_llm_server.h"
#include "support/test_paths.h"
#include "ui/diff/diff_view.h"
#include "ui/editor/cuda_editor.h"
#include "ui/editor/diagnostics_list.h"
#include "ui/graph/graph_view.h"
#include "ui/graph/model_graph_widget.h"
#include "ui/llm/llm_best_chart.h"
#include "ui/llm/llm_panel.h"
#include "ui/results/results_panel.h"
#include "ui/results/roofline_chart.h"
#include "ui/shell/main_window.h"
#include "ui/trace/profile_panel.h"
#include "ui/trace/timeline_view.h"
#include "ui/versions/kernel_workspace.h"
#include "ui/versions/version_tree_model.h"
#include "ui/versions/version_tree_view.h"

namespace nova::ui {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;
using test::ScriptedSessions;

// The worker as on a GPU machine: the recorded graph, a passing validation and the recorded
// benchmark. For the LLM's kernels (told apart by name, as tests/core/llm_search_test.cpp does) the
// candidate's times are scaled: the row-wise kernel 3x slower than recorded, the tiled one 2x faster.
json recordedWorker(const std::string& model, const std::string& cmd, const json& args, const WorkerCall&) {
  if (cmd == "intake") return ScriptedSessions::recordedIntake(model);
  if (cmd != "evaluate") throw WorkerRunError(WorkerRunError::Kind::BadRequest, "the test's worker does not run " + cmd);
  if (model.find("matmul_scaling_residual_add") == std::string::npos)
    return {{"validation", ScriptedSessions::recordedValidation(true)},
            {"benchmark", ScriptedSessions::recordedBenchmark()}};
  const std::string what = args.dump();
  double scale = 1.0;
  if (what.find("linear_scale_rowwise") != std::string::npos) scale = 3.0;
  if (what.find("linear_scale_tiled") != std::string::npos) scale = 0.5;
  json bench = ScriptedSessions::recordedBenchmark("matmul_scaling_residual_add_g0.h200.json");
  for (auto& m : bench["measurements"])
    if (m["variant"] == "candidate")
      for (auto& x : m["samples"]) x = x.get<double>() * scale;
  return {{"validation", ScriptedSessions::recordedValidation(true)}, {"benchmark", bench}};
}

fs::path shotsDir() {
  const QByteArray env = qgetenv("NOVA_UI_SCREENSHOTS");
  fs::path dir = env.isEmpty() ? test::test_output_dir() / "walkthrough" : fs::path(env.toStdString());
  fs::create_directories(dir);
  return dir;
}

void shot(QWidget& w, const std::string& name) {
  QTest::qWait(150);  // let charts and docks settle
  const fs::path path = shotsDir() / (name + ".png");
  EXPECT_TRUE(w.grab().save(QString::fromStdString(path.string()))) << path;
}

class StudioWalkthrough : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::scratch_dir(std::string("walkthrough_") +
                             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    setenv("NOVA_SETTINGS", (dir_ / "settings.json").c_str(), 1);
    setenv("NOVA_PROJECTS", (dir_ / "projects").c_str(), 1);
  }
  fs::path dir_;
  ScriptedSessions sessions_{recordedWorker};
};

TEST_F(StudioWalkthrough, FromTheModelToTheExportChoice) {
  MainWindow w(Settings{}, sessions_.backend());
  w.resize(1600, 1000);
  w.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&w));
  shot(w, "01_start");

  // Open the seed model: its graph, fitted to the view.
  QSignalSpy settled(&w, &MainWindow::modelSettled);
  QSignalSpy ready(&w, &MainWindow::candidatesReady);
  QSignalSpy laidOut(w.graphWidget()->view(), &GraphView::layoutReady);
  ASSERT_TRUE(w.openModel(QString::fromStdString((test::repo_examples_dir() / "conv2d_min_add_multiply.py").string())));
  ASSERT_TRUE(settled.count() > 0 || settled.wait(30000));
  ASSERT_TRUE(ready.count() > 0 || ready.wait(60000));
  ASSERT_TRUE(laidOut.count() > 0 || laidOut.wait(30000));
  GraphView* graph = w.graphWidget()->view();
  const QRectF drawn = graph->scene()->itemsBoundingRect();
  const QRectF seen = graph->mapToScene(graph->viewport()->rect()).boundingRect();
  EXPECT_TRUE(seen.contains(drawn.adjusted(10, 10, -10, -10)))
      << "the default zoom does not show the whole model";
  shot(w, "02_graph");

  // Open the recorded trace: timeline (with its iteration boundaries) and hot ops.
  ASSERT_TRUE(w.openTrace(
      QString::fromStdString((test::fixtures_dir() / "traces" / "conv2d_min_add_multiply.novatrace").string())));
  auto* timeline = w.profilePanel()->findChild<TimelineView*>();
  ASSERT_NE(timeline, nullptr);
  w.findChild<QDockWidget*>("dock_timeline")->raise();
  shot(w, "03_trace");
  EXPECT_GT(timeline->lastPaintedIterations(), 0);

  // Send the hot group to the generator: its kernel opens in the editor.
  w.sendToGenerator({0}, true);
  KernelWorkspace* ws = w.workspace();
  ASSERT_TRUE(ws->currentVersion());
  const qint64 generated = *ws->currentVersion();
  shot(w, "04_generator");

  // Edit it into a mistake and build: the diagnostics point at the line.
  QSignalSpy built(ws, &KernelWorkspace::versionBuilt);
  const QString good = ws->editor()->text();
  ws->editor()->setText("extern \"C\" __global__ void broken(float* y) {\n  y[threadIdx.x] = undeclared_x;\n}\n");
  ws->buildCurrent();
  ASSERT_TRUE(built.wait(120000));
  EXPECT_GE(ws->diagnosticsList()->topLevelItemCount(), 1);
  shot(w, "05_diagnostics");

  // Back to the generated kernel with a comment added: it builds.
  ws->editor()->setText("// reviewed\n" + good);
  ws->buildCurrent();
  ASSERT_TRUE(built.wait(120000));
  const qint64 edited = built.last().at(0).toLongLong();
  EXPECT_EQ(ws->diagnosticsList()->topLevelItemCount(), 0);

  // Diff the generated version and the edit.
  ws->versionTree()->selectVersions({generated, edited});
  ws->versionTree()->diffSelected();
  EXPECT_EQ(ws->tabs()->currentWidget(), ws->diffView());
  shot(w, "06_diff");

  // Validate and benchmark the generated version: results, chart and roofline; choose it for export.
  QSignalSpy evaluated(&w, &MainWindow::evaluationSettled);
  ws->versionTree()->selectVersions({generated});
  ws->versionTree()->validateSelected();
  ASSERT_TRUE(evaluated.wait(60000));
  EXPECT_GT(w.resultsPanel()->roofline()->dotCount(), 0);
  shot(w, "07_results");
  ws->versionTree()->selectVersions({generated});
  ws->versionTree()->chooseSelectedForExport();
  EXPECT_TRUE(ws->versionTree()->message().contains("will be exported")) << ws->versionTree()->message().toStdString();
  shot(w, "08_export_choice");
}

TEST_F(StudioWalkthrough, SendAGroupToTheLlmAndWatchItsSearch) {
  auto answer = [](const char* file, int tokens) {
    return json{{"type", "openai"},
                {"text_file", (test::fixtures_dir() / "llm" / file).string()},
                {"chunk", 60},
                {"delay_s", 0.005},
                {"usage", {{"prompt_tokens", tokens}, {"completion_tokens", tokens / 2}}}};
  };
  test::ScriptedLlmServer server(
      // Round 1 (two lineages): one faster than the builtin kernel, one that does not compile; round 2
      // refines them: one slower, one wrong. Round 1 brought a better kernel, so round 2 runs.
      {{"responses", json::array({answer("faster.md", 1200), answer("does_not_compile.md", 1400),
                                  answer("slower.md", 1600), answer("wrong.md", 1500)})}},
      dir_ / "server");
  LlmProvider p = server.provider(LlmProtocol::openai_chat);
  p.name = "scripted";
  p.usd_per_mtok_in = 3;
  p.usd_per_mtok_out = 15;
  Settings s;
  s.llm_providers = {p};
  s.llm_default_provider = "scripted";
  MainWindow w(s, sessions_.backend());
  w.resize(1600, 1000);
  w.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&w));
  LlmPanel* panel = w.llmPanel();
  panel->findChild<QSpinBox*>("llmLineages")->setValue(2);
  panel->findChild<QSpinBox*>("llmRounds")->setValue(2);
  QSignalSpy ready(&w, &MainWindow::candidatesReady);
  ASSERT_TRUE(w.openModel(QString::fromStdString((test::shared_examples_dir() / "matmul_scaling_residual_add.py").string())));
  ASSERT_TRUE(ready.count() > 0 || ready.wait(60000));

  // Where the real sandbox cannot start (a container without user namespaces): the project's consent.
  if (!SandboxProbe::probe("bwrap").available) UnsandboxedConsent::set(w.studio()->session()->project_dir(), true);
  QSignalSpy ended(panel, &LlmPanel::searchEnded);
  ASSERT_TRUE(w.sendToLlm(0)) << panel->status().toStdString();
  for (int i = 0; i < 400 && panel->answerText().isEmpty(); ++i) QTest::qWait(10);
  shot(w, "09_llm_streaming");
  ASSERT_TRUE(ended.count() > 0 || ended.wait(180000)) << panel->status().toStdString();
  EXPECT_EQ(panel->candidates()->rowCount(), 4);
  EXPECT_GT(panel->chart()->measuredCount(), 0);
  shot(w, "10_llm_search");
  shot(*panel, "11_llm_panel");
  // The candidates are in the version tree, each with its llm origin.
  int llm = 0;
  for (const auto& v : w.project()->all_versions()) llm += v.origin.kind == OriginKind::llm;
  EXPECT_GE(llm, 3);
}

}  // namespace
}  // namespace nova::ui
