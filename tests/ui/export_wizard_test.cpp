// The studio's Export wizard (ui/export) on the offscreen platform, over a project made through the
// studio from recorded H200 results (the worker is scripted: intake answers the recorded graph of
// matmul_scaling_residual_add, evaluate the recorded validation and benchmark): the shipping version
// is pre-selected, a failed or unvalidated version cannot be chosen and says why, a bad package name,
// architecture list or output folder is refused inline, the summary shows what ships and the
// equivalent command line, and the export runs as a job of the session that writes the package (a
// non-empty output folder is refused, leaving it as it was). File > "Export package…" is disabled with
// the reason while nothing ships. Screenshots of each page go to /tmp/nova_export_wizard/.
#include <atomic>
#include <fstream>

#include <QAbstractButton>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QMenu>
#include <QMenuBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QStandardItemModel>
#include <QTest>
#include <QTextBrowser>

#include <gtest/gtest.h>

#include "core/jobs/worker_run_error.h"
#include "core/session/project_session.h"
#include "scripted_sessions.h"
#include "support/test_paths.h"
#include "ui/export/export_action.h"
#include "ui/export/export_options_page.h"
#include "ui/export/export_run_page.h"
#include "ui/export/export_summary_page.h"
#include "ui/export/export_versions_page.h"
#include "ui/export/export_wizard.h"
#include "ui/jobs/job_list_model.h"
#include "ui/jobs/jobs_panel.h"
#include "ui/shell/main_window.h"
#include "ui/shell/studio_session.h"

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

// Recorded on the H200 (device run S): the group's primary passed and ships (faster than eager).
json recordedValidation(bool passed) {
  json j = readJson(test::fixtures_dir() / "generator_run" / "h200_clean" / "matmul_scaling_residual_add_g0.validate.json");
  if (!passed) {
    j["passed"] = false;
    j["verdict"] = "failed: max abs error 3.1e-02 over atol 1e-04";
  }
  return j;
}
json recordedBenchmark() { return readJson(test::fixtures_dir() / "bench" / "matmul_scaling_residual_add_g0.h200.json"); }

QString screenshotDir() { return QDir::temp().filePath("nova_export_wizard"); }
bool screenshot(QWidget& w, const QString& name) {
  QDir().mkpath(screenshotDir());
  return w.grab().save(QDir(screenshotDir()).filePath(name + ".png"));
}

// The entry of `version` in a combo, -1 when absent.
int entry(QComboBox* combo, qint64 version) { return combo->findData(QVariant::fromValue<qlonglong>(version)); }

class ExportWizardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::scratch_dir("export_wizard");
    setenv("NOVA_SETTINGS", (dir_ / "settings.json").c_str(), 1);
    setenv("NOVA_PROJECTS", (dir_ / "projects").c_str(), 1);
    model_ = dir_ / "matmul_scaling_residual_add.py";
    fs::copy_file(test::shared_examples_dir() / "matmul_scaling_residual_add.py", model_);
    sessions_.python = Settings{}.resolved_python();  // the export checks the model file with it (torch)
  }

  // Opens the model in the studio and waits for its graph and the builtin generator's versions.
  void open(MainWindow& w) {
    QSignalSpy ready(&w, &MainWindow::candidatesReady);
    ASSERT_TRUE(w.openModel(QString::fromStdString(model_.string())));
    ASSERT_TRUE(ready.count() > 0 || ready.wait(60000));
    ASSERT_NE(w.graph(), nullptr);
    ASSERT_EQ(w.graph()->groups.size(), 1u);
  }
  // Validates and benchmarks `version` through the studio (the scripted worker answers); `passes`:
  // whether the recorded validation passes.
  void evaluate(MainWindow& w, qint64 version, bool passes) {
    fail_ = !passes;
    QSignalSpy settled(&w, &MainWindow::evaluationSettled);
    w.validateVersion(version);
    ASSERT_TRUE(settled.count() > 0 || settled.wait(60000));
  }
  // The project with the group's primary shipping, a failed user edit and an unvalidated one.
  void buildProject(MainWindow& w) {
    open(w);
    const auto versions = w.project()->all_versions();
    ASSERT_FALSE(versions.empty());
    shipping_ = versions.front().id;
    evaluate(w, shipping_, true);
    failed_ = w.project()->add_user_edit(shipping_, w.project()->version(shipping_).source + "\n// edited\n");
    evaluate(w, failed_, false);
    unvalidated_ = w.project()->add_user_edit(shipping_, w.project()->version(shipping_).source + "\n// again\n");
  }
  ExportWizard* openWizard(MainWindow& w) {
    auto* action = w.findChild<ExportAction*>();
    EXPECT_NE(action, nullptr);
    if (!action) return nullptr;
    action->refresh();
    EXPECT_TRUE(action->isEnabled()) << action->toolTip().toStdString();
    action->trigger();
    EXPECT_NE(action->wizard(), nullptr);
    if (action->wizard()) EXPECT_TRUE(QTest::qWaitForWindowExposed(action->wizard()));
    return action->wizard();
  }

  fs::path dir_, model_;
  qint64 shipping_ = 0, failed_ = 0, unvalidated_ = 0;
  std::atomic<bool> fail_{false};
  ScriptedSessions sessions_{[this](const std::string& model, const std::string& cmd, const json&,
                                    const WorkerCall&) -> json {
    if (cmd == "intake") return ScriptedSessions::recordedIntake(model);
    if (cmd == "evaluate") return {{"validation", recordedValidation(!fail_)}, {"benchmark", recordedBenchmark()}};
    throw WorkerRunError(WorkerRunError::Kind::BadRequest, "the test's worker does not know " + cmd);
  }};
};

TEST_F(ExportWizardTest, TheMenuActionIsDisabledWithTheReasonWhileNothingShips) {
  MainWindow w(Settings{}, sessions_.backend());
  auto* action = w.findChild<ExportAction*>();
  ASSERT_NE(action, nullptr);
  EXPECT_FALSE(action->isEnabled());
  EXPECT_TRUE(action->toolTip().contains("Open a model")) << action->toolTip().toStdString();
  // In the File menu.
  bool inFile = false;
  for (QObject* o : action->associatedObjects())
    if (auto* menu = qobject_cast<QMenu*>(o)) inFile |= menu->title() == "&File";
  EXPECT_TRUE(inFile);
  open(w);
  action->refresh();
  EXPECT_FALSE(action->isEnabled());
  EXPECT_TRUE(action->toolTip().contains("No fusion group has a version that ships")) << action->toolTip().toStdString();
  // Once a version passed validation and beats eager, the action is there.
  evaluate(w, w.project()->all_versions().front().id, true);
  EXPECT_TRUE(action->isEnabled()) << action->toolTip().toStdString();
}

