// The studio's Report action and dialog (ui/report) on the offscreen platform, over a project made
// through the studio from recorded H200 results (intake and evaluate answered from recordings; the
// report itself rendered by a real worker): File > "Report…" is disabled with the reason until a model
// is open, a project with nothing validated is refused with the reason and nothing written, the dialog
// shows the equivalent `nova report` line, and the report runs as a job that writes HTML, PDF and JSON
// and previews the HTML. Screenshots go to /tmp/nova_report_dialog/.
#include <atomic>
#include <fstream>

#include <QDir>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QPushButton>
#include <QSignalSpy>
#include <QTest>
#include <QTextBrowser>

#include <gtest/gtest.h>

#include "core/env/resource_paths.h"
#include "core/jobs/child_process_worker_runner.h"
#include "core/jobs/worker_run_error.h"
#include "scripted_sessions.h"
#include "support/test_paths.h"
#include "ui/report/report_action.h"
#include "ui/report/report_dialog.h"
#include "ui/shell/main_window.h"

namespace nova::ui {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;
using test::ScriptedSessions;

json readJson(const fs::path& p) {
  std::ifstream in(p);
  if (!in) throw std::runtime_error("missing fixture " + p.string());
  return json::parse(in);
}

QString screenshotDir() { return QDir::temp().filePath("nova_report_dialog"); }
bool screenshot(QWidget& w, const QString& name) {
  QDir().mkpath(screenshotDir());
  return w.grab().save(QDir(screenshotDir()).filePath(name + ".png"));
}

class ReportDialogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::scratch_dir("report_dialog");
    setenv("NOVA_SETTINGS", (dir_ / "settings.json").c_str(), 1);
    setenv("NOVA_PROJECTS", (dir_ / "projects").c_str(), 1);
    model_ = dir_ / "matmul_scaling_residual_add.py";
    fs::copy_file(test::shared_examples_dir() / "matmul_scaling_residual_add.py", model_);
  }
  void open(MainWindow& w) {
    QSignalSpy ready(&w, &MainWindow::candidatesReady);
    ASSERT_TRUE(w.openModel(QString::fromStdString(model_.string())));
    ASSERT_TRUE(ready.count() > 0 || ready.wait(60000));
  }
  void evaluateFirst(MainWindow& w) {
    QSignalSpy settled(&w, &MainWindow::evaluationSettled);
    w.validateVersion(w.project()->all_versions().front().id);
    ASSERT_TRUE(settled.count() > 0 || settled.wait(60000));
  }
  ReportDialog* openDialog(MainWindow& w) {
    auto* action = w.findChild<ReportAction*>();
    EXPECT_NE(action, nullptr);
    if (!action) return nullptr;
    action->refresh();
    EXPECT_TRUE(action->isEnabled()) << action->toolTip().toStdString();
    action->trigger();
    EXPECT_NE(action->dialog(), nullptr);
    if (action->dialog()) EXPECT_TRUE(QTest::qWaitForWindowExposed(action->dialog()));
    return action->dialog();
  }

  fs::path dir_, model_;
  // The report is rendered by a real worker (Jinja2, matplotlib, WeasyPrint in the setup venv).
  ChildProcessWorkerRunner renderer_{default_python()};
  ScriptedSessions sessions_{[this](const std::string& model, const std::string& cmd, const json& args,
                                    const WorkerCall& call) -> json {
    if (cmd == "intake") return ScriptedSessions::recordedIntake(model);
    if (cmd == "evaluate")
      return {{"validation", readJson(test::fixtures_dir() / "generator_run" / "h200_clean" /
                                      "matmul_scaling_residual_add_g0.validate.json")},
              {"benchmark", readJson(test::fixtures_dir() / "bench" / "matmul_scaling_residual_add_g0.h200.json")}};
    if (cmd == "render_report") return renderer_.run(cmd, args, call);
    throw WorkerRunError(WorkerRunError::Kind::BadRequest, "the test's worker does not know " + cmd);
  }};
};

TEST_F(ReportDialogTest, TheMenuActionIsInFileAndDisabledWithTheReasonUntilAModelIsOpen) {
  MainWindow w(Settings{}, sessions_.backend());
  auto* action = w.findChild<ReportAction*>();
  ASSERT_NE(action, nullptr);
  EXPECT_FALSE(action->isEnabled());
  EXPECT_TRUE(action->toolTip().contains("Open a model")) << action->toolTip().toStdString();
  bool inFile = false;
  for (QObject* o : action->associatedObjects())
    if (auto* menu = qobject_cast<QMenu*>(o)) inFile |= menu->title() == "&File";
  EXPECT_TRUE(inFile);
  open(w);
  action->refresh();
  EXPECT_TRUE(action->isEnabled()) << action->toolTip().toStdString();
}

TEST_F(ReportDialogTest, AProjectWithNothingValidatedIsRefusedWithTheReasonAndNothingIsWritten) {
  MainWindow w(Settings{}, sessions_.backend());
  open(w);
  ReportDialog* dialog = openDialog(w);
  ASSERT_NE(dialog, nullptr);
  const fs::path out = dir_ / "refused";
  dialog->outEdit()->setText(QString::fromStdString(out.string()));
  EXPECT_FALSE(dialog->startReport());
  EXPECT_TRUE(dialog->statusLabel()->text().contains("no validated version")) << dialog->statusLabel()->text().toStdString();
  EXPECT_FALSE(fs::exists(out));
  EXPECT_TRUE(screenshot(*dialog, "1_refused"));
}

TEST_F(ReportDialogTest, TheReportRunsAsAJobWritesEveryFormAndPreviewsTheHtml) {
  MainWindow w(Settings{}, sessions_.backend());
  open(w);
  evaluateFirst(w);
  ReportDialog* dialog = openDialog(w);
  ASSERT_NE(dialog, nullptr);
  const fs::path out = dir_ / "client" / "report";
  dialog->outEdit()->setText(QString::fromStdString(out.string()));
  EXPECT_TRUE(dialog->commandEdit()->text().startsWith("nova report ")) << dialog->commandEdit()->text().toStdString();
  EXPECT_TRUE(dialog->commandLine().contains(QString::fromStdString("--out " + out.string())));
  EXPECT_TRUE(dialog->commandLine().endsWith("--format html,pdf,json"));
  QSignalSpy ended(dialog, &ReportDialog::reportEnded);
  ASSERT_TRUE(dialog->startReport()) << dialog->statusLabel()->text().toStdString();
  EXPECT_FALSE(dialog->writeButton()->isEnabled());  // one report at a time
  ASSERT_TRUE(ended.count() > 0 || ended.wait(180000));
  ASSERT_TRUE(ended.at(0).at(0).toBool()) << ended.at(0).at(1).toString().toStdString();
  for (const char* name : {"report.html", "report.pdf", "report.json"}) EXPECT_TRUE(fs::is_regular_file(out / name)) << name;
  EXPECT_EQ(dialog->written().toStdString(), out.string());
  EXPECT_TRUE(dialog->openButton()->isEnabled());
  const QString shown = dialog->preview()->toPlainText();
  EXPECT_TRUE(shown.contains("matmul_scaling_residual_add.py")) << shown.left(300).toStdString();
  EXPECT_TRUE(shown.contains("not measured"));  // no whole-model check in this project
  const json data = readJson(out / "report.json");
  EXPECT_TRUE(shown.contains(QString::fromStdString(data["groups"][0]["speedups"]["cold_vs_eager"]["text"].get<std::string>())));
  EXPECT_TRUE(screenshot(*dialog, "2_written"));
}

}  // namespace
}  // namespace nova::ui
