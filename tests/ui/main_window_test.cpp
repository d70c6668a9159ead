// The studio shell on the offscreen platform over sessions with a scripted worker (no Python, no
// GPU; the worker's answers are recorded on the H200): docks and placeholders, opening models,
// recent files, the workflow as the session's jobs in the Jobs panel (intake, generation,
// Validate & benchmark stored by the session and read back by the results panel), a second model
// superseding the first one's intake, regenerating what an older builtin generator wrote, and
// screenshots to look at.
#include "ui/shell/main_window.h"

#include <atomic>
#include <fstream>
#include <optional>

#include <QApplication>
#include <QDockWidget>
#include <QFile>
#include <QFileInfo>
#include <QAction>
#include <QPushButton>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTest>

#include <sqlite3.h>

#include <gtest/gtest.h>

#include "core/gen/builtin_generator.h"
#include "core/graph/model_graph.h"
#include "core/jobs/worker_run_error.h"
#include "core/project/project_location.h"
#include "core/session/project_evidence.h"
#include "core/session/stored_generation.h"
#include "scripted_sessions.h"
#include "support/test_paths.h"
#include "ui/jobs/job_list_model.h"
#include "ui/jobs/jobs_panel.h"
#include "ui/results/results_panel.h"
#include "ui/results/roofline_chart.h"
#include "ui/screenshot.h"
#include "ui/shell/about_dialog.h"
#include "ui/shell/placeholder_panel.h"
#include "ui/shell/studio_session.h"
#include "ui/shell/warnings_panel.h"
#include "ui/trace/hot_op_table_model.h"
#include "ui/trace/hot_op_view.h"
#include "ui/graph/model_graph_widget.h"
#include "core/trace/trace_identity_check.h"
#include "ui/trace/profile_panel.h"
#include "ui/versions/kernel_workspace.h"
#include "ui/versions/version_tree_model.h"
#include "ui/versions/version_tree_view.h"

namespace nova::ui {
namespace {
using nlohmann::json;
using test::ScriptedSessions;
using namespace std::chrono_literals;

QString example(const char* name) { return QString::fromStdString((test::repo_examples_dir() / name).string()); }
QString seedModel() { return example("conv2d_min_add_multiply.py"); }
QString sharedExample(const char* name) {
  return QString::fromStdString((test::shared_examples_dir() / name).string());
}

// The worker as it answers on a GPU machine: intake from the recorded graph, an evaluation that
// passed with the recorded benchmark.
json recordedWorker(const std::string& model, const std::string& cmd, const json&, const WorkerCall&) {
  if (cmd == "intake") return ScriptedSessions::recordedIntake(model);
  if (cmd == "evaluate")
    return {{"validation", ScriptedSessions::recordedValidation(true)},
            {"benchmark", ScriptedSessions::recordedBenchmark()}};
  throw WorkerRunError(WorkerRunError::Kind::BadRequest, "the test's worker does not know " + cmd);
}

// The final state of each job of the Jobs panel, by title.
std::map<std::string, JobState> jobStates(MainWindow& w) {
  std::map<std::string, JobState> states;
  JobListModel* m = w.jobsPanel()->model();
  for (int row = 0; row < m->rowCount(); ++row) states[m->job(row)->title] = m->job(row)->state;
  return states;
}

class MainWindowTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::scratch_dir("main_window");
    setenv("NOVA_SETTINGS", (dir_ / "settings.json").c_str(), 1);
    setenv("NOVA_PROJECTS", (dir_ / "projects").c_str(), 1);
  }
  // Opens a model and waits for its graph and the builtin candidates: the version in the editor.
  static std::optional<qint64> openAndWait(MainWindow& w, const QString& model = seedModel()) {
    QSignalSpy settled(&w, &MainWindow::modelSettled);
    QSignalSpy ready(&w, &MainWindow::candidatesReady);
    EXPECT_TRUE(w.openModel(model));
    EXPECT_TRUE(settled.count() > 0 || settled.wait(30000));
    EXPECT_TRUE(ready.count() > 0 || ready.wait(60000));
    return w.workspace() ? w.workspace()->currentVersion() : std::nullopt;
  }
  std::filesystem::path dir_;
  ScriptedSessions sessions_{recordedWorker};
};