TEST_F(ExportWizardTest, ThePageOfVersionsPreselectsTheShippingOneAndRefusesAFailedOneWithItsReason) {
  MainWindow w(Settings{}, sessions_.backend());
  buildProject(w);
  ExportWizard* wizard = openWizard(w);
  ASSERT_NE(wizard, nullptr);
  EXPECT_TRUE(wizard->problem().isEmpty()) << wizard->problem().toStdString();
  QComboBox* combo = wizard->versionsPage()->combo(0);
  ASSERT_NE(combo, nullptr);
  EXPECT_EQ(combo->currentData().toLongLong(), shipping_);
  EXPECT_TRUE(wizard->versionsPage()->reasonLabel(0)->text().startsWith("Ships:"));
  auto* model = qobject_cast<QStandardItemModel*>(combo->model());
  const int failed = entry(combo, failed_), unvalidated = entry(combo, unvalidated_);
  ASSERT_GE(failed, 0);
  ASSERT_GE(unvalidated, 0);
  // Disabled entries whose tooltip says why.
  EXPECT_FALSE(model->item(failed)->isEnabled());
  EXPECT_TRUE(model->item(failed)->toolTip().contains("failed validation")) << model->item(failed)->toolTip().toStdString();
  EXPECT_FALSE(model->item(unvalidated)->isEnabled());
  EXPECT_TRUE(model->item(unvalidated)->toolTip().contains("never validated"));
  EXPECT_TRUE(model->item(entry(combo, shipping_))->isEnabled());
  // Chosen anyway (by program): refused, the shipping version stays, the reason is shown.
  combo->setCurrentIndex(failed);
  EXPECT_EQ(combo->currentData().toLongLong(), shipping_);
  EXPECT_EQ(wizard->choices().groups()[0].selected, shipping_);
  const QString reason = wizard->versionsPage()->reasonLabel(0)->text();
  EXPECT_TRUE(reason.contains(QString("v%1 cannot be exported").arg(failed_))) << reason.toStdString();
  EXPECT_TRUE(reason.contains("failed validation")) << reason.toStdString();
  EXPECT_TRUE(wizard->button(QWizard::NextButton)->isEnabled());
  EXPECT_TRUE(screenshot(*wizard, "1_versions"));
  wizard->close();
}

TEST_F(ExportWizardTest, ABadPackageNameArchitectureListOrOutputFolderIsRefusedInline) {
  MainWindow w(Settings{}, sessions_.backend());
  buildProject(w);
  ExportWizard* wizard = openWizard(w);
  ASSERT_NE(wizard, nullptr);
  wizard->next();
  ExportOptionsPage* page = wizard->optionsPage();
  ASSERT_EQ(wizard->currentPage(), page);
  EXPECT_EQ(page->packageName(), "nova_matmul_scaling_residual_add");
  EXPECT_EQ(page->archList(), "8.0;9.0+PTX");
  EXPECT_FALSE(page->isComplete());  // no output folder yet
  page->outEdit()->setText(QString::fromStdString((dir_ / "out" / "pkg").string()));
  EXPECT_TRUE(page->isComplete()) << page->outError()->text().toStdString();
  EXPECT_TRUE(wizard->button(QWizard::NextButton)->isEnabled());
  EXPECT_TRUE(screenshot(*wizard, "2_package"));

  page->nameEdit()->setText("9lives");
  EXPECT_FALSE(page->nameError()->isHidden());
  EXPECT_TRUE(page->nameError()->text().contains("not a Python identifier")) << page->nameError()->text().toStdString();
  EXPECT_FALSE(page->isComplete());
  EXPECT_FALSE(wizard->button(QWizard::NextButton)->isEnabled());
  page->nameEdit()->setText("import");
  EXPECT_TRUE(page->nameError()->text().contains("keyword"));
  page->nameEdit()->setText("client_kernels");
  EXPECT_TRUE(page->nameError()->isHidden());
  EXPECT_TRUE(page->isComplete());

  page->archEdit()->setText("sm_90");
  EXPECT_FALSE(page->archError()->isHidden());
  EXPECT_TRUE(page->archError()->text().contains("TORCH_CUDA_ARCH_LIST")) << page->archError()->text().toStdString();
  EXPECT_FALSE(page->isComplete());
  EXPECT_TRUE(screenshot(*wizard, "2_package_errors"));
  page->archEdit()->setText("9.0");
  EXPECT_TRUE(page->archError()->isHidden());

  // A folder that holds files is refused; a relative path too.
  fs::create_directories(dir_ / "taken");
  std::ofstream(dir_ / "taken" / "mine.txt") << "the user's";
  page->outEdit()->setText(QString::fromStdString((dir_ / "taken").string()));
  EXPECT_TRUE(page->outError()->text().contains("is not empty")) << page->outError()->text().toStdString();
  EXPECT_FALSE(page->isComplete());
  page->outEdit()->setText("relative/pkg");
  EXPECT_TRUE(page->outError()->text().contains("full path"));
  EXPECT_FALSE(page->isComplete());
  // The nvcc check: on when nvcc is there, else disabled with the reason.
  if (!wizard->nvccProblem().isEmpty()) {
    EXPECT_FALSE(page->checkBox()->isEnabled());
    EXPECT_TRUE(page->checkBox()->toolTip().contains("nvcc"));
  } else {
    EXPECT_TRUE(page->checkBox()->isEnabled());
  }
  wizard->close();
}

