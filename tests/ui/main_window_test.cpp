// The studio shell on the offscreen platform: docks, placeholder messages, opening models,
// recent files, settings round-trip, and a screenshot to look at.
#include "ui/shell/main_window.h"

#include <optional>

#include <QApplication>
#include <QDockWidget>
#include <QFile>
#include <QMenuBar>
#include <QSignalSpy>
#include <QTest>

#include <gtest/gtest.h>

#include "core/graph/model_graph.h"
#include "support/test_paths.h"
#include "ui/shell/about_dialog.h"
#include "ui/shell/placeholder_panel.h"
#include "ui/trace/profile_panel.h"
#include "ui/versions/kernel_workspace.h"

namespace nova::ui {
namespace {

class MainWindowTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::scratch_dir("main_window");
    setenv("NOVA_SETTINGS", (dir_ / "settings.json").c_str(), 1);
    setenv("NOVA_PROJECTS", (dir_ / "projects").c_str(), 1);
  }
  std::filesystem::path dir_;
};

TEST_F(MainWindowTest, ShowsEveryStageDockWithItsPlaceholder) {
  MainWindow w(Settings{});
  w.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&w));
  QStringList docks = w.dockNames();
  for (const char* name : {"Hot ops", "Kernel editor", "Timeline", "Jobs", "Results"})
    EXPECT_TRUE(docks.contains(name)) << name;
  ASSERT_NE(w.panel("graph"), nullptr);
  EXPECT_TRUE(w.panel("graph")->message().contains("Open a model to begin"));
  QPixmap shot = w.grab();
  EXPECT_FALSE(shot.isNull());
  EXPECT_TRUE(shot.save(
      QString::fromStdString((std::filesystem::path(NOVA_TEST_OUTPUT) / "main_window.png").string())));
}

TEST_F(MainWindowTest, OpeningAModelAddsItToRecentFilesAndPersists) {
  auto model = test::repo_examples_dir() / "conv2d_min_add_multiply.py";
  MainWindow w(Settings{});
  QSignalSpy opened(&w, &MainWindow::modelOpened);
  ASSERT_TRUE(w.openModel(QString::fromStdString(model.string())));
  EXPECT_EQ(opened.count(), 1);
  EXPECT_TRUE(w.windowTitle().startsWith("conv2d_min_add_multiply.py"));
  Settings reloaded = Settings::load();
  ASSERT_FALSE(reloaded.recent_models.empty());
  EXPECT_EQ(reloaded.recent_models.front(), std::filesystem::canonical(model).string());
}

TEST_F(MainWindowTest, IntakeInTheBackgroundShowsTheGraphAndStoresIt) {
  auto model = test::repo_examples_dir() / "conv2d_min_add_multiply.py";
  MainWindow w(Settings{});
  w.show();
  QSignalSpy settled(&w, &MainWindow::modelSettled);
  ASSERT_TRUE(w.openModel(QString::fromStdString(model.string())));
  // The window answers while the worker runs.
  EXPECT_TRUE(w.panel("graph")->message().contains("Capturing the graph"));
  ASSERT_TRUE(settled.wait(180000));
  ASSERT_TRUE(settled.first().at(1).toBool()) << w.panel("graph")->message().toStdString();
  ASSERT_NE(w.graph(), nullptr);
  std::vector<std::string> ops;
  for (const auto& n : w.graph()->nodes)
    if (n.op_class != OpClass::DataMovement) ops.push_back(n.op);
  EXPECT_EQ(ops, (std::vector<std::string>{"convolution", "minimum", "add", "mul"}));
  ASSERT_NE(w.project(), nullptr);
  auto stored = w.project()->model();
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ(nlohmann::json::parse(stored->graph_json).get<ModelGraph>().nodes.size(),
            w.graph()->nodes.size());

  // The builtin generator follows intake: its kernel lands in the project and the editor.
  QSignalSpy ready(&w, &MainWindow::candidatesReady);
  ASSERT_TRUE(ready.count() > 0 || ready.wait(60000));
  EXPECT_EQ(ready.first().at(0).toInt(), 1);
  ASSERT_NE(w.workspace(), nullptr);
  ASSERT_TRUE(w.workspace()->currentVersion().has_value());
  auto version = w.project()->version(*w.workspace()->currentVersion());
  EXPECT_EQ(version.origin.rule, "conv2d_direct");
  EXPECT_NE(version.source.find("nova_g0_conv2d_direct"), std::string::npos);
  auto log = w.project()->latest_build_log(version.id);
  ASSERT_TRUE(log.has_value());
  EXPECT_TRUE(log->ok) << log->log;

  // Validation needs a GPU: without one the studio says so and nothing is stored as a result.
  QSignalSpy settledEval(&w, &MainWindow::evaluationSettled);
  w.validateVersion(version.id);
  if (settledEval.count() == 0) ASSERT_TRUE(settledEval.wait(600000));
  QString message = settledEval.first().at(1).toString();
  if (message.contains("need a GPU"))  // no GPU here (CI): nothing may pretend to be a result
    EXPECT_TRUE(w.project()->results(version.id).empty());
  else  // a GPU workstation: the verdict is stored with the version
    EXPECT_FALSE(w.project()->results(version.id).empty()) << message.toStdString();

  QTest::qWait(300);
  EXPECT_TRUE(w.grab().save(
      QString::fromStdString((std::filesystem::path(NOVA_TEST_OUTPUT) / "main_window_seed.png").string())));
}