TEST_F(MainWindowTest, ShowsEveryStageDockWithItsPlaceholder) {
  MainWindow w(Settings{}, sessions_.backend());
  w.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&w));
  QStringList docks = w.dockNames();
  EXPECT_EQ(docks, (QStringList{"Hot ops", "Kernel editor", "Timeline", "Jobs", "Results", "Warnings", "LLM"}));
  ASSERT_NE(w.panel("graph"), nullptr);
  EXPECT_TRUE(w.panel("graph")->message().contains("Open a model to begin"));
  EXPECT_TRUE(w.panel("hotops")->message().contains("Profile the model"));
  EXPECT_TRUE(test::save_screenshot(w, "main_window"));
}

TEST_F(MainWindowTest, OpeningAModelAddsItToRecentFilesAndPersists) {
  MainWindow w(Settings{}, sessions_.backend());
  QSignalSpy opened(&w, &MainWindow::modelOpened);
  ASSERT_TRUE(w.openModel(seedModel()));
  EXPECT_EQ(opened.count(), 1);
  EXPECT_TRUE(w.windowTitle().startsWith("conv2d_min_add_multiply.py"));
  Settings reloaded = Settings::load();
  ASSERT_FALSE(reloaded.recent_models.empty());
  EXPECT_EQ(reloaded.recent_models.front(), std::filesystem::canonical(seedModel().toStdString()).string());
}

TEST_F(MainWindowTest, IntakeAndGenerationRunAsSessionJobsAndTheViewsShowWhatTheyStored) {
  MainWindow w(Settings{}, sessions_.backend());
  w.show();
  QSignalSpy settled(&w, &MainWindow::modelSettled);
  QSignalSpy ready(&w, &MainWindow::candidatesReady);
  ASSERT_TRUE(w.openModel(seedModel()));
  // The window answers while the intake job runs.
  EXPECT_TRUE(w.panel("graph")->message().contains("Capturing the graph of conv2d_min_add_multiply.py"))
      << w.panel("graph")->message().toStdString();
  ASSERT_TRUE(settled.wait(30000));
  ASSERT_TRUE(settled.first().at(1).toBool()) << w.panel("graph")->message().toStdString();
  ASSERT_NE(w.graph(), nullptr);
  std::vector<std::string> ops;
  for (const auto& n : w.graph()->nodes)
    if (n.op_class != OpClass::DataMovement) ops.push_back(n.op);
  EXPECT_EQ(ops, (std::vector<std::string>{"convolution", "minimum", "add", "mul"}));
  // The session's job stored the graph with the model's text.
  ASSERT_NE(w.project(), nullptr);
  auto stored = w.project()->model();
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ(json::parse(stored->graph_json).get<ModelGraph>().nodes.size(), w.graph()->nodes.size());
  EXPECT_TRUE(w.studio()->session()->model_unchanged());

  // The builtin generator follows as the next job: its kernel is in the project and the editor.
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
  EXPECT_TRUE(w.statusBar()->currentMessage().startsWith("Builtin generator: 1 candidates, 1 compiled"))
      << w.statusBar()->currentMessage().toStdString();

  // Both ran as jobs of the session's queue, listed in the Jobs panel; one intake reached the worker.
  QTest::qWait(100);
  auto states = jobStates(w);
  EXPECT_EQ(states["intake conv2d_min_add_multiply.py"], JobState::Succeeded);
  EXPECT_EQ(states["builtin generator"], JobState::Succeeded);
  EXPECT_EQ(w.jobsPanel()->queue(), &w.studio()->session()->jobs());
  EXPECT_EQ(sessions_.count("intake"), 1);
  // The results panel follows the version in the editor: it has no result yet.
  EXPECT_EQ(w.resultsPanel()->shownVersion(), version.id);
  EXPECT_TRUE(w.resultsPanel()->verdictText().contains("has no result yet")) << w.resultsPanel()->verdictText().toStdString();
  QTest::qWait(300);
  EXPECT_TRUE(test::save_screenshot(w, "main_window_seed"));
}

