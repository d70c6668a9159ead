// The studio shell on the offscreen platform: docks, placeholder messages, opening models,
// recent files, settings round-trip, regenerating what an older builtin generator wrote, and a
// screenshot to look at.
#include "ui/shell/main_window.h"

#include <optional>

#include <QApplication>
#include <QDockWidget>
#include <QFile>
#include <QMenuBar>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTest>

#include <sqlite3.h>

#include <gtest/gtest.h>

#include "core/gen/builtin_generator.h"
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
  // Opens the seed model and waits for intake and the builtin candidates: the version in the editor.
  static std::optional<qint64> openSeedAndWait(MainWindow& w) {
    auto model = QString::fromStdString((test::repo_examples_dir() / "conv2d_min_add_multiply.py").string());
    QSignalSpy settled(&w, &MainWindow::modelSettled);
    QSignalSpy ready(&w, &MainWindow::candidatesReady);
    EXPECT_TRUE(w.openModel(model));
    EXPECT_TRUE(settled.count() > 0 || settled.wait(180000));
    EXPECT_TRUE(ready.count() > 0 || ready.wait(60000));
    return w.workspace() ? w.workspace()->currentVersion() : std::nullopt;
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
  std::optional<qint64> first;
  {
    MainWindow w(Settings{});
    first = openSeedAndWait(w);
  }
  ASSERT_TRUE(first.has_value());
  // A later session: nothing is generated again, and the stored version is in the editor.
  MainWindow again(Settings{});
  auto second = openSeedAndWait(again);
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(*second, *first);
  EXPECT_EQ(again.project()->all_versions().size(), 1u);
}

TEST_F(MainWindowTest, AProjectAnOlderGeneratorWroteGetsNewVersionsOnReopenAndKeepsTheOldOnes) {
  std::optional<qint64> first;
  std::filesystem::path folder;
  {
    MainWindow w(Settings{});
    first = openSeedAndWait(w);
    ASSERT_NE(w.project(), nullptr);
    folder = w.project()->folder();
  }
  ASSERT_TRUE(first.has_value());
  // The project as builtin generator revision 2 left it (another kernel), with a user's edit of it.
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open((folder / ProjectStore::kFileName).c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db,
                           "UPDATE candidate_versions SET source = '// revision 2' || char(10) || source, "
                           "generator_revision = 2; UPDATE fusion_groups SET generator_revision = 2;",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(db);
  }
  qint64 edit = ProjectStore::open(folder).add_user_edit(*first, "// the user's edit\n");

  // Reopened: the groups revision 2 wrote are generated again and added as new versions.
  MainWindow again(Settings{});
  auto current = openSeedAndWait(again);
  ASSERT_TRUE(current.has_value());
  ProjectStore& project = *again.project();
  ASSERT_EQ(project.fusion_groups().size(), 1u);
  auto versions = project.versions(project.fusion_groups()[0].id);
  ASSERT_EQ(versions.size(), 3u);
  EXPECT_EQ(versions[0].id, *first);  // kept, as revision 2 wrote it
  EXPECT_EQ(versions[0].source.rfind("// revision 2", 0), 0u);
  EXPECT_EQ(versions[1].id, edit);  // the user's edit is kept
  const CandidateVersion& fresh = versions[2];
  EXPECT_EQ(fresh.origin.kind, OriginKind::builtin);
  EXPECT_EQ(fresh.parent_id, *first);
  EXPECT_EQ(fresh.generator_revision, kBuiltinGeneratorRevision);
  EXPECT_FALSE(fresh.plan_json.empty());
  EXPECT_NE(fresh.source.find("nova_g0_conv2d_direct"), std::string::npos);
  EXPECT_EQ(*current, fresh.id);  // the new kernel is in the editor
  QString message = again.statusBar()->currentMessage();
  EXPECT_TRUE(message.contains(QString("revision 2 → %1").arg(kBuiltinGeneratorRevision)))
      << message.toStdString();
  EXPECT_TRUE(message.contains("added 1 new version; earlier versions are kept")) << message.toStdString();

  // Everything is current now: a third session generates nothing.
  MainWindow third(Settings{});
  auto latest = openSeedAndWait(third);
  ASSERT_TRUE(latest.has_value());
  EXPECT_EQ(*latest, fresh.id);
  EXPECT_EQ(third.project()->all_versions().size(), 3u);
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