TEST_F(ExportWizardTest, TheSummaryShowsWhatShipsAndTheEquivalentCommandAndTheExportRunsAsAJob) {
  MainWindow w(Settings{}, sessions_.backend());
  w.show();
  buildProject(w);
  ExportWizard* wizard = openWizard(w);
  ASSERT_NE(wizard, nullptr);
  wizard->next();
  const fs::path out = dir_ / "deliveries" / "pkg";  // the folders above are made
  wizard->optionsPage()->outEdit()->setText(QString::fromStdString(out.string()));
  wizard->optionsPage()->nameEdit()->setText("client_kernels");
  wizard->optionsPage()->archEdit()->setText("9.0");
  wizard->next();
  ExportSummaryPage* summary = wizard->summaryPage();
  ASSERT_EQ(wizard->currentPage(), summary);
  EXPECT_TRUE(summary->isComplete());
  const QString text = summary->summary()->toPlainText();
  EXPECT_TRUE(text.contains("Ships kernels (1 of 1 fusion groups)")) << text.toStdString();
  EXPECT_TRUE(text.contains(QString("v%1").arg(shipping_))) << text.toStdString();
  EXPECT_TRUE(text.contains("Amdahl's estimate")) << text.toStdString();
  EXPECT_TRUE(text.contains("client_kernels"));
  // The studio's project is the model's default one: no --project.
  EXPECT_EQ(summary->commandLine()->toPlainText().toStdString(),
            "nova export " + model_.string() + " --out " + out.string() + " --name client_kernels --arch 9.0");
  EXPECT_TRUE(wizard->button(QWizard::CommitButton)->isEnabled());
  EXPECT_EQ(wizard->button(QWizard::CommitButton)->text(), "&Export");
  EXPECT_TRUE(screenshot(*wizard, "3_summary"));

  // Export: a job of the session's queue, in the Jobs panel; the package is written.
  QSignalSpy ended(wizard, &ExportWizard::exportEnded);
  wizard->next();
  ASSERT_EQ(wizard->currentPage(), wizard->runPage());
  ASSERT_TRUE(ended.count() > 0 || ended.wait(60000));
  ASSERT_TRUE(ended.first().at(0).toBool()) << ended.first().at(1).toString().toStdString();
  EXPECT_TRUE(wizard->runPage()->succeeded());
  EXPECT_TRUE(fs::is_regular_file(out / "setup.py"));
  EXPECT_TRUE(fs::is_regular_file(out / "csrc" / "group_0.cu"));
  EXPECT_TRUE(fs::is_regular_file(out / "client_kernels" / "package.json"));
  std::ifstream setup(out / "setup.py");
  const std::string setupText((std::istreambuf_iterator<char>(setup)), std::istreambuf_iterator<char>());
  EXPECT_NE(setupText.find("\"TORCH_CUDA_ARCH_LIST\", \"9.0\""), std::string::npos);
  std::ifstream readme(out / "README.md");
  const std::string readmeText((std::istreambuf_iterator<char>(readme)), std::istreambuf_iterator<char>());
  EXPECT_NE(readmeText.find(summary->commandLine()->toPlainText().toStdString()), std::string::npos);
  // Nothing but the package beside it (no temporary folder).
  EXPECT_EQ(std::distance(fs::directory_iterator(out.parent_path()), fs::directory_iterator()), 1);
  EXPECT_TRUE(wizard->runPage()->result()->text().contains(QString::fromStdString(out.string())));
  EXPECT_EQ(wizard->runPage()->installCommand()->toPlainText().toStdString(),
            "pip install --no-build-isolation " + out.string());
  EXPECT_TRUE(wizard->button(QWizard::FinishButton)->isEnabled());
  ASSERT_EQ(w.project()->exports().size(), 1u);
  EXPECT_EQ(w.project()->exports()[0].version_id, shipping_);
  QTest::qWait(100);
  bool listed = false;
  JobListModel* jobs = w.jobsPanel()->model();
  for (int row = 0; row < jobs->rowCount(); ++row)
    listed |= jobs->job(row)->title == "export package client_kernels" && jobs->job(row)->state == JobState::Succeeded;
  EXPECT_TRUE(listed);
  EXPECT_TRUE(screenshot(*wizard, "4_done"));
  wizard->close();
}