TEST_F(MainWindowTest, ValidateAndBenchmarkIsStoredByTheSessionAndTheResultsPanelShowsIt) {
  MainWindow w(Settings{}, sessions_.backend());
  w.show();
  auto version = openAndWait(w);
  ASSERT_TRUE(version.has_value());
  QSignalSpy settled(&w, &MainWindow::evaluationSettled);
  // As the version tree's button asks for it.
  w.workspace()->versionTree()->selectVersions({*version});
  w.workspace()->versionTree()->validateSelected();
  ASSERT_TRUE(settled.wait(60000));
  EXPECT_EQ(settled.first().at(0).toLongLong(), *version);
  EXPECT_EQ(sessions_.count("evaluate"), 1);

  // Stored by the session's job, not by a widget: the version's results are in the project.
  auto validation = ProjectEvidence::latest_validation(*w.project(), *version);
  auto benchmark = ProjectEvidence::latest_benchmark(*w.project(), *version);
  ASSERT_TRUE(validation && benchmark);
  EXPECT_TRUE(validation->passed);
  EXPECT_EQ(w.project()->version(*version).correct, true);
  EXPECT_EQ(settled.first().at(1).toString(),
            QString("Version %1: %2; %3")
                .arg(*version)
                .arg(QString::fromStdString(validation->verdict), QString::fromStdString(benchmark->verdict.sentence)));
  // The results panel reads them back.
  EXPECT_EQ(w.resultsPanel()->shownVersion(), *version);
  EXPECT_TRUE(w.resultsPanel()->verdictText().endsWith(QString::fromStdString(validation->verdict)))
      << w.resultsPanel()->verdictText().toStdString();
  EXPECT_EQ(w.resultsPanel()->benchmarkVerdictText(),
            "Benchmark: " + QString::fromStdString(benchmark->verdict.sentence));
  EXPECT_FALSE(w.resultsPanel()->speedupText().isEmpty());
  // The roofline beside the chart: the version and both baselines; this recording timed no copy, so
  // the memory roof is said to be not measured rather than drawn.
  EXPECT_EQ(w.resultsPanel()->roofline()->dotCount(), 3);
  EXPECT_TRUE(w.resultsPanel()->roofline()->title().contains("memory roof not measured"))
      << w.resultsPanel()->roofline()->title().toStdString();
  // The version tree shows the stored verdict too.
  VersionTreeModel* tree = w.workspace()->versionTree()->model();
  QModelIndex row = tree->indexOfVersion(*version);
  EXPECT_EQ(tree->data(row.siblingAtColumn(VersionTreeModel::CorrectColumn)).toString(), "correct");
  // The build and the GPU job both ran in the Jobs panel.
  QTest::qWait(100);
  auto states = jobStates(w);
  EXPECT_EQ(states[QString("validate + bench v%1").arg(*version).toStdString()], JobState::Succeeded);
  QTest::qWait(200);
  EXPECT_TRUE(test::save_screenshot(w, "main_window_results"));
}