TEST_F(MainWindowTest, AModelOpenedAgainShowsItsStoredCandidateInTheEditor) {
  auto model = QString::fromStdString((test::repo_examples_dir() / "conv2d_min_add_multiply.py").string());
  auto open_and_wait = [&](MainWindow& w) -> std::optional<qint64> {
    QSignalSpy settled(&w, &MainWindow::modelSettled);
    QSignalSpy ready(&w, &MainWindow::candidatesReady);
    EXPECT_TRUE(w.openModel(model));
    EXPECT_TRUE(settled.count() > 0 || settled.wait(180000));
    EXPECT_TRUE(ready.count() > 0 || ready.wait(60000));
    return w.workspace() ? w.workspace()->currentVersion() : std::nullopt;
  };
  std::optional<qint64> first;
  {
    MainWindow w(Settings{});
    first = open_and_wait(w);
  }
  ASSERT_TRUE(first.has_value());
  // A later session: nothing is generated again, and the stored version is in the editor.
  MainWindow again(Settings{});
  auto second = open_and_wait(again);
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(*second, *first);
  EXPECT_EQ(again.project()->all_versions().size(), 1u);
}

TEST_F(MainWindowTest, ARecordedTraceFillsTheTimelineAndColoursTheGraph) {
  // Recorded on the H200 (tests/fixtures/traces): open the model, then its trace, as a user with
  // no GPU does with a trace from a server.
  MainWindow w(Settings{});
  w.show();
  QSignalSpy settled(&w, &MainWindow::modelSettled);
  ASSERT_TRUE(w.openModel(
      QString::fromStdString((test::repo_examples_dir() / "conv2d_min_add_multiply.py").string())));
  ASSERT_TRUE(settled.wait(180000));
  QSignalSpy profiled(&w, &MainWindow::profileSettled);
  ASSERT_TRUE(w.openTrace(QString::fromStdString(
      (test::fixtures_dir() / "traces" / "conv2d_min_add_multiply.novatrace").string())));
  ASSERT_EQ(profiled.count(), 1);
  EXPECT_TRUE(profiled.first().at(0).toBool());
  EXPECT_TRUE(profiled.first().at(1).toString().contains("100.0% of GPU time attributed"))
      << profiled.first().at(1).toString().toStdString();
  ASSERT_NE(w.profilePanel(), nullptr);
  EXPECT_TRUE(w.profilePanel()->isVisible());
  EXPECT_FALSE(w.openTrace("/nonexistent.novatrace"));
  QTest::qWait(300);
  EXPECT_TRUE(w.grab().save(QString::fromStdString(
      (std::filesystem::path(NOVA_TEST_OUTPUT) / "main_window_profile.png").string())));
}

TEST_F(MainWindowTest, AFailedIntakeShowsTheUsersTracebackAndTheStudioGoesOn) {
  auto model = test::shared_examples_dir() / "broken" / "get_inputs_raises.py";
  MainWindow w(Settings{});
  QSignalSpy settled(&w, &MainWindow::modelSettled);
  ASSERT_TRUE(w.openModel(QString::fromStdString(model.string())));
  ASSERT_TRUE(settled.wait(180000));
  EXPECT_FALSE(settled.first().at(1).toBool());
  EXPECT_EQ(w.graph(), nullptr);
  EXPECT_TRUE(w.panel("graph")->message().contains("dataset shard not found"))
      << w.panel("graph")->message().toStdString();
}

TEST_F(MainWindowTest, RefusesMissingAndNonPythonFilesWithAMessage) {
  MainWindow w(Settings{});
  QSignalSpy opened(&w, &MainWindow::modelOpened);
  EXPECT_FALSE(w.openModel("/nonexistent/model.py"));
  auto txt = dir_ / "notes.txt";
  QFile f(QString::fromStdString(txt.string()));
  ASSERT_TRUE(f.open(QIODevice::WriteOnly));
  f.write("x");
  f.close();
  EXPECT_FALSE(w.openModel(QString::fromStdString(txt.string())));
  EXPECT_EQ(opened.count(), 0);
  EXPECT_TRUE(w.currentModel().isEmpty());
}

TEST_F(MainWindowTest, AboutBoxShowsTheDoctorReport) {
  MainWindow w(Settings{});
  AboutDialog about(QString::fromStdString(Settings{}.resolved_python()), "/usr/local/cuda");
  QSignalSpy ready(&about, &AboutDialog::reportReady);
  ASSERT_TRUE(ready.wait(120000));
  QString text = about.reportText();
  EXPECT_TRUE(text.contains("NVRTC")) << text.toStdString();
  EXPECT_TRUE(text.contains("CUPTI")) << text.toStdString();
  EXPECT_TRUE(text.contains("Python")) << text.toStdString();
}

}  // namespace
}  // namespace nova::ui

int main(int argc, char** argv) {
  // Test discovery runs this binary too: always offscreen, never a real display.
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  Q_INIT_RESOURCE(nova);  // resources/nova.qrc lives in the static nova_ui library
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