TEST_F(ExportWizardTest, AnOutputFolderFilledBeforeTheExportIsRefusedAndLeftAsItWas) {
  MainWindow w(Settings{}, sessions_.backend());
  buildProject(w);
  ExportWizard* wizard = openWizard(w);
  ASSERT_NE(wizard, nullptr);
  wizard->next();
  const fs::path out = dir_ / "out";
  fs::create_directories(out);  // empty: accepted
  wizard->optionsPage()->outEdit()->setText(QString::fromStdString(out.string()));
  ASSERT_TRUE(wizard->optionsPage()->isComplete());
  wizard->next();
  // Someone writes into it before Export is pressed: the export job refuses it.
  std::ofstream(out / "mine.txt") << "the user's";
  QSignalSpy ended(wizard, &ExportWizard::exportEnded);
  wizard->next();
  ASSERT_TRUE(ended.count() > 0 || ended.wait(60000));
  EXPECT_FALSE(ended.first().at(0).toBool());
  const QString why = wizard->runPage()->result()->text();
  EXPECT_TRUE(why.contains("Nothing was exported")) << why.toStdString();
  EXPECT_TRUE(why.contains("is not empty")) << why.toStdString();
  EXPECT_TRUE(wizard->runPage()->installCommand()->isHidden());
  EXPECT_EQ(std::distance(fs::directory_iterator(out), fs::directory_iterator()), 1);
  EXPECT_TRUE(w.project()->exports().empty());
  EXPECT_TRUE(screenshot(*wizard, "4_failed"));
  wizard->close();
}

// A model whose Model cannot be rebuilt from get_init_inputs() (the package's ModelNew takes the same
// arguments): the export job says so with the model's own error, and nothing is written.
TEST_F(ExportWizardTest, AModelThatCannotBeRebuiltFromGetInitInputsIsRefusedAndNothingIsWritten) {
  std::ofstream(model_, std::ios::app) << "\n\ndef get_init_inputs():\n    return [1, 2, 3, 4, 5]\n";
  MainWindow w(Settings{}, sessions_.backend());
  buildProject(w);
  ExportWizard* wizard = openWizard(w);
  ASSERT_NE(wizard, nullptr);
  wizard->next();
  const fs::path out = dir_ / "rebuild" / "pkg";
  wizard->optionsPage()->outEdit()->setText(QString::fromStdString(out.string()));
  wizard->next();
  QSignalSpy ended(wizard, &ExportWizard::exportEnded);
  wizard->next();
  ASSERT_TRUE(ended.count() > 0 || ended.wait(120000));
  EXPECT_FALSE(ended.first().at(0).toBool());
  const QString why = wizard->runPage()->result()->text();
  EXPECT_TRUE(why.contains("Nothing was exported")) << why.toStdString();
  EXPECT_TRUE(why.contains("Model cannot be rebuilt from get_init_inputs()")) << why.toStdString();
  EXPECT_TRUE(why.contains("TypeError")) << why.toStdString();
  EXPECT_FALSE(fs::exists(out));
  EXPECT_TRUE(w.project()->exports().empty());
  EXPECT_TRUE(screenshot(*wizard, "4_not_rebuilt"));
  wizard->close();
}

}  // namespace
}  // namespace nova::ui