TEST_F(MainWindowTest, WithoutAGpuValidationAndProfilingSaySoAndRunNothing) {
  ScriptedSessions noGpu(recordedWorker, "libcuda.so.1 not found");
  MainWindow w(Settings{}, noGpu.backend());
  auto version = openAndWait(w);
  ASSERT_TRUE(version.has_value());
  QSignalSpy settled(&w, &MainWindow::evaluationSettled);
  w.validateVersion(*version);
  ASSERT_EQ(settled.count(), 1);
  EXPECT_TRUE(settled.first().at(1).toString().startsWith("Validation and benchmarks need a GPU (libcuda.so.1 not found)"))
      << settled.first().at(1).toString().toStdString();
  EXPECT_TRUE(w.project()->results(*version).empty());
  QSignalSpy profiled(&w, &MainWindow::profileSettled);
  w.profileModel();
  ASSERT_EQ(profiled.count(), 1);
  EXPECT_FALSE(profiled.first().at(0).toBool());
  EXPECT_TRUE(profiled.first().at(1).toString().startsWith("Profiling needs a GPU (libcuda.so.1 not found)"));
  QTest::qWait(100);
  EXPECT_EQ(noGpu.count("evaluate"), 0);
  EXPECT_EQ(w.studio()->session()->jobs().snapshot().size(), 2u);  // intake and generation only
  // The controls say so before they are used: off, with the reason as their tooltip.
  EXPECT_FALSE(w.profileAction()->isEnabled());
  EXPECT_TRUE(w.profileAction()->toolTip().contains("libcuda.so.1 not found"));
  EXPECT_FALSE(w.workspace()->versionTree()->validateButton()->isEnabled());
  EXPECT_TRUE(w.workspace()->versionTree()->validateButton()->toolTip().contains("libcuda.so.1 not found"));
}

TEST_F(MainWindowTest, WithAGpuProfileAndValidateAreOffered) {
  MainWindow w(Settings{}, sessions_.backend());
  EXPECT_FALSE(w.profileAction()->isEnabled());  // no model yet
  ASSERT_TRUE(openAndWait(w).has_value());
  EXPECT_TRUE(w.profileAction()->isEnabled());
  w.workspace()->versionTree()->selectVersions({*w.workspace()->currentVersion()});
  EXPECT_TRUE(w.workspace()->versionTree()->validateButton()->isEnabled());
}

TEST_F(MainWindowTest, OpeningASecondModelWhileTheFirstIntakeRunsSupersedesIt) {
  std::atomic<bool> firstStarted{false}, firstCancelled{false};
  ScriptedSessions sessions([&](const std::string& model, const std::string& cmd, const json& args,
                                const WorkerCall& call) -> json {
    if (model == "matmul_scaling_residual_add.py" && cmd == "intake") {  // minutes on a real worker
      firstStarted = true;
      try {
        return ScriptedSessions::waitForCancel(call, 60s);
      } catch (...) {
        firstCancelled = call.cancel.cancelled();
        throw;
      }
    }
    return recordedWorker(model, cmd, args, call);
  });
  MainWindow w(Settings{}, sessions.backend());
  w.show();
  QSignalSpy settled(&w, &MainWindow::modelSettled);
  QSignalSpy retired(w.studio(), &StudioSession::retired);
  const QString first = example("matmul_scaling_residual_add.py");
  ASSERT_TRUE(w.openModel(first));
  ASSERT_TRUE(QTest::qWaitFor([&] { return firstStarted.load(); }, 30000));
  QTest::qWait(100);
  EXPECT_EQ(jobStates(w)["intake matmul_scaling_residual_add.py"], JobState::Running);

  auto version = openAndWait(w, seedModel());
  ASSERT_TRUE(version.has_value());
  // The first intake's worker was ended, and its job ended cancelled.
  ASSERT_TRUE(retired.count() > 0 || retired.wait(30000));
  EXPECT_TRUE(firstCancelled);
  EXPECT_EQ(retired.first().at(0).toString(), QFileInfo(first).absoluteFilePath());
  auto ended = retired.first().at(1).value<QList<JobInfo>>();
  ASSERT_EQ(ended.size(), 1);
  EXPECT_EQ(ended.front().title, "intake matmul_scaling_residual_add.py");
  EXPECT_TRUE(ended.front().state == JobState::Cancelled || ended.front().state == JobState::Superseded)
      << to_string(ended.front().state);
  // Only the second model's result is shown; the first's never reached a view or the project.
  ASSERT_EQ(settled.count(), 1);
  EXPECT_EQ(settled.first().at(0).toString(), w.currentModel());
  EXPECT_TRUE(w.currentModel().endsWith("/conv2d_min_add_multiply.py"));
  EXPECT_EQ(w.graph()->groups.size(), 1u);
  EXPECT_EQ(w.graph()->model_path, w.currentModel().toStdString());
  auto firstProject = ProjectStore::open(project_folder_for(first.toStdString()));
  EXPECT_FALSE(firstProject.model().has_value() && !firstProject.model()->graph_json.empty());
  // The Jobs panel follows the open session's queue.
  auto states = jobStates(w);
  EXPECT_EQ(states.count("intake matmul_scaling_residual_add.py"), 0u);
  EXPECT_EQ(states["intake conv2d_min_add_multiply.py"], JobState::Succeeded);
}

TEST_F(MainWindowTest, ANewerValidationOfAVersionSupersedesTheOlderAndOnlyItsResultIsShown) {
  std::atomic<int> evaluations{0};
  ScriptedSessions sessions([&](const std::string& model, const std::string& cmd, const json& args,
                                const WorkerCall& call) -> json {
    if (cmd == "evaluate" && evaluations++ == 0) return ScriptedSessions::waitForCancel(call, 60s);
    return recordedWorker(model, cmd, args, call);
  });
  MainWindow w(Settings{}, sessions.backend());
  auto version = openAndWait(w);
  ASSERT_TRUE(version.has_value());
  QSignalSpy settled(&w, &MainWindow::evaluationSettled);
  w.validateVersion(*version);
  ASSERT_TRUE(QTest::qWaitFor([&] { return evaluations.load() == 1; }, 30000));
  w.validateVersion(*version);
  ASSERT_TRUE(settled.wait(60000));
  QTest::qWait(300);  // the superseded job's end has arrived by now, and is not shown
  ASSERT_EQ(settled.count(), 1);
  EXPECT_TRUE(settled.first().at(1).toString().contains("passed")) << settled.first().at(1).toString().toStdString();
  EXPECT_EQ(w.project()->results(*version).size(), 2u);  // one validation, one benchmark: the newer run's
  // The older request's GPU job was superseded. (Its build job too when it had not yet finished when the
  // newer request came: that depends on timing, so only GPU jobs are counted.)
  int superseded = 0;
  for (const auto& info : w.studio()->session()->jobs().snapshot())
    superseded += info.state == JobState::Superseded && info.lane != JobLane::Cpu;
  EXPECT_EQ(superseded, 1);
}

TEST_F(MainWindowTest, AModelOpenedAgainShowsItsStoredCandidateAtOnceAndSkipsIntake) {
  std::optional<qint64> first;
  {
    MainWindow w(Settings{}, sessions_.backend());
    first = openAndWait(w);
  }
  ASSERT_TRUE(first.has_value());
  // A later session: the stored graph and version are shown as the model opens, before any job ran.
  MainWindow again(Settings{}, sessions_.backend());
  QSignalSpy settled(&again, &MainWindow::modelSettled);
  QSignalSpy ready(&again, &MainWindow::candidatesReady);
  ASSERT_TRUE(again.openModel(seedModel()));
  EXPECT_EQ(settled.count(), 1);  // the stored graph was captured from the model's current text
  ASSERT_NE(again.graph(), nullptr);
  ASSERT_NE(again.workspace(), nullptr);
  EXPECT_EQ(again.workspace()->currentVersion(), first);
  // The generate job finds nothing missing or outdated.
  ASSERT_TRUE(ready.wait(60000));
  EXPECT_EQ(again.workspace()->currentVersion(), first);
  EXPECT_EQ(again.project()->all_versions().size(), 1u);
  EXPECT_EQ(sessions_.count("intake"), 1);  // no second intake
  QTest::qWait(100);
  auto states = jobStates(again);
  EXPECT_EQ(states.size(), 1u);
  EXPECT_EQ(states["builtin generator"], JobState::Succeeded);
}

TEST_F(MainWindowTest, AProjectAnOlderGeneratorWroteGetsNewVersionsOnReopenAndKeepsTheOldOnes) {
  std::optional<qint64> first;
  std::filesystem::path folder;
  {
    MainWindow w(Settings{}, sessions_.backend());
    first = openAndWait(w);
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
  MainWindow again(Settings{}, sessions_.backend());
  auto current = openAndWait(again);
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
  EXPECT_TRUE(message.contains(QString("revision 2 → %1").arg(kBuiltinGeneratorRevision))) << message.toStdString();
  EXPECT_TRUE(message.contains("added 1 new version; earlier versions are kept")) << message.toStdString();

  // Everything is current now: a third session generates nothing.
  MainWindow third(Settings{}, sessions_.backend());
  auto latest = openAndWait(third);
  ASSERT_TRUE(latest.has_value());
  EXPECT_EQ(*latest, fresh.id);
  EXPECT_EQ(third.project()->all_versions().size(), 3u);
}

TEST_F(MainWindowTest, ARecordedTraceFillsTheTimelineAndColoursTheGraph) {
  // Recorded on the H200 (tests/fixtures/traces): open the model, then its trace, as a user with
  // no GPU does with a trace from a server.
  MainWindow w(Settings{}, sessions_.backend());
  w.show();
  ASSERT_TRUE(openAndWait(w).has_value());
  QSignalSpy profiled(&w, &MainWindow::profileSettled);
  ASSERT_TRUE(w.openTrace(
      QString::fromStdString((test::fixtures_dir() / "traces" / "conv2d_min_add_multiply.novatrace").string())));
  ASSERT_EQ(profiled.count(), 1);
  EXPECT_TRUE(profiled.first().at(0).toBool());
  EXPECT_TRUE(profiled.first().at(1).toString().contains("100.0% of GPU time attributed"))
      << profiled.first().at(1).toString().toStdString();
  ASSERT_NE(w.profilePanel(), nullptr);
  EXPECT_TRUE(w.profilePanel()->isVisible());
  EXPECT_FALSE(w.profilePanel()->nodeShares().empty());
  EXPECT_FALSE(w.openTrace("/nonexistent.novatrace"));
  EXPECT_TRUE(profiled.last().at(1).toString().startsWith("Cannot open the trace"));
  QTest::qWait(300);
  EXPECT_TRUE(test::save_screenshot(w, "main_window_profile"));
}

TEST_F(MainWindowTest, OpeningAnotherModelClearsTheProfileTheHeatAndTheNodePanel) {
  MainWindow w(Settings{}, sessions_.backend());
  w.resize(1920, 1080);
  w.show();
  ASSERT_TRUE(openAndWait(w).has_value());
  ASSERT_TRUE(w.openTrace(
      QString::fromStdString((test::fixtures_dir() / "traces" / "conv2d_min_add_multiply.novatrace").string())));
  auto* hotDock = w.findChild<QDockWidget*>("dock_hotops");
  auto* timelineDock = w.findChild<QDockWidget*>("dock_timeline");
  ASSERT_TRUE(hotDock && timelineDock);
  EXPECT_EQ(hotDock->widget(), w.profilePanel()->hotOps());  // the table itself, not a pointer to it
  EXPECT_GE(w.profilePanel()->hotOps()->tableModel()->rowCount(), 3);
  w.graphWidget()->details()->showNode(*w.graph(), 0);
  ASSERT_FALSE(w.graphWidget()->details()->text().isEmpty());
  QTest::qWait(300);
  EXPECT_TRUE(test::save_screenshot(w, "main_window_profile_1920"));

  ASSERT_TRUE(openAndWait(w, sharedExample("mlp_block.py")).has_value());
  EXPECT_TRUE(w.profilePanel()->isEmpty());
  EXPECT_EQ(w.profilePanel()->hotOps()->tableModel()->rowCount(), 0);
  EXPECT_EQ(hotDock->widget(), w.panel("hotops"));
  EXPECT_EQ(timelineDock->widget(), w.panel("timeline"));
  EXPECT_TRUE(w.panel("hotops")->message().contains("Profile the model"));
  EXPECT_TRUE(w.graphWidget()->details()->text().isEmpty() ||
              !w.graphWidget()->details()->text().contains("convolution"))
      << w.graphWidget()->details()->text().toStdString();
  QTest::qWait(300);
  EXPECT_TRUE(test::save_screenshot(w, "main_window_second_model_1920"));
}

TEST_F(MainWindowTest, ATraceOfAnotherModelIsRefusedNamingBoth) {
  MainWindow w(Settings{}, sessions_.backend());
  ASSERT_TRUE(openAndWait(w, sharedExample("mlp_block.py")).has_value());
  QSignalSpy profiled(&w, &MainWindow::profileSettled);
  // An old trace (no identity) whose kernels carry node ids this graph does not have.
  const auto transformer = test::fixtures_dir() / "traces" / "tiny_transformer_block.novatrace";
  EXPECT_FALSE(w.openTrace(QString::fromStdString(transformer.string())));
  ASSERT_EQ(profiled.count(), 1);
  QString message = profiled.first().at(1).toString();
  EXPECT_TRUE(message.contains("tiny_transformer_block.novatrace") && message.contains("mlp_block.py"))
      << message.toStdString();
  EXPECT_FALSE(message.contains("attributed")) << message.toStdString();
  EXPECT_TRUE(w.profilePanel()->isEmpty());
  EXPECT_EQ(w.panel("timeline")->message(), message);  // it stays where the timeline would be
  // A trace stamped with its model and graph names both.
  const auto stamped = dir_ / "transformer.novatrace";
  std::filesystem::copy_file(transformer, stamped);
  std::ifstream in(test::fixtures_dir() / "graphs" / "tiny_transformer_block.json");
  TraceIdentityCheck::stamp(stamped, TraceIdentityCheck::of(test::shared_examples_dir() / "tiny_transformer_block.py",
                                                            json::parse(in).get<ModelGraph>()));
  EXPECT_FALSE(w.openTrace(QString::fromStdString(stamped.string())));
  message = profiled.last().at(1).toString();
  EXPECT_TRUE(message.contains("recorded from tiny_transformer_block.py") && message.contains("not from mlp_block.py"))
      << message.toStdString();
  // Its own model's trace, recorded before traces carried an identity, is shown with a note.
  ASSERT_TRUE(w.openTrace(QString::fromStdString((test::fixtures_dir() / "traces" / "mlp_block.novatrace").string())));
  EXPECT_TRUE(profiled.last().at(1).toString().contains("does not say which model"));
  EXPECT_TRUE(w.profilePanel()->hotOps()->note().contains("headroom:"));
}

TEST_F(MainWindowTest, IntakeWarningsStayInTheWarningsDock) {
  const std::string warning = "value-dependent control flow at model.py:21 (if x.sum() > 0): the graph follows one branch";
  ScriptedSessions warned([&](const std::string& model, const std::string& cmd, const json& args,
                              const WorkerCall& call) -> json {
    json answer = recordedWorker(model, cmd, args, call);
    if (cmd == "intake") answer["warnings"] = json::array({warning});
    return answer;
  });
  MainWindow w(Settings{}, warned.backend());
  ASSERT_TRUE(openAndWait(w).has_value());
  EXPECT_EQ(w.warningsPanel()->warnings(), QStringList{QString::fromStdString(warning)});
  EXPECT_EQ(w.findChild<QDockWidget*>("dock_warnings")->windowTitle(), "Warnings (1)");
  w.statusBar()->showMessage("a later message");
  EXPECT_EQ(w.warningsPanel()->warnings().size(), 1);  // unlike the status bar, the list stays
  // They go with every version into the project.
  const auto versions = w.project()->all_versions();
  ASSERT_FALSE(versions.empty());
  for (const auto& v : versions) EXPECT_EQ(v.intake_warnings, std::vector<std::string>{warning}) << v.id;
}

TEST_F(MainWindowTest, SendToGeneratorOpensTheGroupsPrimaryNotItsAlternative) {
  MainWindow w(Settings{}, sessions_.backend());
  ASSERT_TRUE(openAndWait(w, sharedExample("mlp_block.py")).has_value());
  int checked = 0;
  for (const StoredGroup& g : stored_groups(*w.project()))
    for (const auto& v : w.project()->versions(g.record_id)) {
      if (v.origin.rule != "gemm_tf32x3" || !v.parent_id) continue;
      w.sendToGenerator({g.group.id}, true);
      EXPECT_EQ(w.workspace()->currentVersion(), *v.parent_id) << "group " << g.group.id;
      EXPECT_NE(w.project()->version(*w.workspace()->currentVersion()).origin.rule, "gemm_tf32x3");
      ++checked;
    }
  EXPECT_GT(checked, 0);  // mlp_block's linear groups have the tensor-core alternative
}

TEST_F(MainWindowTest, AFailedIntakeShowsTheUsersTracebackAndTheStudioGoesOn) {
  ScriptedSessions failing([](const std::string& model, const std::string& cmd, const json& args,
                              const WorkerCall& call) -> json {
    if (model != "get_inputs_raises.py" || cmd != "intake") return recordedWorker(model, cmd, args, call);
    call.log("Traceback (most recent call last):");
    call.log("  File \"get_inputs_raises.py\", line 21, in get_inputs");
    throw WorkerRunError(WorkerRunError::Kind::UserError,
                         "worker failed while capturing get_inputs_raises.py: FileNotFoundError: dataset shard not found");
  });
  auto model = dir_ / "get_inputs_raises.py";
  std::filesystem::copy_file(test::repo_examples_dir() / "conv2d_min_add_multiply.py", model);
  MainWindow w(Settings{}, failing.backend());
  QSignalSpy settled(&w, &MainWindow::modelSettled);
  ASSERT_TRUE(w.openModel(QString::fromStdString(model.string())));
  ASSERT_TRUE(settled.wait(30000));
  EXPECT_FALSE(settled.first().at(1).toBool());
  EXPECT_EQ(w.graph(), nullptr);
  QString message = w.panel("graph")->message();
  EXPECT_TRUE(message.contains("dataset shard not found")) << message.toStdString();
  EXPECT_TRUE(message.contains("line 21, in get_inputs")) << message.toStdString();
  // The studio goes on: the next model opens.
  ASSERT_TRUE(openAndWait(w).has_value());
}

TEST_F(MainWindowTest, RefusesMissingAndNonPythonFilesWithAMessage) {
  MainWindow w(Settings{}, sessions_.backend());
  QSignalSpy opened(&w, &MainWindow::modelOpened);
  EXPECT_FALSE(w.openModel("/nonexistent/model.py"));
  auto txt = dir_ / "notes.txt";
  QFile f(QString::fromStdString(txt.string()));
  ASSERT_TRUE(f.open(QIODevice::WriteOnly));
  f.write("x");
  f.close();
  EXPECT_FALSE(w.openModel(QString::fromStdString(txt.string())));
  EXPECT_TRUE(w.statusBar()->currentMessage().contains("is not a Python file"));
  EXPECT_EQ(opened.count(), 0);
  EXPECT_TRUE(w.currentModel().isEmpty());
  EXPECT_EQ(w.studio()->session(), nullptr);
}

TEST_F(MainWindowTest, AboutBoxShowsTheDoctorReport) {
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
